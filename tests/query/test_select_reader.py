"""The `select` reader: the model chooses among the extractive reader's best sentences and the answer is the chosen
sentence verbatim. Its reply formats and odds as units; then through the engine against the OpenAI-protocol replay
server (JSON schema), and with the real embedded model (grammar) where it is installed."""
from __future__ import annotations

import json
import math
import re

import pytest

from core.library import open_library
from core.query.engine import ask
from core.query.reading import select as S
from core.query.reading.candidates import Candidate
from core.query.records import QueryParams
from core.settings.workspace import Workspace
from tests import graph_papers
from tests.models.test_embedded_llm import needs_model
from tests.openai_server import OpenAIReplayServer, Reply, last_user_message
from tests.query.query_helpers import QUESTION, ingest


# ---------------------------------------------------------------------------------------------- units
@pytest.mark.parametrize("reply, form, numbers, verdict, short", [
    ("684K | 3", S.WORDS, [3], "", "684K"),
    ("none", S.WORDS, [], "", ""),
    ("None | 5", S.WORDS, [], "", ""),
    ('{"answer": "BooksCorpus", "sentence": "2"}', S.WORDS, [2], "", "BooksCorpus"),
    ('{ "answer": "", "sentence" : "none" }', S.WORDS, [], "", ""),
    ("no | 2", S.VERDICT, [2], "no", ""),
    ("not stated", S.VERDICT, [], "not stated", ""),
    ('{"verdict": "yes", "sentence": "1"}', S.VERDICT, [1], "yes", ""),
])
def test_a_reply_in_either_format_is_read_as_the_same_choice(reply, form, numbers, verdict, short):
    choice = S.parse_reply(reply, 6, form)
    assert choice is not None
    assert (choice.numbers, choice.verdict, choice.short) == (numbers, verdict, short)
    assert choice.none == (not numbers)


@pytest.mark.parametrize("reply, form", [("out of range | 7", S.WORDS), ("Sure! The answer is BERT.", S.WORDS),
                                         ("2", S.VERDICT), ('{"verdict": "maybe", "sentence": "1"}', S.VERDICT),
                                         ("", S.WORDS), ("Paris | 9", S.WORDS)])
def test_a_reply_that_names_no_shown_sentence_or_no_verdict_is_not_read(reply, form):
    assert S.parse_reply(reply, 6, form) is None


def test_the_odds_are_read_at_the_decision_token():
    # grammar: the first token decides between answering and "none" (its mass from the full vocabulary's odds)
    odds = S.decision_odds([[["Sci", -0.5], ["None", -2.0], ["The", -1.5]]], S.Choice(numbers=[2], short="SciBERT"),
                           6, S.WORDS)
    assert odds == pytest.approx(1 - 0.1353, rel=1e-3)
    # JSON: the token after "answer": "
    tokens = [[["{", 0.0]], [['"', 0.0]], [["answer", 0.0]], [['":', 0.0]], [[' "', 0.0]],
              [["none", -0.2], ["Sci", -1.8]], [['"', 0.0]]]
    assert S.decision_odds(tokens, S.Choice(), 6, S.WORDS) == pytest.approx(0.8187, rel=1e-3)
    # yes/no: among yes / no / not only
    verdict = S.decision_odds([[["no", -0.3], ["yes", -1.5], ["The", -0.1]]], S.Choice("no", [1]), 6, S.VERDICT)
    assert verdict == pytest.approx(0.7408 / (0.7408 + 0.2231), rel=1e-3)
    assert S.decision_odds(None, S.Choice(numbers=[1]), 6, S.WORDS) is None


def test_the_margin_of_no_over_yes_is_read_at_the_verdict_token_with_an_absent_option_bounded():
    assert S.no_margin([[" yes", -0.2], ["no", -1.8], ["Yes", -3.0]]) == pytest.approx(
        math.log(math.exp(-1.8)) - math.log(math.exp(-0.2) + math.exp(-3.0)))
    # "no" outside the top alternatives: as likely as the least likely of them, at most
    assert S.no_margin([["yes", -0.1], ["The", -2.0], ["It", -4.0]]) == pytest.approx(-4.0 + 0.1)
    assert S.no_margin([["The", -0.1]]) is None and S.no_margin(None) is None


def _yes_no_shown(sentence: str) -> list[S.Shown]:
    return S.shown_candidates([Candidate(n=1, text=sentence, role="body")], 1)


def test_a_verdict_is_read_from_the_odds_and_the_sentence_not_from_the_models_argmax():
    """The 1.5B model's argmax was "yes" for every dev yes/no question: the verdict is the calibrated P(no) from the
    margin of no over yes and whether the chosen sentence negates what is asked."""
    question = "Does REVERB model n-ary relations?"
    calibration = S.Calibration(verdict_a=1.0, verdict_b=3.0, verdict_c=-1.0)
    # argmax yes, but the sentence says "only binary" and no is not far behind: no
    choice = S.Choice("yes", [1], margin=-0.5)
    sure = S.settle_verdict(choice, _yes_no_shown("REVERB only models binary relations."), question, calibration)
    assert choice.verdict == "no" and sure == pytest.approx(1 / (1 + math.exp(-1.5)))
    # the same odds over a sentence that affirms: yes
    choice = S.Choice("yes", [1], margin=-0.5)
    sure = S.settle_verdict(choice, _yes_no_shown("REVERB models n-ary relations."), question, calibration)
    assert choice.verdict == "yes" and sure == pytest.approx(1 - 1 / (1 + math.exp(1.5)))
    # the confidence and the threshold it is held to are the verdict's own
    choice = S.Choice("yes", [1], margin=4.0)
    assert S.confidence(choice, _yes_no_shown("REVERB models n-ary relations."), question, S.VERDICT,
                        S.Calibration(verdict_threshold=0.7)) == (pytest.approx(1 / (1 + math.exp(-4.0))), 0.7)
    assert choice.verdict == "no"


def test_a_not_stated_verdict_with_odds_of_yes_and_no_is_read_over_the_best_ranked_sentence():
    """The model said "not stated" to most answerable yes/no dev questions while its odds of no against yes were
    right: such a reply names the best-ranked sentence, its verdict to be read from those odds."""
    odds = [[["not", -0.5], ["no", -1.2], ["yes", -1.9]], [[" stated", 0.0]]]
    choice = S.read_choice("not stated", odds, 6, S.VERDICT)
    assert not choice.none and choice.numbers == [1] and choice.margin == pytest.approx(0.7)
    shown = S.shown_candidates([Candidate(n=1, text="REVERB only models binary relations.", role="body")], 1)
    assert S.locate(choice, shown) == 1  # no words copied: its sentence stands
    assert S.read_choice("not stated", None, 6, S.VERDICT).none  # no odds: an abstention, as the model said
    assert S.read_choice("none", [[["none", -0.1]]], 6, S.WORDS).none


def test_a_clause_questions_numbered_sentence_stands_when_its_words_paraphrase_it():
    """For how / why questions the model paraphrases the clause it copies: its numbered sentence is the answer,
    verbatim; for any other question words no shown sentence says are refused."""
    from core.query.reading.answer_types import answer_type

    shown = S.shown_candidates([Candidate(n=1, text="The loss is the sum of two terms.", role="body"),
                                Candidate(n=2, text="We weight the terms to balance recall.", role="body",
                                          position=4)], 2)
    choice = S.Choice(numbers=[2], short="weights balance the recall")
    assert answer_type("Why are the terms weighted?") in S.CLAUSE_KINDS
    assert S.locate(choice, shown, clause=True) == 2
    assert S.locate(choice, shown) is None
    assert S.locate(S.Choice(numbers=[2], short="the sum of two terms"), shown, clause=True) == 1  # said: found


def test_the_copied_words_decide_the_sentence_and_words_no_sentence_says_are_refused():
    shown = S.shown_candidates([Candidate(n=1, text="The model is initialized with SciBERT.", role="body"),
                                Candidate(n=2, text="This yields 684K training triples.", role="body", position=3)],
                               2)
    assert S.locate(S.Choice(numbers=[1], short="SciBERT"), shown) == 1
    assert S.locate(S.Choice(numbers=[1], short="684K"), shown) == 2  # numbered wrong: the sentence saying it
    assert S.locate(S.Choice(numbers=[1], short="Paris"), shown) is None  # the model's own knowledge


def test_words_the_sentence_does_not_say_are_never_its_short_answer():
    sentence = "This process results in about 684K training triples and 145K validation triples."
    assert sentence[slice(*S.short_span(sentence, "684k  training triples"))] == "684K training triples"
    assert S.short_span(sentence, "700K") is None
    assert S.short_span(sentence, "") is None


def test_a_sentence_that_points_back_is_shown_after_the_one_before_it():
    first = Candidate(n=1, text="SPECTER is trained on citation triplets.", role="body", position=0)
    second = Candidate(n=1, text="It uses 684K of them.", role="body", position=1)
    other = Candidate(n=2, text="SciDocs has seven tasks.", role="body", position=0)
    shown = S.shown_candidates([second, other, first], 2)
    assert [s.line() for s in shown] == ["1. SPECTER is trained on citation triplets. It uses 684K of them.",
                                         "2. SciDocs has seven tasks."]


def test_the_grammar_and_schema_offer_exactly_the_shown_numbers():
    for form in (S.WORDS, S.VERDICT):
        assert '"1" | "2" | "3"' in S.grammar(3, form) and '"4"' not in S.grammar(3, form)
        assert S.schema(3, form)["json_schema"]["schema"]["properties"]["sentence"]["enum"] == ["1", "2", "3", "none"]


# ---------------------------------------------------------------------------------------------- through the engine
def _sentences(body) -> dict[int, str]:
    return {int(n): s for n, s in re.findall(r"^(\d+)\. (.*)$", last_user_message(body), re.M)}


def _chooser(body) -> Reply:
    """A model that reads: the sentence naming BooksCorpus, the answer's words copied from it; none otherwise."""
    if body.get("response_format", {}).get("json_schema", {}).get("name") != "select":
        return graph_papers.extraction_reply(body) if graph_papers.is_extraction_request(body) else Reply("ok")
    question = last_user_message(body).split("\n", 1)[0]
    found = [n for n, s in _sentences(body).items() if "BooksCorpus" in s]
    if "capital of France" in question or not found:
        return Reply(content=json.dumps({"sentence": "none", "answer": ""}))
    return Reply(content=json.dumps({"sentence": str(found[0]), "answer": "BooksCorpus"}))


@pytest.fixture(scope="module")
def select_workspace(tmp_path_factory):
    with OpenAIReplayServer(default=_chooser, model="replay-reader") as server:
        root = tmp_path_factory.mktemp("select")
        ws = graph_papers.fast_workspace(root / "ws", reader="extractive")
        ingest(open_library(ws), root / "pdfs")  # graphed LLM-free: only the reader uses the model
        lib = open_library(Workspace(ws.root))
        settings = lib.settings
        settings.llm.provider, settings.llm.base_url, settings.llm.model = "openai", server.url, server.model
        settings.llm.max_retries = 0
        settings.query.reader = "select"
        lib.workspace.save_settings(settings)
        yield Workspace(ws.root), server


def test_select_states_the_chosen_sentence_verbatim_with_its_citation_and_the_copied_words(select_workspace):
    ws, server = select_workspace
    lib = open_library(ws)
    before = len(server.chat_requests)
    result = ask(lib, QUESTION, QueryParams(mode="naive"), save=False)
    answer = result.answer
    assert answer.reader == "select" and answer.model == "openai:replay-reader"
    assert not answer.abstained and "BooksCorpus" in answer.sentences[0].text
    n = answer.sentences[0].citations[0]
    quoted = re.sub(r"\s*\[\d+\]$", "", answer.sentences[0].text)
    assert " ".join(quoted.split()) in " ".join(result.context.source(n).text.split())  # the citation resolves
    sentence = answer.sentences[answer.short_answer_sentence].text
    assert sentence[slice(*answer.short_answer_span)] == answer.short_answer == "BooksCorpus"
    assert 0.0 <= answer.confidence <= 1.0
    select_calls = [b for b in server.chat_requests[before:] if b.get("response_format")]
    assert len(select_calls) == 1 and result.llm_calls >= 1
    assert "answer" not in result.llm_free


def test_select_abstains_when_the_model_says_none_and_writes_nothing(select_workspace):
    ws, server = select_workspace
    before = len(server.chat_requests)
    result = ask(open_library(ws), "What is the capital of France?", QueryParams(mode="naive", reader="write"),
                 save=False)
    assert result.answer.abstained and result.answer.reader == "select"
    assert "Paris" not in result.answer.text
    # write's "none" check ran and nothing was written: no request without the select schema
    assert all(b.get("response_format") for b in server.chat_requests[before:])


def test_an_unreadable_reply_falls_back_to_the_extractive_answer_and_says_so(select_workspace):
    ws, server = select_workspace
    server.then(Reply(content="I think it is sentence two, probably."))
    # another question than the tests above ask: their replies are in the prompt cache, this one must be made
    result = ask(open_library(ws), "Which corpus is BERT pre-trained on?", QueryParams(mode="naive"), save=False)
    assert result.answer.reader == "extractive" and "could not be read" in result.error


def test_without_a_model_the_select_setting_answers_extractively(tmp_path):
    ws = graph_papers.fast_workspace(tmp_path / "ws", reader="select")
    lib = open_library(ws)
    ingest(lib, tmp_path / "pdfs")
    result = ask(open_library(Workspace(ws.root)), QUESTION, QueryParams(mode="naive"), save=False)
    assert result.answer.reader == "extractive" and "answer" in result.llm_free


# ---------------------------------------------------------------------------------------------- the embedded model
@needs_model
def test_the_embedded_model_replies_in_the_grammar_and_abstains_off_topic(tmp_path, monkeypatch):
    """With the real model: its reply is read (the grammar holds it to '<words> | <n>' or 'none', a few tokens;
    told only to choose, it explained until max_tokens and no reply could be read), and a question the papers do
    not answer states nothing. Which sentence a 1.5B model picks is measured by bench/answers.py, not asserted."""
    monkeypatch.setenv("PAPERGRAPH_EMBEDDED_READER", "on")
    ws = graph_papers.fast_workspace(tmp_path / "ws", reader="auto")
    ingest(open_library(ws), tmp_path / "pdfs")
    lib = open_library(Workspace(ws.root))
    assert lib.reader_model() is not None and lib.reader_model().name.startswith("embedded:")
    answered = ask(lib, QUESTION, QueryParams(mode="naive"), save=False)
    assert answered.answer.reader == "select" and not answered.error, answered.error
    assert answered.answer.model_odds is not None and 0.0 <= answered.answer.confidence <= 1.0
    off = ask(lib, "What is the capital of France?", QueryParams(mode="naive"), save=False)
    assert off.answer.reader == "select" and not off.error and off.answer.abstained and "Paris" not in off.answer.text
    # a yes/no question: the verdict is read from the odds (whatever the model's argmax), with its evidence cited
    verdict = ask(lib, "Is BERT pre-trained on BooksCorpus?", QueryParams(mode="naive"), save=False).answer
    assert verdict.reader == "select" and (verdict.abstained or verdict.short_answer in ("yes", "no"))
    assert verdict.abstained or verdict.sentences[0].citations
    usage = {row["purpose"]: row for row in lib.llm_cache.usage_by_purpose()}
    assert usage["select"]["calls"] == 3 and usage["select"]["completion_tokens"] <= 3 * S.REPLY_TOKENS
