"""Fixtures of the graph explorer tests: `base_ws`, a real workspace of the BERT and RoBERTa papers (builtin
parser, spaCy extractor, SQLite, Chroma, the embedding model) with its LLM-free graph and communities, built
once for the package because it is expensive; `ws_copy`, a copy of it for a test that changes it."""
from __future__ import annotations

import shutil

import pytest

from core.library import open_library
from tests.graph_papers import fast_workspace, make_bert_pdf, make_roberta_pdf
from tests.presentation.explorer_helpers import ingest


@pytest.fixture(scope="package")
def base_ws(tmp_path_factory):
    """BERT and RoBERTa papers, LLM-free graph with communities. Tests that change it work on a copy."""
    folder = tmp_path_factory.mktemp("explorer-pdfs")
    root = tmp_path_factory.mktemp("explorer-ws") / "ws"
    lib = open_library(fast_workspace(root))
    bert, roberta = ingest(lib, make_bert_pdf(folder), make_roberta_pdf(folder))
    return root, bert, roberta


@pytest.fixture
def ws_copy(base_ws, tmp_path):
    root, bert, roberta = base_ws
    copy = tmp_path / "ws"
    shutil.copytree(root, copy)
    return copy, bert, roberta
