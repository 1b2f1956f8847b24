"""Evaluation runs over a real workspace (tests/eval/conftest.py): results kept per question × mode with scores
that match what was retrieved, summaries, progress, resume, cancel, modes run one after another, a question that
cannot be asked, RAGAS's non-LLM metrics, and the options run_eval refuses."""
from __future__ import annotations

import re

import pytest

from core.eval import metrics as m
from core.eval.ragas_scores import METRIC_NAMES_LLM, METRIC_NAMES_NON_LLM
from core.eval.report import summary_markdown
from core.eval.runner import EvalOptions, metric_order, run_eval, summarise
from core.library import open_library
from core.query.answer import strip_markers
from core.schema.eval import CANCELLED, DONE, EvalQuestion, QuestionResult, Score
from core.settings.workspace import Workspace
from tests.eval.eval_helpers import FIVE_MODES, NO_RAGAS, NOWHERE, chunk_texts, make_questions


@pytest.mark.slow
def test_the_reference_passages_are_real_text_of_the_papers(workspace):
    lib = open_library(Workspace(workspace.root))
    texts = list(chunk_texts(lib).values())
    for question in make_questions(lib)[:3]:
        for passage in question.evidence:
            assert m.passage_hits([passage], texts) != [None], passage
    books = make_questions(lib)[0].evidence[0]
    assert not any(books in t for t in texts), "the chunk should differ from the copied passage in whitespace"
    assert m.passage_hits([NOWHERE], texts) == [None]


@pytest.mark.slow
def test_a_run_saves_every_question_in_every_mode_with_scores_that_match_what_was_retrieved(full_run):
    lib, store, qset, outcome, progress = full_run
    run = store.get_run(outcome.run.id)
    assert run.status == DONE and run.done == run.total == 5 * 5 and run.label == "five modes"
    assert run.modes == FIVE_MODES and run.options["ragas"] is False
    results = store.results(run.id)
    assert sorted((r.question_id, r.mode) for r in results) == sorted(
        (q.id, mode) for q in qset.questions for mode in FIVE_MODES)
    assert results == outcome.results
    texts = chunk_texts(lib)
    questions = {q.id: q for q in qset.questions}
    for r in results:
        assert r.error == "" and r.answer and r.retrieved_chunk_ids and r.contexts, (r.question_id, r.mode)
        assert "answer" in r.llm_free and r.llm_calls == 0  # no LLM configured: extractive answers
        question = questions[r.question_id]
        if question.answers:  # the short answer when there is one, else the answer without its [n] markers
            scored = r.short_answer or strip_markers(r.answer)
            assert r.scores["em"].value == m.exact_match(scored, question.answers)
            assert r.scores["f1"].value == pytest.approx(m.token_f1(scored, question.answers))
            assert r.scores["contains_reference"].value == m.contains_reference(
                [strip_markers(r.answer), r.short_answer], question.answers)
        else:
            assert r.scores["em"].value is None and r.scores["em"].error.startswith("no reference answer")
        if not question.evidence:
            assert all(r.scores[n].value is None and r.scores[n].error == "no reference passages"
                       for n in ("recall@5", "recall@10", "complete@10", "mrr", "ndcg@10", "evidence_in_context"))
            continue
        # Rank of the retrieved chunk holding each passage, found here from the stored ranking and chunk texts.
        ranks = [next((i for i, cid in enumerate(r.retrieved_chunk_ids)
                       if m.normalize_passage(p) in m.normalize_passage(texts[cid])), None) for p in question.evidence]
        expected_mrr = 1 / (min(x for x in ranks if x is not None) + 1) if any(x is not None for x in ranks) else 0.0
        assert r.scores["mrr"].value == pytest.approx(expected_mrr)
        assert r.scores["recall@10"].value == pytest.approx(sum(x is not None and x < 10 for x in ranks) / len(ranks))


def test_real_evidence_is_found_and_evidence_from_nowhere_is_not(full_run):
    lib, store, _, outcome, _ = full_run
    score = {(r.question_id, r.mode): {n: s.value for n, s in r.scores.items()} for r in outcome.results}
    # Every mode keeps 10 of the three papers' chunks: a passage ranked below them would be missed.
    assert {len(r.retrieved_chunk_ids) for r in outcome.results} == {10}
    assert len(chunk_texts(lib)) > 10
    for qid in ("books", "ccnews", "multinli"):
        naive = score[(qid, "naive")]
        assert naive["recall@10"] == 1.0 and naive["complete@10"] == 1.0, (qid, naive)
        assert naive["mrr"] > 0 and naive["ndcg@10"] > 0 and naive["evidence_in_context"] == 1.0
    # Ranks, in every mode, above the distractor paper's near misses ("ELECTRA is pre-trained on the OpenWebText
    # dataset", "ELECTRA ... reaches 88.8 accuracy on MultiNLI"): BooksCorpus's and MultiNLI's passages first, both
    # MultiNLI passages in the top 5, CC-News's in the top 2 (top 3 in global, which ranks by relations, and in mix,
    # which opens with ppr's passages: RoBERTa's other passages share its PageRank mass).
    for mode in FIVE_MODES:
        books, multinli, ccnews = (score[(qid, mode)] for qid in ("books", "multinli", "ccnews"))
        assert books["mrr"] == 1.0 and multinli["mrr"] == 1.0, (mode, books, multinli)
        assert multinli["recall@5"] == 1.0 and multinli["complete@10"] == 1.0, (mode, multinli)
        top = 3 if mode in ("global", "mix") else 2
        assert ccnews["mrr"] >= 1 / top and ccnews["recall@5"] == 1.0, (mode, ccnews)
    for mode in FIVE_MODES:
        nowhere = score[("nowhere", mode)]
        assert {n: nowhere[n] for n in ("recall@5", "recall@10", "complete@10", "mrr", "ndcg@10",
                                        "evidence_in_context")} == dict.fromkeys(
            ("recall@5", "recall@10", "complete@10", "mrr", "ndcg@10", "evidence_in_context"), 0.0)
        assert nowhere["em"] == 0.0
        assert score[("noref", mode)]["em"] is None and score[("noref", mode)]["f1"] is None


def test_summarise_averages_only_the_questions_with_a_value(full_run):
    _, _, _, outcome, _ = full_run
    summary = summarise(outcome.results)
    assert list(summary) == FIVE_MODES
    for mode in FIVE_MODES:
        per_question = {r.question_id: r for r in outcome.results if r.mode == mode}
        for name in ("recall@10", "mrr", "ndcg@10", "f1", "em"):
            values = [per_question[q].scores[name].value for q in ("books", "ccnews", "multinli", "nowhere")]
            assert summary[mode][name].mean == pytest.approx(sum(values) / 4)
            assert (summary[mode][name].n, summary[mode][name].missing) == (4, 1)  # noref has none
        # naive: recall@10 is 1, 1, 1 and 0 (nowhere) → 3/4.
        assert summary["naive"]["recall@10"].mean == pytest.approx(0.75)
        secs = [r.seconds for r in per_question.values()]
        assert summary[mode]["seconds"].mean == pytest.approx(sum(secs) / 5) and summary[mode]["seconds"].n == 5
    assert metric_order(summary) == ["em", "f1", "contains_reference", "recall@5", "recall@10", "complete@10", "mrr",
                                     "ndcg@10", "evidence_in_context", "seconds"]
    table = summary_markdown(summary).splitlines()
    assert table[0].startswith("| mode | em | f1 | contains_reference | recall@5 |") and len(table) == 2 + 5
    assert table[2].startswith("| naive | ") and "0.750 (1 n/a)" in table[2]


def test_progress_counts_questions_and_reaches_the_end(full_run):
    _, _, _, _, progress = full_run
    assert [p.done for p in progress] == [5, 10, 15, 20, 25]  # one call per question, five modes each
    assert all(p.total == 25 for p in progress) and progress[-1].fraction == 1.0 and progress[-1].eta_s == 0
    assert progress[0].eta_s == pytest.approx(progress[0].elapsed_s * 4)  # four fifths left at the same pace
    assert progress[-1].message == "25 of 25: noref"


def test_a_resumed_run_computes_only_the_missing_pairs(full_run):
    lib, store, qset, _, _ = full_run
    small = store.save_set("resume", qset.questions[:3])
    options = EvalOptions(modes=["naive", "mix"], **NO_RAGAS)
    run = store.create_run(small, options.modes, options.to_dict(), total=6)
    kept = [QuestionResult("books", "naive", "saved before", [], [], {"em": Score(0.25)}, 1.5),
            QuestionResult("books", "mix", "saved before", [], [], {"em": Score(0.5)}, 2.5),
            QuestionResult("ccnews", "naive", "saved before", [], [], {"em": Score(0.75)}, 3.5)]
    for done, result in enumerate(kept, start=1):
        store.save_result(run.id, result, done)
    progress = []
    outcome = run_eval(lib, small, options, resume=store.get_run(run.id), on_progress=progress.append, store=store)
    assert outcome.run.id == run.id and outcome.run.status == DONE and outcome.run.done == 6
    results = store.results(run.id)
    assert len(results) == 6 and len(store.runs(small.id)) == 1  # the same run, not a new one
    # The three saved before are untouched (not recomputed); the three missing ones are real runs.
    assert results[:3] == kept
    assert sorted((r.question_id, r.mode) for r in results[3:]) == [
        ("ccnews", "mix"), ("multinli", "mix"), ("multinli", "naive")]
    assert all(r.answer != "saved before" and r.scores["recall@10"].value == 1.0 for r in results[3:])
    # Progress counts the work of this process: 3 pairs (ccnews: mix only, then multinli: both).
    assert [(p.done, p.total) for p in progress] == [(1, 3), (3, 3)]


def test_cancel_from_the_progress_callback_stops_after_the_question_in_hand_and_keeps_it(full_run):
    lib, store, qset, _, _ = full_run
    small = store.save_set("cancel", qset.questions[:3])
    options = EvalOptions(modes=["naive", "mix"], **NO_RAGAS)
    started = []

    def cancel_after_first(progress):
        store.request_cancel(started[0].id)

    outcome = run_eval(lib, small, options, on_start=started.append, on_progress=cancel_after_first, store=store)
    run = outcome.run
    assert run.id == started[0].id and run.status == CANCELLED and run.message == "cancelled after 2 of 6"
    assert not run.cancel_requested  # the flag is spent: a resume does not stop at once
    kept = store.results(run.id)
    assert [(r.question_id, r.mode) for r in kept] == [("books", "naive"), ("books", "mix")]
    assert run.done == 2 < run.total == 6 and outcome.results == kept
    # Resumed, it finishes the rest and keeps the first question's results as they were.
    resumed = run_eval(lib, small, options, resume=run, store=store)
    assert resumed.run.status == DONE and len(resumed.results) == 6 and resumed.results[:2] == kept
    # A cancel request on a finished run changes nothing.
    store.request_cancel(run.id)
    assert not store.cancel_requested(run.id) and store.get_run(run.id).status == DONE


def test_modes_run_one_after_another_retrieve_what_they_retrieve_together(full_run):
    lib, store, qset, outcome, _ = full_run
    one = store.save_set("sequential", qset.questions[1:2])  # "ccnews"
    sequential = run_eval(lib, one, EvalOptions(modes=["naive", "global"], parallel_modes=False, **NO_RAGAS),
                          store=store)
    together = {(r.question_id, r.mode): r for r in outcome.results}
    assert [(r.mode, r.retrieved_chunk_ids) for r in sequential.results] == [
        (mode, together[("ccnews", mode)].retrieved_chunk_ids) for mode in ("naive", "global")]
    assert [r.scores for r in sequential.results] == [together[("ccnews", m_)].scores for m_ in ("naive", "global")]


def test_a_question_that_cannot_be_asked_is_saved_with_its_error_and_the_run_goes_on(full_run):
    lib, store, qset, _, _ = full_run
    blank = EvalQuestion("blank", "   ", ["x"], ["y"])  # possible from a hand-edited set in the store
    mixed = store.save_set("with a blank question", [blank, qset.questions[0]])
    outcome = run_eval(lib, mixed, EvalOptions(modes=["naive", "local"], **NO_RAGAS), store=store)
    assert outcome.run.status == DONE and len(outcome.results) == 4
    errors = {(r.question_id, r.mode): r.error for r in outcome.results}
    assert errors[("blank", "naive")] == errors[("blank", "local")] == "the question is empty"
    assert errors[("books", "naive")] == errors[("books", "local")] == ""
    summary = summarise(outcome.results)
    assert summary["naive"]["recall@10"].n == 1 and summary["naive"]["seconds"].n == 2


def test_ragas_non_llm_metrics_join_the_scores_and_the_judge_is_skipped_without_an_llm(full_run):
    lib, store, qset, _, _ = full_run
    cc_chunk = next(t for t in chunk_texts(lib).values() if "CC-News" in t)
    # Evidence as question generation writes it (the whole chunk): RAGAS's non-LLM context metrics compare
    # whole strings (Levenshtein similarity >= 0.5), so they can only credit a passage of about a chunk's size.
    whole = EvalQuestion("whole-chunk", "Which dataset does RoBERTa train on?", ["CC-News"], [cc_chunk])
    picked = store.save_set("ragas", [whole] + [q for q in qset.questions if q.id in ("nowhere", "noref")])
    outcome = run_eval(lib, picked, EvalOptions(modes=["naive"], ragas=True, ragas_judge=True), store=store)
    assert outcome.run.status == DONE
    assert outcome.judge_note.startswith("RAGAS LLM metrics skipped: no LLM is configured")
    assert outcome.run.message == outcome.judge_note  # the page shows why the judged metrics are missing
    scores = {r.question_id: r.scores for r in store.results(outcome.run.id)}
    assert set(scores) == {"whole-chunk", "nowhere", "noref"}
    for qid, per in scores.items():
        assert set(METRIC_NAMES_NON_LLM) <= set(per), qid
        assert not set(METRIC_NAMES_LLM) & set(per), qid  # no judge: not even as None
        assert all(0.0 <= per[n].value <= 1.0 for n in METRIC_NAMES_NON_LLM if per[n].value is not None)
    assert scores["whole-chunk"]["non_llm_context_recall"].value == 1.0  # the chunk was retrieved
    assert scores["whole-chunk"]["recall@10"].value == 1.0
    assert scores["nowhere"]["non_llm_context_recall"].value == 0.0  # in no paper
    # The extractive answer quotes the CC-News sentence: some overlap with "CC-News"; none with "512".
    assert scores["whole-chunk"]["rouge"].value > 0 and scores["nowhere"]["rouge"].value == 0.0
    # No reference answer or passage: nothing to compare with, said as such rather than scored 0.
    assert all(scores["noref"][n].value is None and scores["noref"][n].error for n in METRIC_NAMES_NON_LLM)
    summary = summarise(store.results(outcome.run.id))
    assert (summary["naive"]["non_llm_context_recall"].n, summary["naive"]["non_llm_context_recall"].missing) == (2, 1)
    assert metric_order(summary)[-1] == "seconds" and "rouge" in metric_order(summary)


def test_run_eval_refuses_no_modes(full_run):
    lib, store, qset, _, _ = full_run
    before = len(store.runs())
    with pytest.raises(ValueError, match="choose at least one mode"):
        run_eval(lib, qset, EvalOptions(modes=[], **NO_RAGAS), store=store)
    assert len(store.runs()) == before  # no empty run left behind


@pytest.mark.parametrize("bad, message", [
    (dict(k=0), "k (of Recall@k, complete@k, NDCG@k) must be at least 1 (got 0)"),
    (dict(k=-3), "k (of Recall@k, complete@k, NDCG@k) must be at least 1 (got -3)"),
    (dict(limit=-1), "the question limit cannot be negative (got -1); 0 asks every question"),
], ids=["k=0", "k<0", "limit<0"])
def test_run_eval_refuses_a_k_or_limit_that_means_nothing_before_creating_a_run(full_run, bad, message):
    # k = 0 made NDCG divide by zero after the run was created (left "failed"); limit = -1 sliced the
    # questions to all but the last, silently.
    lib, store, qset, _, _ = full_run
    small = store.save_set("bad options", qset.questions[:2])
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        run_eval(lib, small, EvalOptions(modes=["naive"], **bad, **NO_RAGAS), store=store)
    assert store.runs(small.id) == []
