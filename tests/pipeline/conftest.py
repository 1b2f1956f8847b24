"""Fixtures of the pipeline tests."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.graph_papers import make_bert_pdf, make_roberta_pdf


@pytest.fixture(scope="module")
def pdf_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("graph-pdfs")
    make_bert_pdf(folder)
    make_roberta_pdf(folder)
    return folder


@pytest.fixture(scope="session")
def specter(tmp_path_factory):
    """SPECTER's PDF parsed once for the session's corpus tests of its tables (results, the table repair)."""
    from core.pipeline.parsing import parse_pdf
    from core.settings.config import ParsingConfig
    from tests.paths import CORPUS

    pdf = CORPUS / "papers" / "2020.acl-main.207.pdf"
    if not pdf.exists():
        pytest.skip(f"{pdf} is absent")
    tmp = tmp_path_factory.mktemp("specter")
    return parse_pdf(pdf, tmp / "out", ParsingConfig(ocr=False), mineru_home=tmp / "mineru").items
