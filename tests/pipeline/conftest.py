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
