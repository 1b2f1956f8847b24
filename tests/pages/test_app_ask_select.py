"""The Ask page with the select reader, through AppTest against the OpenAI-protocol replay server: the model's
choice is drawn as the paper's sentence, cited, with the copied words bold, and the caption names the reader and
its confidence; a question the papers do not answer states nothing."""
from __future__ import annotations

import json
import re

import pytest

from core.library import open_library
from core.settings.workspace import Workspace
from tests.openai_server import OpenAIReplayServer, Reply, last_user_message
from tests.pages.app_helpers import ask, run_app, texts
from tests.pages.test_app_ask_llm import _bert_workspace


def _chooser(body) -> Reply:
    if body.get("response_format", {}).get("json_schema", {}).get("name") != "select":
        return Reply(content="ok")
    text = last_user_message(body)
    found = [n for n, s in re.findall(r"^(\d+)\. (.*)$", text, re.M) if "BooksCorpus" in s]
    if "France" in text.split("\n", 1)[0] or not found:
        return Reply(content=json.dumps({"answer": "Paris", "sentence": "1"}))  # its own knowledge: refused
    return Reply(content=json.dumps({"answer": "BooksCorpus", "sentence": found[0]}))


@pytest.mark.slow
def test_the_select_reader_draws_the_chosen_sentence_and_names_itself(monkeypatch, tmp_path):
    with OpenAIReplayServer(default=_chooser, model="replay-reader") as server:
        ws = _bert_workspace(tmp_path, server)
        lib = open_library(Workspace(ws.root))
        settings = lib.settings
        settings.query.reader = "select"
        ws.save_settings(settings)

        at = ask(run_app(monkeypatch, ws.root, "pages/ask.py"), "Which dataset is BERT pre-trained on?", mode="naive")
        shown = [m.value for m in at.markdown if "BooksCorpus" in m.value]
        assert shown and "**BooksCorpus**" in shown[0] and "\\[" in shown[0]  # bold short answer, a citation
        captions = texts(at.caption).replace("\\", "")  # the model's name is escaped for Markdown
        assert "Read by openai:replay-reader" in captions and "quoted verbatim" in captions
        assert "confidence" in captions

        at = ask(at, "What is the capital of France?", mode="naive")
        assert not any("Paris" in m.value for m in at.markdown)
        assert "nothing is stated" in texts(at.caption)
