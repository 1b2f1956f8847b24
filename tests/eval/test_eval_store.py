"""The evaluation store: question sets, runs, results and pairwise verdicts kept, renamed, shown as interrupted
and deleted; the same set saved twice is kept once."""
from __future__ import annotations

from core.schema.eval import RUNNING, STALE_AFTER_S, EvalQuestion, QuestionResult, Score, run_to_dict
from core.store.sqlite_eval import SQLiteEvalStore


def test_store_keeps_sets_runs_and_verdicts_and_deletes_them(full_run):
    _, store, qset, _, _ = full_run
    questions = [EvalQuestion("x1", "Où est « le » corpus?", ["ici"], ["là"], "doc")]
    saved = store.save_set("  ", questions, source="hand.jsonl")
    assert saved.name == "questions"  # a blank name gets a default, not an empty label
    assert store.get_set(saved.id).questions == questions and saved.id in {s.id for s in store.sets()}
    store.update_set(saved.id, questions + [EvalQuestion("x2", "Second?", [])], name="renamed")
    again = store.get_set(saved.id)
    assert again.name == "renamed" and [q.id for q in again.questions] == ["x1", "x2"]

    run = store.create_run(again, ["naive"], {"k": 10}, total=2)
    store.save_result(run.id, QuestionResult("x1", "naive", "ici", ["ctx"], ["c:1"], {"em": Score(1.0)}, 0.1), 1)
    store.save_pairwise(run.id, "naive", "mix", {"winner": "naive", "questions": 1})
    store.rename_run(run.id, "  hand-made  ")
    assert store.get_run(run.id).label == "hand-made" and store.pairwise(run.id) == [
        {"winner": "naive", "questions": 1}]
    assert store.get_run(run.id).status == RUNNING and run_to_dict(store.get_run(run.id))["status"] == RUNNING
    # A running run nobody has written to for a while is shown as interrupted (its process is gone).
    with store.db.transaction() as conn:
        conn.execute("UPDATE eval_runs SET updated_at = updated_at - ? WHERE id = ?", (STALE_AFTER_S + 1, run.id))
    assert store.get_run(run.id).interrupted and run_to_dict(store.get_run(run.id))["status"] == "interrupted"

    store.delete_set(saved.id)  # the set goes, its run stays
    assert store.get_set(saved.id) is None and store.get_run(run.id) is not None
    store.delete_run(run.id)
    assert store.get_run(run.id) is None and store.results(run.id) == [] and store.pairwise(run.id) == []
    assert store.done_pairs(run.id) == set()
    assert store.get_set(qset.id) is not None  # other sets untouched


def test_saving_the_same_set_twice_keeps_one_set_and_a_changed_one_is_new(tmp_path):
    from core.store.sqlite_db import Database

    store = SQLiteEvalStore(Database(tmp_path / "eval.sqlite"))
    questions = [EvalQuestion("q1", "What is BERT?", ["a model"], ["BERT is a model."])]
    first = store.save_set("bert", questions, source="bert.jsonl")
    again = store.save_set("bert", [EvalQuestion("q1", "What is BERT?", ["a model"], ["BERT is a model."])])
    assert again.id == first.id and len(store.sets()) == 1  # an upload or `core eval` of the same file again
    changed = store.save_set("bert", [EvalQuestion("q1", "What is BERT?", ["an encoder"], ["BERT is a model."])])
    renamed = store.save_set("bert v2", questions)
    assert len({first.id, changed.id, renamed.id}) == 3 and len(store.sets()) == 3
