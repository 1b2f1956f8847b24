"""The Evaluate page through AppTest over a real workspace (builtin parser, Chroma, SQLite, the embedding model,
the LLM-free graph): a run started from the page goes on in the background, its progress shows, it can be
cancelled and resumed, and its per-mode table, charts and drill-down are drawn from what was really scored.

Every test saves its own question set (and, for the pairwise judge, makes its own run), so any one of them can run
alone or in any order."""
from __future__ import annotations

import json
import time

import pytest

from core.eval.report import run_name
from core.eval.runner import EvalOptions, run_eval
from core.library import open_library
from core.schema.eval import EvalQuestion
from core.store.base import EvalStore
from tests.eval.test_eval_ragas import _first_user
from tests.eval.test_eval_ragas import judge as ragas_judge
from tests.graph_papers import fast_workspace, make_bert_pdf, make_electra_pdf, make_roberta_pdf
from tests.openai_server import OpenAIReplayServer, Reply
from tests.pages.app_helpers import run_app, texts
from tests.presentation.explorer_helpers import ingest

QUESTIONS = [
    EvalQuestion("mnli", "What accuracy does BERT reach on MultiNLI?", ["86.7"],
                 ["BERT reaches an accuracy of 86.7 on MultiNLI and improves the GLUE score by seven points."]),
    EvalQuestion("corpus", "Which dataset is BERT pre-trained on?", ["the BooksCorpus dataset"],
                 ["BERT is pre-trained with a masked language model objective on the BooksCorpus dataset."]),
    EvalQuestion("absent", "Which telescope observed the comet?", ["Hubble"],
                 ["The Hubble telescope observed the comet in 1994."]),  # evidence that is in no paper
    EvalQuestion("noref", "What does RoBERTa change in BERT's pre-training?", []),  # no reference at all
]


@pytest.fixture(scope="module")
def eval_ws(tmp_path_factory):
    folder = tmp_path_factory.mktemp("eval-pdfs")
    root = tmp_path_factory.mktemp("eval-app") / "ws"
    lib = open_library(fast_workspace(root))
    # ELECTRA's paper is a distractor (it reports its own MultiNLI accuracy and pre-training datasets): with it
    # the papers have more chunks than a run keeps (10), so recall and rank are earned, not given.
    ingest(lib, make_bert_pdf(folder), make_roberta_pdf(folder), make_electra_pdf(folder))
    return root, lib


def _wait(store: EvalStore, run_id: str, status: str = "done", timeout: float = 180):
    deadline = time.time() + timeout
    while time.time() < deadline:
        run = store.get_run(run_id)
        if run.status == status:
            return run
        time.sleep(0.3)
    raise AssertionError(f"run {run_id} is {store.get_run(run_id).status}, not {status}, after {timeout} s")


def results_picker(at):
    """The Results tab's run picker (its key names its labels: pages/widgets/eval_view.results_picker_key)."""
    return next(s for s in at.selectbox if str(s.key).startswith("eval_results_run_"))


def _show(at, store: EvalStore, run_id: str):
    """Pick the run on the Results tab, as a user comparing runs would."""
    at.run()
    results_picker(at).set_value(store.get_run(run_id))
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def _start(at, modes, qset):
    at.selectbox(key="eval_run_set").set_value(qset)  # the test's own set, whatever other tests saved
    at.multiselect(key="eval_run_modes").set_value(modes)
    next(b for b in at.button if b.label == "Start the run").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at.session_state["eval_run_id"]


@pytest.mark.slow
def test_a_run_started_on_the_page_scores_every_mode_and_shows_the_table(monkeypatch, eval_ws):
    root, lib = eval_ws
    store = lib.eval_store
    qset = store.save_set("bert questions", QUESTIONS, source="test")
    at = run_app(monkeypatch, root, "pages/evaluate.py")
    assert "No LLM is set" in texts(at.info)
    run_id = _start(at, ["naive", "mix"], qset)
    run = _wait(store, run_id)
    assert (run.done, run.total) == (8, 8)
    _show(at, store, run_id)

    table = next(df.value for df in at.dataframe if "recall@10" in getattr(df.value, "columns", []))
    assert list(table.index) == ["naive", "mix"]
    # Both found questions have their evidence in the top 10 of both modes, the absent one never: 2 of 3. Each
    # found passage is ranked first (reciprocal rank 1), above ELECTRA's near misses, so MRR is 2/3 too.
    chunks = sum(len(lib.chunks.by_doc(d.id)) for d in lib.documents.list())
    assert {len(r.retrieved_chunk_ids) for r in store.results(run_id)} == {10} and chunks > 10
    assert table.loc["naive", "recall@10"] == pytest.approx(2 / 3)
    assert table.loc["mix", "complete@10"] == pytest.approx(2 / 3)
    assert table.loc["naive", "mrr"] == pytest.approx(2 / 3) and table.loc["mix", "mrr"] == pytest.approx(2 / 3)
    assert {"em", "f1", "mrr", "ndcg@10", "evidence_in_context", "bleu", "rouge", "string_similarity",
            "non_llm_context_recall", "seconds"} <= set(table.columns)
    assert "faithfulness" not in table.columns  # no judge: the judged metrics are absent, never 0
    # The question without a reference is left out of EM's mean and said so.
    assert "em: 1 of 4" in texts(at.caption).replace("\\", "")
    # Drill-down: the first question's answers per mode, with their scores and contexts.
    assert "What accuracy does BERT reach on MultiNLI?" in texts(at.markdown)
    assert any(e.label.startswith("Contexts (") for e in at.expander)
    assert len(at.get("download_button")) >= 2  # CSV and JSON of the run

    # The leaderboard lists the run once per mode.
    board = next(df.value for df in at.dataframe if "run" in getattr(df.value, "columns", [])
                 and "status" in df.value.columns)
    name = run_name(store.get_run(run_id))  # runs are named by label and time, not by their hex id
    assert run_id not in name and sorted(board[board["run"] == name]["mode"]) == ["mix", "naive"]
    # RAGAS's non-LLM context metrics see the evidence where it is in the context: never 0 by construction.
    for mode in ("naive", "mix"):
        if table.loc[mode, "evidence_in_context"] > 0:
            assert table.loc[mode, "non_llm_context_recall"] > 0 and table.loc[mode, "non_llm_context_precision"] > 0
    # The drill-down says by which rule each reference passage was found.
    assert any("rank 1 (exact)" in str(v) or "(normalised)" in str(v) for df in at.dataframe
               if "passage" in getattr(df.value, "columns", []) for v in df.value.to_numpy().ravel())


@pytest.mark.slow
def test_cancel_from_the_page_keeps_what_was_scored_and_resume_finishes(monkeypatch, eval_ws):
    root, lib = eval_ws
    store = lib.eval_store
    many = [EvalQuestion(f"q{i}", f"What does BERT report on benchmark number {i}?", ["GLUE"],
                         ["BERT obtains new state-of-the-art results on the GLUE benchmark."]) for i in range(20)]
    qset = store.save_set("twenty questions", many, source="test")
    at = run_app(monkeypatch, root, "pages/evaluate.py")
    run_id = _start(at, ["naive", "local", "global", "hybrid", "mix"], qset)
    at.run()
    name = run_name(store.get_run(run_id))  # the progress bar names the run by label and time, not its hex id
    assert any(p.proto.text.replace("\\", "").startswith(name) for p in at.get("progress"))
    at.button(key=f"eval_cancel_{run_id}").click()
    at.run()
    run = _wait(store, run_id, "cancelled")
    kept = len(store.results(run_id))
    assert 0 < kept < 100 and run.done == kept

    at.run()
    results_picker(at).set_value(run)
    at.run()
    next(b for b in at.button if b.label == "Resume this run").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    run = _wait(store, run_id)
    results = store.results(run_id)
    assert run.done == len(results) == 100  # each question × mode once: nothing scored twice
    assert len({(r.question_id, r.mode) for r in results}) == 100



def test_a_run_started_on_the_page_is_the_one_its_results_tab_shows(monkeypatch, eval_ws):
    root, lib = eval_ws
    store = lib.eval_store
    qset = store.save_set("one question", QUESTIONS[1:2], source="test")
    earlier = run_eval(lib, qset, EvalOptions(modes=["naive"], ragas=False, ragas_judge=False), store=store).run
    at = run_app(monkeypatch, root, "pages/evaluate.py")
    assert results_picker(at).value.id == earlier.id  # the newest run, shown first
    run_id = _start(at, ["naive"], qset)
    _wait(store, run_id)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = results_picker(at).value.id
    assert shown == run_id, f"the Results tab still shows run {shown}, not the run {run_id} just started"


# ---------------------------------------------------------------------------------------------- with an LLM
RAGAS_PROMPTS = ("analyze the complexity of each sentence", "judge the faithfulness of a series of statements",
                 "Generate a question for the given answer", "verify if the context was useful",
                 "classify if the statement can be attributed")
LLM_ANSWER = "BERT reaches an accuracy of 86.7 on MultiNLI [1]."


def llm_endpoint(body: dict) -> Reply:
    """One OpenAI-protocol server playing every part: query keywords, the cited answer, RAGAS's judge (the
    RAGAS tests' scripted judge, unreadable when the question holds BROKEN), the pairwise judge (always
    "Answer 1", so the two orders disagree) and question generation."""
    first = _first_user(body)
    if any(marker in first for marker in RAGAS_PROMPTS):
        return ragas_judge(body)
    text = "\n".join(str(m.get("content")) for m in body["messages"])
    if "high_level_keywords" in text:
        return Reply(json.dumps({"high_level_keywords": ["accuracy"], "low_level_keywords": ["BERT", "MultiNLI"]}))
    if "---Answer 1---" in text:
        return Reply(json.dumps({c: {"winner": "Answer 1", "explanation": "Answer 1 says more."}
                                 for c in ("comprehensiveness", "diversity", "empowerment", "overall")}))
    if '{"question": "...", "answer": "..."}' in text:
        return Reply(json.dumps({"question": "Which benchmark does BERT improve by seven points?",
                                 "answer": "GLUE"}))
    # Graph modes' contexts list entities: their answer differs, so a pair's two orders are two prompts.
    return Reply(LLM_ANSWER + (" It is a Transformer encoder [1]." if "Knowledge graph entities" in text else ""))


@pytest.fixture(scope="module")
def llm_ws(tmp_path_factory):
    with OpenAIReplayServer(default=llm_endpoint, model="replay-judge") as server:
        folder = tmp_path_factory.mktemp("eval-llm-pdfs")
        root = tmp_path_factory.mktemp("eval-llm-app") / "ws"
        ws = fast_workspace(root, provider="openai", base_url=server.url, model=server.model, max_retries=0,
                            concurrency=2)
        settings = ws.settings(apply_environment=False)
        settings.graph.extractor = "spacy"  # this endpoint answers questions; the graph needs no LLM here
        ws.save_settings(settings)
        lib = open_library(ws)
        ingest(lib, make_bert_pdf(folder))
        yield root, lib, server


@pytest.mark.slow
def test_with_an_llm_the_judged_metrics_show_and_an_unreadable_verdict_is_missing_not_zero(monkeypatch, llm_ws):
    root, lib, server = llm_ws
    store = lib.eval_store
    qset = store.save_set("judged", [QUESTIONS[0], EvalQuestion("broken", "BROKEN: what does BERT reach on MultiNLI?",
                                                                ["86.7"], QUESTIONS[0].evidence)], source="test")
    at = run_app(monkeypatch, root, "pages/evaluate.py")
    assert "RAGAS judged metrics use it as the judge" in texts(at.caption)
    at.radio(key="eval_run_style").set_value("short")
    before = len(server.chat_requests)
    run_id = _start(at, ["naive", "mix"], qset)
    _wait(store, run_id)
    _show(at, store, run_id)
    table = next(df.value for df in at.dataframe if "faithfulness" in getattr(df.value, "columns", []))
    # The scripted judge: 2 statements, the first supported → faithfulness 0.5 for both questions. Context
    # recall: 3 reference statements, 2 attributed → 2/3 for the readable question; for BROKEN the reply has the
    # wrong fields, so its value is missing and the mean is 2/3, not (2/3 + 0) / 2.
    assert table.loc["naive", "faithfulness"] == pytest.approx(0.5)
    assert table.loc["mix", "context_recall"] == pytest.approx(2 / 3)
    assert "context_recall: 1 of 2" in texts(at.caption).replace("\\", "")
    assert table.loc["naive", "em"] == 0.0 and table.loc["naive", "f1"] > 0.2  # "…86.7…" against "86.7"
    results = {(r.question_id, r.mode): r for r in store.results(run_id)}
    assert results[("broken", "naive")].scores["context_recall"].value is None
    assert "could not be read" in results[("broken", "naive")].scores["context_recall"].error
    assert results[("mnli", "naive")].answer == LLM_ANSWER
    answer_requests = [r for r in server.chat_requests[before:] if r.get("stream")]
    assert answer_requests and all("the shortest complete answer" in r["messages"][0]["content"]
                                   for r in answer_requests)  # the run's short answer style reached the LLM
    assert results[("mnli", "mix")].answer.startswith(LLM_ANSWER + " It is")


@pytest.fixture
def answered_run(llm_ws):
    """A finished naive + mix run of two questions answered by the LLM, for the pairwise judge (RAGAS off: the
    judge compares answers only). Paragraph answers, so no other test's (short) answers are taken from the cache."""
    _, lib, _ = llm_ws
    store = lib.eval_store
    qset = store.save_set("pairwise", QUESTIONS[:2], source="test")
    outcome = run_eval(lib, qset, EvalOptions(modes=["naive", "mix"], ragas=False, ragas_judge=False), store=store)
    assert outcome.run.status == "done" and len(outcome.results) == 4
    return outcome.run


def test_the_pairwise_judge_from_the_page_reports_order_disagreements(monkeypatch, llm_ws, answered_run):
    root, lib, server = llm_ws
    store = lib.eval_store
    run = answered_run
    at = run_app(monkeypatch, root, "pages/evaluate.py")
    at.selectbox(key="eval_pair_run").set_value(run)
    at.selectbox(key="eval_pair_a").set_value("naive")
    at.selectbox(key="eval_pair_b").set_value("mix")
    at.run()
    before = len(server.chat_requests)
    at.button(key="eval_pair_go").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    judged = [r for r in server.chat_requests[before:] if "---Answer 1---" in json.dumps(r)]
    assert len(judged) == 4  # two questions, each judged in both orders
    (saved,) = store.pairwise(run.id)
    assert saved["wins"]["overall"]["tie"] == 2 and saved["disagreements"] == 8
    assert "8 verdict(s) changed when the answers were swapped" in texts(at.caption)


def test_generated_questions_are_reviewed_then_saved_as_a_set(monkeypatch, llm_ws):
    root, lib, server = llm_ws
    at = run_app(monkeypatch, root, "pages/evaluate.py")
    at.number_input(key="eval_gen_n").set_value(2)
    at.button(key="eval_generate").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["eval_generated"], "the generated questions wait for review"
    at.text_input(key="eval_gen_name").input("from passages")
    at.button(key="eval_gen_save").click()
    at.run()
    saved = next(s for s in lib.eval_store.sets() if s.name == "from passages")
    assert saved.questions and all(q.answers == ["GLUE"] and q.evidence for q in saved.questions)
