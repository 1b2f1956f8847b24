"""Passages whose parse carries raw HTML and Markdown (MinerU's flash tier writes run-in headings as **bold**,
footnote marks as <sup>, escapes as \\_, links as [text](url)) read as plain text on the Search page, in the Ask
page's sources and in the passage dialog: no "**", no "<sup>", and never a tag that reaches the browser."""
from __future__ import annotations

import json

import pytest

from core.library import open_library
from core.pipeline.documents import add_mineru_output
from core.pipeline.ingest import process_queue
from core.schema.records import DocStatus
from core.settings.workspace import Workspace
from tests.pages.app_helpers import _unescaped_markup, ask, run_app, texts
from tests.pages.test_app_query import _dialogs

BODY = ("**Ocelot Reflex** The ocelot reflex<sup>1</sup> of the <mark>zebra</mark> lattice grows with v<sub>2</sub> "
        "and the \\_damping\\_ term; see [our code](https://example.org/ocelot) &amp; notes.")
# The chunker drops <sup>, <sub> and ** already (core/content/items.py); the page strips what is left.
READ = ("Ocelot Reflex The ocelot reflex1 of the zebra lattice grows with v2 and the _damping_ term; see our code & "
        "notes.")
RAW = ("**", "<sup>", "mark>", "\\\\_", "](https")


@pytest.fixture(scope="module")
def markup_workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("markup")
    out = root / "ocelot" / "auto"
    out.mkdir(parents=True)
    items = [{"type": "text", "text_level": 1, "text": "Ocelot lattices", "page_idx": 0, "bbox": [100, 50, 900, 90]},
             {"type": "text", "text": BODY, "page_idx": 0, "bbox": [100, 100, 900, 300]}]
    (out / "ocelot_content_list.json").write_text(json.dumps(items))
    lib = open_library(Workspace(root / "ws"))
    add_mineru_output(lib, out.parent)
    (doc,) = process_queue(lib)
    assert doc.status == DocStatus.READY, doc.message
    return root / "ws"


def _plain(shown: str) -> str:
    return shown.replace("\\", "")


def test_search_results_show_passages_without_markup(monkeypatch, markup_workspace):
    at = run_app(monkeypatch, markup_workspace, "pages/search.py")
    at.text_input(key="search_query").input("ocelot reflex of the zebra lattice")
    at.button[0].click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = texts(at.markdown)
    passage = next(m.value for m in at.markdown if "zebra" in m.value)
    assert READ in _plain(passage) and not any(raw in passage for raw in RAW), passage
    assert not _unescaped_markup(shown)


def test_ask_sources_and_the_passage_dialog_show_passages_without_markup(monkeypatch, markup_workspace):
    at = ask(run_app(monkeypatch, markup_workspace, "pages/ask.py"), "What grows the ocelot reflex?", mode="naive",
             context_only=False)
    result = at.session_state["ask_result"]
    source = next(s for s in result.context.sources if "ocelot reflex" in s.text.lower())
    at.session_state[f"ask{at.session_state['ask_run']}_src_{source.n}"] = True  # open the source
    at.run()
    body = next(m.value for m in at.markdown if "Ocelot Reflex" in m.value and "zebra" in m.value)
    assert READ in _plain(body) and not any(raw in body for raw in RAW), body
    at.button(key=f"ask_source_page_{source.n}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    (dialog,) = _dialogs(at._tree)
    passage = next(m.value for m in dialog.markdown if "zebra" in m.value)
    assert READ in _plain(passage) and not any(raw in passage for raw in RAW), passage
    assert not _unescaped_markup(texts(at.markdown))
