"""Fixtures of the LLM client tests: `server`, a real local HTTP server speaking the OpenAI protocol
(tests/openai_server.py), and `db`, the SQLite database that holds the prompt cache and the call log."""
from __future__ import annotations

import pytest

from core.store.sqlite_db import Database
from tests.models.llm_helpers import MODEL
from tests.openai_server import OpenAIReplayServer


@pytest.fixture
def server():
    with OpenAIReplayServer(model=MODEL) as s:
        yield s


@pytest.fixture
def db(tmp_path):
    return Database(tmp_path / "ws" / "papergraph.sqlite")
