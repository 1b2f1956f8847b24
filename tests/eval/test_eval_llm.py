"""The evaluation's LLM features against the real OpenAI-protocol replay server: the pairwise judge (two calls
per pair, answers swapped, a split is a tie, an unreadable reply is never a winner) and question generation
from a real workspace's chunks (two generated papers parsed, chunked and stored) and from personas."""
from __future__ import annotations

import json
import re
import threading

import pytest

from core.eval.generate import (
    GeneratedQuestions,
    describe_collection,
    generate_from_chunks,
    generate_personas,
    sample_chunks,
)
from core.eval.pairwise import CRITERIA, PairwiseSummary, judge_pair, judge_pairs
from core.library import open_library
from core.pipeline.documents import add_pdf
from core.pipeline.ingest import process_queue
from core.schema.records import DocStatus
from core.settings.workspace import Workspace
from tests import graph_papers, pdfs
from tests.openai_server import OpenAIReplayServer, Reply, last_user_message


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with OpenAIReplayServer(model="replay-judge") as server:
        root = tmp_path_factory.mktemp("eval-llm")
        ws = graph_papers.fast_workspace(root / "ws", provider="openai", base_url=server.url, model=server.model,
                                         max_retries=0)
        lib = open_library(ws)
        # The third paper brings a table and a figure: item chunks, which are never asked about.
        papers = (graph_papers.make_bert_pdf(root / "pdfs"), graph_papers.make_roberta_pdf(root / "pdfs"),
                  pdfs.make_paper_pdf(root / "pdfs" / "heliotrope.pdf", pages=1))
        for pdf in papers:
            add_pdf(lib, pdf.name, pdf.read_bytes())
        docs = process_queue(lib)
        assert all(d.status == DocStatus.READY for d in docs), [d.message for d in docs]
        yield ws, server, {d.filename: d.id for d in docs}


@pytest.fixture
def env(served):
    """A fresh library on the shared workspace, the server's script, rules and log emptied, and the prompt-hash
    cache cleared: tests that send the same passages must each reach the server."""
    ws, server, ids = served
    server.script.clear()
    server.rules.clear()
    server.requests.clear()
    server.default = Reply(content="ok")
    lib = open_library(Workspace(ws.root))
    assert lib.chat_model() is not None  # creates the cache tables
    with lib.db.connect() as conn:
        conn.execute("DELETE FROM llm_cache")
    return lib, server, ids


def _verdict_json(*winners: str, why: str = "Answer 1 covers more than Answer 2.") -> str:
    return json.dumps({c.capitalize() if i % 2 else c: {"winner": w, "explanation": why}
                       for i, (c, w) in enumerate(zip(CRITERIA, winners))})


def _shown_answers(request: dict) -> tuple[str, str]:
    text = last_user_message(request)
    one = text.split("---Answer 1---\n", 1)[1].split("\n\n---Answer 2---", 1)[0]
    two = text.split("---Answer 2---\n", 1)[1].split("\n\n---End of the answers---", 1)[0]
    return one, two


# --- pairwise judge -----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_pair_is_judged_twice_with_the_answers_swapped_and_only_agreement_makes_a_winner(env):
    lib, server, _ = env
    # (naive, local): local wins 3 criteria; diversity goes to whichever answer is shown first.
    server.then(Reply(_verdict_json("Answer 2", "Answer 1", "Answer 2", "Answer 2")),
                Reply(_verdict_json("Answer 1", "Answer 1", "Answer 1", "Answer 1")))
    verdict = judge_pair(lib.chat_model(), "q1", "How do BERT and RoBERTa differ?", "naive", "NAIVE TEXT",
                         "local", "LOCAL TEXT")

    assert len(server.chat_requests) == 2
    assert _shown_answers(server.chat_requests[0]) == ("NAIVE TEXT", "LOCAL TEXT")
    assert _shown_answers(server.chat_requests[1]) == ("LOCAL TEXT", "NAIVE TEXT")
    assert all(r["response_format"] == {"type": "json_object"} for r in server.chat_requests)
    assert verdict.error == "" and set(verdict.criteria) == set(CRITERIA)
    for criterion in ("comprehensiveness", "empowerment", "overall"):
        cv = verdict.criteria[criterion]
        assert (cv.winner, cv.first_order, cv.swapped_order, cv.agreed) == ("local", "local", "local", True)
    diversity = verdict.criteria["diversity"]
    assert (diversity.winner, diversity.first_order, diversity.swapped_order, diversity.agreed) == \
        ("tie", "naive", "local", False)
    # "Answer 1" means a different mode in each order: the explanations name the modes instead.
    assert verdict.criteria["overall"].explanation == "the naive answer covers more than the local answer."
    assert "(naive, local): the naive answer covers more" in diversity.explanation
    assert "(local, naive): the local answer covers more" in diversity.explanation


def test_judge_pairs_counts_wins_ties_disagreements_and_reports_progress(env):
    lib, server, _ = env
    server.then(Reply(_verdict_json("Answer 1", "Answer 1", "Answer 1", "Answer 1")),  # pair 1: a in both orders
                Reply(_verdict_json("Answer 2", "Answer 2", "Answer 2", "Answer 2")),
                Reply(_verdict_json("Answer 2", "Answer 1", "Answer 2", "answer 2")),  # pair 2: b, one split
                Reply("```json\n" + _verdict_json("1", "Answer 1", "Answer 1", "Answer 1") + "\n```"))
    progress: list[tuple[int, int]] = []
    items = [("q1", "What is BERT pre-trained on?", "BooksCorpus", "Wikipedia"),
             ("q2", "What does RoBERTa remove?", "masking", "next sentence prediction")]
    summary = judge_pairs(lib.chat_model(), items, "mix", "global", on_progress=lambda d, t: progress.append((d, t)))

    assert len(server.chat_requests) == 4 and progress == [(1, 2), (2, 2)]
    assert [v.question_id for v in summary.verdicts] == ["q1", "q2"] and summary.stopped == ""
    assert summary.wins["comprehensiveness"] == {"mix": 1, "global": 1, "tie": 0}
    assert summary.wins["diversity"] == {"mix": 1, "global": 0, "tie": 1}
    assert summary.wins["overall"] == {"mix": 1, "global": 1, "tie": 0}
    assert summary.disagreements == 1 and summary.unreadable == 0
    assert summary.win_rate("diversity", "mix") == 0.5 and summary.win_rate("overall", "global") == 0.5
    assert PairwiseSummary.from_dict(json.loads(json.dumps(summary.to_dict()))) == summary


def test_an_unreadable_reply_is_an_error_and_never_a_winner(env):
    lib, server, _ = env
    server.then(Reply("I prefer the first answer, it is clearly better."),
                Reply(_verdict_json("Answer 2", "Answer 2", "Answer 2", "Answer 2")),
                # the template copied back, and a criterion left out: those criteria have no winner
                Reply(json.dumps({"comprehensiveness": {"winner": "Answer 1 or Answer 2", "explanation": "?"},
                                  "diversity": {"winner": "Answer 1"}, "empowerment": {"winner": "Tie"}})),
                Reply(_verdict_json("Answer 2", "Answer 2", "Answer 2", "Answer 2")))
    items = [("q1", "Which benchmark does BERT report?", "GLUE", "SQuAD"),
             ("q2", "Which dataset does RoBERTa add?", "CC-News", "BooksCorpus")]
    summary = judge_pairs(lib.chat_model(), items, "naive", "hybrid")
    first, second = summary.verdicts

    assert "the judge's reply is not JSON" in first.error and "order (naive, hybrid)" in first.error
    for cv in first.criteria.values():
        assert cv.winner == "" and cv.first_order == "" and cv.swapped_order == "naive" and not cv.agreed
    assert "no readable winner for comprehensiveness, empowerment, overall" in second.error
    assert second.criteria["diversity"].winner == "naive"
    assert all(second.criteria[c].winner == "" for c in ("comprehensiveness", "empowerment", "overall"))
    assert summary.unreadable == 4 + 3 and summary.disagreements == 0
    assert summary.wins["diversity"] == {"naive": 1, "hybrid": 0, "tie": 0}
    assert summary.wins["overall"] == {"naive": 0, "hybrid": 0, "tie": 0}


def test_a_failing_llm_stops_the_run_and_cancel_ends_it_after_the_pair_in_progress(env):
    lib, server, _ = env
    server.default = Reply(status=400)
    items = [(f"q{i}", f"Question {i} about GLUE?", "a", "b") for i in range(6)]
    summary = judge_pairs(lib.chat_model(), items, "naive", "local")
    assert len(summary.verdicts) == 3 and len(server.chat_requests) == 6
    assert summary.stopped.startswith("stopped after 3 of 6 pairs: the LLM failed on 3 pairs in a row")
    assert all("the judge call failed" in v.error and "HTTP 400" in v.error for v in summary.verdicts)
    assert summary.unreadable == 3 * len(CRITERIA) and sum(sum(w.values()) for w in summary.wins.values()) == 0

    server.default = Reply(_verdict_json("Answer 1", "Answer 1", "Answer 1", "Answer 1"))
    cancel = threading.Event()
    summary = judge_pairs(lib.chat_model(), [(f"c{i}", f"Cancelled question {i}?", "x", "y") for i in range(3)],
                          "naive", "local", on_progress=lambda done, total: cancel.set(), cancel=cancel)
    assert len(summary.verdicts) == 1 and summary.stopped == "cancelled after 1 of 3 pairs"


def test_without_an_llm_or_with_one_mode_twice_the_judge_refuses_clearly(env):
    lib, server, _ = env
    with pytest.raises(ValueError, match="the pairwise judge needs an LLM: set one on the Settings page"):
        judge_pair(None, "q1", "Q?", "naive", "a", "local", "b")
    with pytest.raises(ValueError, match="needs an LLM"):
        judge_pairs(None, [("q1", "Q?", "a", "b")], "naive", "local")
    with pytest.raises(ValueError, match="two different modes"):
        judge_pairs(lib.chat_model(), [("q1", "Q?", "a", "b")], "mix", "mix")
    assert server.chat_requests == []


# --- questions from chunks ----------------------------------------------------------------------------------

_PASSAGE = re.compile(r"---Passage \(paper \"(.*?)\", section \"(.*?)\"\)---\n(.*?)\n---End of the passage---", re.S)


def _question_reply(body: dict) -> Reply:
    """A well-behaved model: asks about the passage's first name-like word, answers with the word after it."""
    title, _section, passage = _PASSAGE.search(last_user_message(body)).groups()
    words = passage.split()
    return Reply(json.dumps({"question": f"In {title!r}, what follows {words[0]!r}?", "answer": words[1]}))


def test_questions_from_chunks_carry_the_real_passage_as_evidence_spread_over_the_papers(env):
    lib, server, ids = env
    server.default = _question_reply
    progress: list[tuple[int, int]] = []
    questions = generate_from_chunks(lib, lib.chat_model(), 4, seed=3, on_progress=lambda d, t: progress.append((d, t)))

    assert isinstance(questions, GeneratedQuestions) and len(questions) == len(server.chat_requests) >= 2
    assert progress[-1] == (len(questions), len(questions)) and questions.dropped == []
    assert {q.doc_id for q in questions} == set(ids.values())  # both papers, not the first one four times
    for q in questions:
        chunk_id = f"{q.doc_id}:{q.id.rsplit('-', 1)[1]}"
        chunk = lib.chunks.get_many([chunk_id])[chunk_id]
        assert q.id.startswith(f"gen-{q.doc_id[:10]}-") and q.evidence == [chunk.text] and chunk.kind == "text"
        assert q.answers == [chunk.text.split()[1]] and q.answers[0] in q.evidence[0]
        assert lib.documents.get(q.doc_id).display_title in questions.origins[q.id]
    assert len({q.id for q in questions}) == len(questions)
    # The sample is the seed's: the same seed gives the same passages, without another call (prompt cache).
    again = generate_from_chunks(lib, lib.chat_model(), 4, seed=3)
    assert [q.to_dict() for q in again] == [q.to_dict() for q in questions]
    assert len(server.chat_requests) == len(questions)


def test_the_sample_skips_short_and_non_text_chunks_and_narrows_to_chosen_papers(env):
    lib, _, ids = env
    bert = ids["bert.pdf"]
    every = [c for doc_id in ids.values() for c in lib.chunks.by_doc(doc_id)]
    short = {c.id for c in every if len(c.text.split()) < 25}
    media = {c.id for c in every if c.kind != "text"}
    assert short and media  # the papers have both, so skipping them is tested
    sample = sample_chunks(lib, list(ids.values()), 100)
    assert sample and not (short | media) & {c.id for c in sample}
    assert {c.id for c in sample} == {c.id for c in every} - short - media  # everything else, each once
    assert all(c.kind == "text" for c in sample) and len({c.id for c in sample}) == len(sample)
    assert {c.doc_id for c in sample_chunks(lib, [bert], 100)} == {bert}
    with pytest.raises(ValueError, match="not in the library or not ready"):
        generate_from_chunks(lib, lib.chat_model(), 3, doc_ids=["f" * 64])
    with pytest.raises(ValueError, match="choose at least one paper"):
        generate_from_chunks(lib, lib.chat_model(), 3, doc_ids=[])
    with pytest.raises(ValueError, match="at least 1"):
        generate_from_chunks(lib, lib.chat_model(), 0)


def test_unreadable_or_answerless_replies_are_dropped_and_counted(env):
    lib, server, ids = env
    replies = iter([Reply("Sorry, I cannot help with that."), Reply(json.dumps({"question": "What?", "answer": ""})),
                    Reply(json.dumps({"question": "", "answer": ""}))])
    server.default = lambda body: next(replies, None) or _question_reply(body)
    questions = generate_from_chunks(lib, lib.chat_model(), 5, seed=1)

    sent = len(server.chat_requests)
    assert sent >= 4 and len(questions) == sent - 3 and len(questions.dropped) == 3
    assert "the reply is not JSON: 'Sorry, I cannot help with that.'" in questions.dropped[0]
    assert "the question has no answer: 'What?'" in questions.dropped[1]
    assert "the model found no question in the passage" in questions.dropped[2]
    assert all(q.answers and q.answers[0] and q.evidence for q in questions)


def test_generation_without_an_llm_refuses_clearly(env):
    lib, server, _ = env
    with pytest.raises(ValueError, match="generating questions needs an LLM: set one on the Settings page"):
        generate_from_chunks(lib, None, 3)
    with pytest.raises(ValueError, match="needs an LLM"):
        generate_personas(lib, None)
    assert server.chat_requests == []


# --- persona questions --------------------------------------------------------------------------------------

def test_personas_yield_users_times_tasks_times_questions_high_level_questions(env):
    lib, server, _ = env
    users = {"users": [{"user": "A PhD student new to pre-training", "tasks": ["Survey objectives", "Pick a model"]},
                       {"user": "A reviewer", "tasks": ["Check claims", "Compare results", "An extra task"]},
                       {"user": "A third user nobody asked for", "tasks": ["ignored"]}]}

    def reply(body: dict) -> Reply:
        text = last_user_message(body)
        if "---User---" not in text:
            return Reply(json.dumps(users))
        who = text.split("---User---\n", 1)[1].split("\n", 1)[0]
        return Reply(json.dumps({"tasks": [{"task": t, "questions": [f"{who}: task {t} question {q}?"
                                                                      for q in range(1, 5)]} for t in (2, 1)]}))

    server.default = reply
    questions = generate_personas(lib, lib.chat_model(), users=2, tasks=2, questions=3)

    assert len(server.chat_requests) == 3 and len(questions) == 2 * 2 * 3 and questions.dropped == []
    assert all(q.answers == [] and q.evidence == [] and q.doc_id == "" for q in questions)
    assert len({q.id for q in questions}) == 12 and questions[0].id == "persona-u1-t1-q1"
    assert questions[0].question == "A PhD student new to pre-training: task 1 question 1?"
    assert questions.origins["persona-u2-t2-q3"] == "User: A reviewer / Task: Compare results"
    first = last_user_message(server.chat_requests[0])
    assert graph_papers.BERT_TITLE in first and graph_papers.ROBERTA_TITLE in first
    assert "Identify 2 potential users" in first and "list 2 tasks" in first
    assert "1. Survey objectives\n2. Pick a model" in last_user_message(server.chat_requests[1])


def test_tasks_a_reply_left_without_questions_are_asked_again_one_by_one(env):
    lib, server, _ = env
    # What Qwen2.5-1.5B does: questions for the first task only.
    server.then(Reply(json.dumps({"users": [{"user": "A PhD student", "tasks": ["Survey", "Compare", "Plan"]}]})),
                Reply(json.dumps({"tasks": [{"task": 1, "questions": ["Which objectives exist?"]}]})),
                Reply(json.dumps({"tasks": [{"task": 1, "questions": ["How do the models compare?"]}]})),
                Reply("not JSON"))
    questions = generate_personas(lib, lib.chat_model(), users=1, tasks=3, questions=1)

    assert len(server.chat_requests) == 4
    assert "---Their tasks---\n1. Compare\n\n" in last_user_message(server.chat_requests[2])  # one task a call
    assert "---Their tasks---\n1. Plan\n\n" in last_user_message(server.chat_requests[3])
    assert [(q.id, q.question) for q in questions] == [("persona-u1-t1-q1", "Which objectives exist?"),
                                                       ("persona-u1-t2-q1", "How do the models compare?")]
    assert questions.dropped == ["user 1 (A PhD student), task 3: no question"]


def test_personas_report_an_unreadable_reply_instead_of_inventing_questions(env):
    lib, server, _ = env
    server.then(Reply("Here are some users: students and reviewers."))
    questions = generate_personas(lib, lib.chat_model(), users=2, tasks=1, questions=1)
    assert questions == [] and "names no user with a task" in questions.stopped

    server.then(Reply(json.dumps({"users": [{"user": "Engineer", "tasks": ["Choose a model"]}]})),
                Reply("no JSON here"))
    questions = generate_personas(lib, lib.chat_model(), users=1, tasks=1, questions=2)
    assert questions == [] and "user 1 (Engineer): the reply is not readable" in questions.dropped[0]
    with pytest.raises(ValueError, match="between 1 and 10"):
        generate_personas(lib, lib.chat_model(), users=0)


def test_the_collection_description_stays_small(env):
    lib, _, _ = env
    text = describe_collection(lib, max_chars=400)
    assert text.startswith("3 papers:") and len(text) <= 400
    assert graph_papers.BERT_TITLE in text and graph_papers.ROBERTA_TITLE in text
    assert "Quantum Lattice Solvers for Zebrafish Migration Graphs: We present the heliotrope" in text  # abstract
    titles_only = describe_collection(lib, max_chars=80)
    assert titles_only.splitlines()[-1] == "- and 1 more papers" and len(titles_only.splitlines()) == 4
