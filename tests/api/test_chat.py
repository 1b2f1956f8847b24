"""The OpenAI-compatible face with the `openai` client itself: the modes listed as models, a cited answer streamed
and not, the citations as a structured field, and errors an OpenAI client can read."""
from __future__ import annotations

import openai
import pytest

from core.api.config import ApiConfig
from core.settings.accounts import add_account
from core.settings.tokens import create_token
from tests.api.helpers import ANSWER_WORD, QUESTION, LiveServer, build_workspace


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    lib, ids = build_workspace(tmp_path_factory.mktemp("chat"))
    with LiveServer(lib) as server:
        yield lib, ids, openai.OpenAI(base_url=f"{server.url}/v1", api_key="none", max_retries=0, timeout=60)


def test_the_modes_are_listed_as_models(served):
    _, _, client = served
    models = {m.id for m in client.models.list()}
    assert {"papergraph-naive", "papergraph-mix", "papergraph-ppr", "papergraph-local"} <= models


def test_a_completion_answers_with_sources_in_the_text_and_a_citations_field(served):
    _, ids, client = served
    done = client.chat.completions.create(model="papergraph-mix", messages=[
        {"role": "system", "content": "You are helpful."}, {"role": "user", "content": QUESTION}])
    text = done.choices[0].message.content
    assert ANSWER_WORD in text and "\n\nSources:\n[" in text and done.choices[0].finish_reason == "stop"
    citations = done.model_extra["citations"]
    assert citations and {c["paper_id"] for c in citations} <= set(ids)
    for c in citations:
        assert f"[{c['n']}]" in text.split("Sources:")[0] and f"[{c['n']}] {c['paper']}, page {c['page']}" in text


def test_a_streamed_completion_says_the_same_and_ends_with_the_citations(served):
    _, _, client = served
    messages = [{"role": "user", "content": QUESTION}]
    whole = client.chat.completions.create(model="papergraph-naive", messages=messages)
    pieces, chunks = [], list(client.chat.completions.create(model="papergraph-naive", messages=messages,
                                                             stream=True))
    for chunk in chunks:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
    assert len(pieces) >= 2 and "".join(pieces) == whole.choices[0].message.content
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert chunks[-1].model_extra["citations"] == whole.model_extra["citations"]


def test_a_list_of_content_parts_is_read_as_its_text(served):
    _, _, client = served
    done = client.chat.completions.create(model="papergraph-naive", messages=[
        {"role": "user", "content": [{"type": "text", "text": QUESTION}]}])
    assert ANSWER_WORD in done.choices[0].message.content


def test_an_unknown_model_or_no_user_message_is_a_readable_400(served):
    _, _, client = served
    with pytest.raises(openai.BadRequestError) as unknown:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": QUESTION}])
    assert "papergraph-<mode>" in str(unknown.value)
    with pytest.raises(openai.BadRequestError) as empty:
        client.chat.completions.create(model="papergraph-mix", messages=[{"role": "assistant", "content": "hi"}])
    assert "no user message" in str(empty.value)


def test_a_token_is_the_clients_api_key_when_tokens_are_required(served):
    lib, _, _ = served
    add_account("chen", "a long enough password", "viewer")
    _, secret = create_token("chen")
    with LiveServer(lib, ApiConfig(require_tokens=True)) as server:
        good = openai.OpenAI(base_url=f"{server.url}/v1", api_key=secret, max_retries=0)
        assert "papergraph-mix" in {m.id for m in good.models.list()}
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=f"{server.url}/v1", api_key="sk-not-ours", max_retries=0).models.list()
