"""End to end over the shared corpus of real papers and trap PDFs; skipped when ../shared/corpus is absent."""
import json
import re
from pathlib import Path

import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf
from core.pipeline.ingest import process_queue
from core.query.search import search
from core.schema.records import DocStatus
from core.settings.workspace import Workspace
from tests.paths import CORPUS

pytestmark = [pytest.mark.corpus, pytest.mark.slow,
              pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS}")]


def _ingest(folder: Path, root: Path):
    lib = open_library(Workspace(root))
    names = {}
    for pdf in sorted(folder.glob("*.pdf")):
        names[add_pdf(lib, pdf.name, pdf.read_bytes()).doc_id] = pdf.name
    docs = {names[d.id]: d for d in process_queue(lib)}
    return lib, docs


@pytest.fixture(scope="module")
def layouts(tmp_path_factory):
    return _ingest(CORPUS / "layouts", tmp_path_factory.mktemp("layouts"))


@pytest.fixture(scope="module")
def papers(tmp_path_factory):
    return _ingest(CORPUS / "papers", tmp_path_factory.mktemp("papers"))


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def test_every_trap_pdf_ends_ready_with_content_or_with_a_specific_message(layouts):
    lib, docs = layouts
    assert len(docs) == len(list((CORPUS / "layouts").glob("*.pdf")))
    for name, doc in docs.items():
        if doc.status == DocStatus.READY:
            assert doc.chunk_count > 0, f"{name} is ready but nothing in it is searchable: {doc.message}"
        else:
            assert doc.status == DocStatus.FAILED and len(doc.message) > 20, (name, doc.message)
            assert "internal error" not in doc.message, (name, doc.message)


def test_scanned_pages_are_ocrd_into_searchable_text(layouts):
    lib, docs = layouts
    # docling's scan is one English sentence of 15 words; mineru's is eight pages of Chinese prose.
    for name, min_chars, expected in (("docling_ocr_test_scanned.pdf", 80, "markdown"),
                                      ("mineru_small_ocr.pdf", 3000, "商品")):
        doc = docs[name]
        assert doc.status == DocStatus.READY and "ocr" in doc.backend, (name, doc.backend, doc.message)
        text = " ".join(c.text for c in lib.chunks.by_doc(doc.id))
        assert len(text) >= min_chars and expected in text.lower(), (name, len(text), text[:300])


def test_a_gibberish_text_layer_is_not_indexed_as_words(layouts):
    lib, docs = layouts
    doc = docs["olmocr_dolma-page-1.pdf"]
    if doc.status == DocStatus.FAILED:
        assert "text layer" in doc.message.lower() or "ocr" in doc.message.lower(), doc.message
        return
    text = " ".join(c.text for c in lib.chunks.by_doc(doc.id))
    words = re.findall(r"[A-Za-z]{3,}", text)
    common = {"the", "and", "for", "with", "that", "this", "from", "data", "are", "was"}
    assert sum(w.lower() in common for w in words) >= 10, text[:500]


def test_every_paper_is_ready_with_its_title(papers):
    lib, docs = papers
    manifest = {m["file"]: m for m in json.loads((CORPUS / "papers" / "manifest.json").read_text())}
    assert all(d.status == DocStatus.READY for d in docs.values()), {n: d.message for n, d in docs.items()}
    matched = 0
    for name, doc in docs.items():
        expected = _words(manifest[name]["title"])
        matched += len(expected & _words(doc.title)) >= 0.6 * len(expected)
        assert doc.pages == manifest[name]["pages"], name
    assert matched >= 0.7 * len(docs), {n: d.title for n, d in docs.items()}


def test_searching_a_papers_title_finds_that_paper(papers):
    lib, docs = papers
    manifest = {m["file"]: m for m in json.loads((CORPUS / "papers" / "manifest.json").read_text())}
    found = 0
    for name, doc in docs.items():
        hits = search(lib, manifest[name]["title"], top_k=5)
        found += any(h.chunk.doc_id == doc.id for h in hits)
    assert found >= 0.8 * len(docs)
