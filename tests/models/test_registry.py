"""The process's resource registry: one build per key however many threads ask, different keys in parallel, a
failed build never kept, and the Library handing out the one process-wide instance."""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from core.library import open_library
from core.models.registry import Registry, resources
from core.settings.workspace import Workspace


def test_threads_asking_at_once_build_a_resource_once():
    registry, builds = Registry(), []

    def build():
        builds.append(threading.get_ident())
        time.sleep(0.2)  # long enough for every thread to be waiting on it
        return object()

    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda _: registry.get("model", build), range(4)))
    assert len(builds) == 1 and all(g is got[0] for g in got)
    assert "model" in registry and registry.peek("model") is got[0] and registry.peek("other") is None


def test_different_resources_load_in_parallel():
    registry, both_started = Registry(), threading.Barrier(2, timeout=5)

    def build(name):
        both_started.wait()  # raises BrokenBarrierError if the second build waited for the first
        return name

    with ThreadPoolExecutor(max_workers=2) as pool:
        assert sorted(pool.map(lambda k: registry.get(k, lambda: build(k)), ["a", "b"])) == ["a", "b"]


def test_a_failed_build_is_retried_and_clear_forgets():
    registry, calls = Registry(), []

    def flaky():
        calls.append(1)
        if len(calls) == 1:
            raise OSError("not there yet")
        return len(calls)

    with pytest.raises(OSError):
        registry.get("engine", flaky)
    assert "engine" not in registry
    assert registry.get("engine", flaky) == 2 and registry.get("engine", flaky) == 2
    registry.get("other", lambda: "x")
    registry.clear("engine")
    assert "engine" not in registry and "other" in registry
    registry.clear()
    assert "other" not in registry


def test_every_library_hands_out_the_process_registry(tmp_path):
    first, second = open_library(Workspace(tmp_path / "a")), open_library(Workspace(tmp_path / "b"))
    assert first.resources is second.resources is resources
    assert first.chat_model() is None  # the default settings: no LLM, nothing built


def test_a_workspace_shares_one_chat_model_until_its_llm_settings_change(tmp_path):
    libs = [open_library(Workspace(tmp_path / "ws")) for _ in range(2)]
    for lib in libs:
        lib.settings.llm.provider, lib.settings.llm.base_url, lib.settings.llm.model = \
            "openai", "http://127.0.0.1:9/v1", "replay"  # never called: building a client connects nowhere
    model = libs[0].chat_model()
    assert model is not None and libs[1].chat_model() is model
    libs[1].settings.llm.model = "another"
    assert libs[1].chat_model() is not model and libs[0].chat_model() is model
