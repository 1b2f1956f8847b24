"""The stress PDF (../shared/corpus/stress: one 14-page article whose page 6 grew MinerU to 19.5 GB until the
kernel's OOM killer ended it) ingests without taking the machine down.

Under a small cap and a short deadline, with every page given to MinerU, it ends `ready` through the PyMuPDF
fallback, says why, and its child never holds more than the cap. With the default settings its two dense pages
never reach MinerU. The issue asks for the document ready within 3 minutes on a 24 GB, 2-core machine: that is the
time budget asserted here (a corpus acceptance test, not a unit test)."""
import json
import time

import pytest

from core.library import open_library
from core.pipeline.documents import add_pdf
from core.pipeline.ingest import process_queue
from core.schema.records import DocStatus
from core.settings.config import Settings
from core.settings.workspace import Workspace
from tests.paths import CORPUS

STRESS = CORPUS / "stress" / "bmcbiology_s12915-024-01908-y.pdf"
READY_WITHIN_S = 180
pytestmark = [pytest.mark.corpus, pytest.mark.slow,
              pytest.mark.skipif(not STRESS.is_file(), reason=f"{STRESS} is absent")]


def _ingest(tmp_path, **parsing):
    ws = Workspace(tmp_path / "ws").ensure()
    settings = Settings()
    settings.compute.workers = 1  # the whole budget is this document's child's cap (2 workers would halve it)
    for name, value in parsing.items():
        setattr(settings.parsing, name, value)
    ws.save_settings(settings)
    lib = open_library(ws)
    add_pdf(lib, STRESS.name, STRESS.read_bytes())
    start = time.monotonic()
    (doc,) = process_queue(lib)
    wall = time.monotonic() - start
    info = json.loads((ws.parsed_dir(doc.id) / "parse.json").read_text())
    return lib.documents.get(doc.id), info, wall


def test_the_stress_pdf_under_a_small_cap_ends_ready_through_the_fallback_and_says_why(tmp_path):
    doc, info, wall = _ingest(tmp_path, memory_gb=1.5, timeout_s=150, dense_page_paths=0)
    reason = "MinerU stopped at 1.5 GB on page 6 of 14; parsed with PyMuPDF, tables and formulas are approximate"
    assert doc.status == DocStatus.READY and doc.backend == "builtin" and doc.pages == 14
    assert reason in doc.warnings and reason in doc.message
    assert info["memory_cap_mb"] == 1536 and 0 < info["child_peak_rss_mb"] <= 1536
    assert wall < READY_WITHIN_S


def test_the_stress_pdf_with_default_settings_keeps_its_dense_pages_from_mineru(tmp_path):
    doc, info, wall = _ingest(tmp_path)
    assert doc.status == DocStatus.READY and doc.backend == "mineru-flash+builtin"
    assert doc.warnings[0].startswith("pages 6 and 7 draw 92,680, 27,307 vector marks")
    assert info["child_peak_rss_mb"] < 1024
    assert wall < READY_WITHIN_S
