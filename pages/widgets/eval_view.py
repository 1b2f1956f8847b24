"""Streamlit rendering for the Evaluate page: run progress, the per-mode table and charts, the per-question
drill-down, the leaderboard, question generation and the pairwise judge. Paper text and answers are untrusted:
markdown is escaped, and tables and charts render their cells as text."""
from __future__ import annotations

import datetime as dt
import json

import altair as alt
import pandas as pd
import streamlit as st

from core.eval.questions import reference_free
from core.eval.report import paragraph_answers, results_csv, run_json, run_name
from core.eval.runner import MetricSummary, metric_order, summarise
from core.library import Library
from core.presentation.compare import side_by_side
from core.presentation.eval_help import FIELDS, example_csv, example_jsonl, metric_glossary, metric_help
from core.schema.eval import RUNNING, EvalQuestion, QuestionResult, QuestionSet, RunRecord
from core.store.base import EvalStore
from core.text.safe_markdown import md_escape
from pages.widgets import auth, state

# Metrics on a 0–1 scale share one chart; time has its own.
TIME_METRIC = "seconds"
def question_set_template() -> None:
    """An example question set to start from, in both formats, and what each field means."""
    left, right, _ = st.columns([1, 1, 2])
    left.download_button("Example set (JSONL)", example_jsonl(), file_name="example-questions.jsonl",
                         mime="application/jsonl", key="eval_example_jsonl", icon=":material/download:",
                         on_click="ignore")
    right.download_button("Example set (CSV)", example_csv(), file_name="example-questions.csv", mime="text/csv",
                          key="eval_example_csv", icon=":material/download:", on_click="ignore")
    with st.expander("The fields of a question set"):
        st.markdown("\n".join(f"- `{name}` ({need}) — {md_escape(text)}" for name, need, text in FIELDS))


def judge_reason(lib: Library) -> str:
    """Why the RAGAS judged metrics cannot run here ("" when they can)."""
    from core.eval.ragas_scores import ragas_judge_available

    return ragas_judge_available(lib)


def set_label(qset: QuestionSet) -> str:
    return f"{qset.name} — {len(qset.questions)} questions ({_when(qset.created_at)})"


def reference_free_notes(questions: list[EvalQuestion]) -> None:
    """Says which questions have no reference answer: they are kept, but only reference-free metrics apply."""
    notes = reference_free(questions)
    if not notes:
        return
    st.warning(f"{len(notes)} of {len(questions)} question(s) have no reference answer: for them only the "
               "reference-free metrics are computed (retrieval against the evidence, faithfulness, answer "
               "relevancy); EM, F1 and contains_reference are shown as missing, not 0.", icon=":material/info:")
    with st.expander(f"Questions without a reference answer ({len(notes)})"):
        st.dataframe([{"#": e.row, "question": questions[e.row - 1].id + ": " + questions[e.row - 1].question[:120]}
                      for e in notes], hide_index=True, width="stretch")


def run_label(run: RunRecord) -> str:
    return f"{run_name(run)} — {run.set_name}, {', '.join(run.modes)} · {run.shown_status}"


def results_picker_key(runs: list[RunRecord]) -> str:
    """The Results tab's run picker's key, named after its labels: a label that changes under a mounted selectbox
    (a run's status, "running" → "done") stays drawn as it was until a reload, since Streamlit keeps a keyed widget
    as it is. A new run or a new status mounts a fresh picker, which opens on the run in `eval_run_id`."""
    import hashlib

    return "eval_results_run_" + hashlib.sha256("\n".join(map(run_label, runs)).encode()).hexdigest()[:12]


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def options_text(options: dict) -> str:
    shown = {k: v for k, v in options.items()
             if k != "modes" and v is not None and v != "" and not (k == "limit" and not v)}
    return ", ".join(f"{k}={v}" for k, v in shown.items())


# ---------------------------------------------------------------------------------------------- cached run data
# Streamlit reruns the page on every click; a run's results (answers and contexts of every question × mode)
# change only while it runs, so they are read and summarised once per state of the run's row.
def _stamp(run: RunRecord) -> tuple:
    return run.updated_at, run.done, run.status


@st.cache_resource(max_entries=32, show_spinner=False)
def _loaded(_store: EvalStore, run_id: str, stamp: tuple):
    results = _store.results(run_id)
    return results, summarise(results)


def run_results(store: EvalStore, run: RunRecord) -> tuple[list[QuestionResult], dict[str, dict[str, MetricSummary]]]:
    """A run's results and their per-mode summary (shared, read-only)."""
    return _loaded(store, run.id, _stamp(run))


@st.cache_data(max_entries=8, show_spinner=False)
def _exports(_store: EvalStore, _run: RunRecord, run_id: str, stamp: tuple, verdicts: int) -> tuple[str, str]:
    results, _ = _loaded(_store, run_id, stamp)
    return results_csv(results), json.dumps(run_json(_store, _run, results), ensure_ascii=False, indent=2)


def run_exports(store: EvalStore, run: RunRecord) -> tuple[str, str]:
    """The run as CSV and JSON for the download buttons, built once per state of the run and its verdicts."""
    return _exports(store, run, run.id, _stamp(run), len(store.pairwise(run.id)))


# ---------------------------------------------------------------------------------------------- runs in progress
@st.fragment(run_every=state.POLL_SECONDS)
def active_runs(store: EvalStore, jobs) -> None:
    """Progress bars of the runs going on, with the time left and a cancel button; polls while shown."""
    auth.fragment_guard()
    running = [r for r in store.runs() if r.status == RUNNING]
    for run_id in st.session_state.get("eval_finished", []):
        ended = store.get_run(run_id)
        if ended is not None:
            st.success(f"**{md_escape(run_name(ended))}** {ended.shown_status}: {ended.done} of {ended.total} "
                       "answers scored. Its scores are on the **Results** tab, which now opens on this run.",
                       icon=":material/arrow_forward:")
    was_running = st.session_state.get("eval_was_running", set())
    now_running = {r.id for r in running if not r.interrupted}
    if was_running - now_running:
        st.session_state["eval_was_running"] = now_running
        # A run just ended: the Run tab says where its scores are, and the Results tab opens on it.
        st.session_state["eval_finished"] = sorted(was_running - now_running)
        st.session_state["eval_run_id"] = sorted(was_running - now_running)[-1]
        st.rerun(scope="app")  # refresh its results and the leaderboard
    st.session_state["eval_was_running"] = now_running
    for run in running:
        if run.interrupted:
            st.warning(f"Run {md_escape(run_label(run))} stopped without finishing (the app or the process "
                       f"running it ended): resume it from the Results tab.")
            continue
        progress = jobs.progress(run.id)
        eta = progress.eta_s if progress else _eta_from_row(run)
        eta_text = f" · about {_duration(eta)} left" if eta is not None else " · estimating time left…"
        st.progress(run.done / run.total if run.total else 0.0,
                    text=f"{md_escape(run_name(run))}: {run.done} of {run.total} answers{eta_text}")
        if run.message:
            st.caption(md_escape(run.message))
        if run.cancel_requested:
            st.caption("Cancelling after the question in hand…")
        elif st.button("Cancel", key=f"eval_cancel_{run.id}"):
            jobs.cancel(run.id)
            st.rerun(scope="fragment")


def run_status(store: EvalStore, run: RunRecord) -> None:
    """The Results tab's line about the run it shows: answers scored, status, message, options. While the run is
    running it is redrawn every POLL_SECONDS (its count moves), and once the run has ended — here, in the CLI or in
    another session — the page reruns, so its scores, buttons and the leaderboard follow without a reload. It polls
    for every reader, viewers included (the Run tab's progress, which also reruns the page, is an editor's)."""
    running = run.shown_status == RUNNING
    st.fragment(_run_status_line, run_every=state.POLL_SECONDS if running else None)(store, run.id, running)


def _run_status_line(store: EvalStore, run_id: str, was_running: bool) -> None:
    auth.fragment_guard()
    run = store.get_run(run_id)
    if run is None:
        st.caption("This run was deleted.")
        return
    if was_running and run.shown_status != RUNNING:
        st.session_state["eval_run_id"] = run.id  # the picker, drawn anew with the run's new label, opens on it
        st.rerun(scope="app")
    st.caption(f"{run.done} of {run.total} answers scored · {run.shown_status}"
               + (f" · {md_escape(run.message)}" if run.message else "")
               + f" · options: {md_escape(options_text(run.options))}")


def _eta_from_row(run: RunRecord) -> float | None:
    if not run.done:
        return None
    return (run.updated_at - run.created_at) / run.done * (run.total - run.done)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# ---------------------------------------------------------------------------------------------- summary
def summary_frame(summary: dict[str, dict[str, MetricSummary]]) -> pd.DataFrame:
    order = metric_order(summary)
    rows = []
    for mode, per in summary.items():
        rows.append({"mode": mode, **{name: per[name].mean if name in per else None for name in order}})
    return pd.DataFrame(rows).set_index("mode")


def summary_table(summary: dict[str, dict[str, MetricSummary]],
                  results: list[QuestionResult] | None = None) -> None:
    st.subheader("Per mode")
    frame = summary_frame(summary)
    config = {name: st.column_config.NumberColumn(name, help=metric_help(name),
                                                  format="%.2f s" if name == TIME_METRIC else "%.3f",
                                                  width="small")
              for name in frame.columns}
    st.dataframe(frame, column_config=config, width="stretch")
    metric_explanations(list(frame.columns))
    paragraphs = paragraph_answers(results or [])
    if paragraphs:
        st.warning("EM and F1 were computed on paragraph answers (no short answer) for "
                   + ", ".join(f"{md_escape(mode)}: {n}" for mode, n in sorted(paragraphs.items()))
                   + ". A right answer written as a paragraph scores near 0 on them: read **contains_reference**, "
                     "or run with the *short* answer style.", icon=":material/warning:")
    gaps = sorted({f"{name}: {s.missing} of {s.n + s.missing}" for per in summary.values()
                   for name, s in per.items() if s.missing})
    if gaps:
        st.caption("Not computed for some answers (no reference, or a judge reply that could not be read; those "
                   "are left out of the mean, never counted as 0): " + md_escape("; ".join(gaps)))


def metric_explanations(names: list[str]) -> None:
    """What each metric of the table measures, one line each, folded under it."""
    with st.expander("What the metrics mean", icon=":material/help:"):
        st.markdown("\n".join(f"- **{md_escape(name)}** — {md_escape(text)}" for name, text in metric_glossary(names)))
        st.caption("Every metric is averaged over the questions it applies to; a question without the reference it "
                   "needs (an answer, evidence passages) is left out of that metric's mean, never counted as 0.")


def metric_bars(summary: dict[str, dict[str, MetricSummary]]) -> None:
    long = [{"mode": mode, "metric": name, "value": s.mean} for mode, per in summary.items()
            for name, s in per.items() if s.mean is not None and name != TIME_METRIC]
    if not long:
        return
    frame = pd.DataFrame(long)
    order = [n for n in metric_order(summary) if n != TIME_METRIC]
    chart = alt.Chart(frame).mark_bar().encode(
        x=alt.X("metric:N", sort=order, title=None), xOffset="mode:N",
        y=alt.Y("value:Q", scale=alt.Scale(domain=[0, 1]), title="mean"),
        color=alt.Color("mode:N"), tooltip=["mode", "metric", alt.Tooltip("value:Q", format=".3f")])
    st.altair_chart(chart, width="stretch")


def question_scatter(results: list[QuestionResult]) -> None:
    """Per question and mode, one metric against another: e.g. does the answer fail where retrieval failed?"""
    names = sorted({n for r in results for n, s in r.scores.items() if s.value is not None})
    if len(names) < 2:
        return
    st.subheader("Per question")
    c1, c2 = st.columns(2)
    default_x = next((n for n in ("evidence_in_context", "recall@10") if n in names), names[0])
    default_y = next((n for n in ("f1", "faithfulness", "string_similarity") if n in names and n != default_x),
                     names[-1])
    x = c1.selectbox("x", names, index=names.index(default_x), key="eval_scatter_x")
    y = c2.selectbox("y", names, index=names.index(default_y), key="eval_scatter_y")
    rows = [{"question": r.question_id, "mode": r.mode, x: r.scores[x].value, y: r.scores[y].value}
            for r in results if x in r.scores and y in r.scores
            and r.scores[x].value is not None and r.scores[y].value is not None]
    if not rows:
        st.caption("No question has both metrics.")
        return
    chart = alt.Chart(pd.DataFrame(rows)).mark_circle(size=70, opacity=0.7).encode(
        x=alt.X(f"{x}:Q", title=x), y=alt.Y(f"{y}:Q", title=y), color="mode:N",
        tooltip=["question", "mode", alt.Tooltip(f"{x}:Q", format=".3f"), alt.Tooltip(f"{y}:Q", format=".3f")])
    st.altair_chart(chart, width="stretch")


def drill_down(qset: QuestionSet | None, run: RunRecord, results: list[QuestionResult]) -> None:
    st.subheader("One question, every mode")
    questions = {q.id: q for q in qset.questions} if qset else {}
    ids = list(dict.fromkeys(r.question_id for r in results))
    chosen = st.selectbox("Question", ids, key=f"eval_drill_{run.id}",
                          format_func=lambda i: f"{i}: {questions[i].question[:90]}" if i in questions else i)
    question = questions.get(chosen)
    if question:
        st.markdown(f"**{md_escape(question.question)}**")
        if question.answers:
            st.caption("Reference: " + md_escape(" | ".join(question.answers)))
        if question.evidence:
            with st.expander(f"Reference passages ({len(question.evidence)})"):
                for passage in question.evidence:
                    st.markdown(f"> {md_escape(passage)}")
    per_mode = [r for r in results if r.question_id == chosen]
    # As on the Compare page: side by side for a few modes, a tab each beyond (seven columns wrap words mid-way).
    places = (st.columns(len(per_mode)) if side_by_side(len(per_mode)) else
              st.tabs([r.mode for r in per_mode]))
    for column, result in zip(places, per_mode):
        with column:
            st.markdown(f"#### {md_escape(result.mode)}")
            if result.error:
                st.warning(md_escape(result.error))
            if result.short_answer:
                st.markdown(f"**{md_escape(result.short_answer)}**")
            st.markdown(md_escape(result.answer) or "_(no answer)_")
            st.caption(f"{result.seconds:.2f} s · {result.llm_calls} LLM call(s)"
                       + (f" · LLM-free: {', '.join(result.llm_free)}" if result.llm_free else ""))
            with st.expander(f"Contexts ({len(result.contexts)})"):
                for n, text in enumerate(result.contexts, start=1):
                    st.markdown(f"**[{n}]** {md_escape(text)}")
    _scores_table(per_mode)
    if question and question.evidence:
        _evidence_table(question.evidence, per_mode)


def _scores_table(per_mode: list[QuestionResult]) -> None:
    """One row per metric, one value column per mode, and why a value is missing: full width, so no value column
    is clipped however many modes there are."""
    names = sorted({n for r in per_mode for n in r.scores}, key=_metric_key)
    rows = []
    for name in names:
        row: dict = {"metric": name}
        why = []
        for r in per_mode:
            score = r.scores.get(name)
            row[r.mode] = score.value if score else None
            if score and score.error:
                why.append(f"{r.mode}: {score.error}")
        row["why missing"] = "; ".join(dict.fromkeys(why))
        rows.append(row)
    config = {"metric": st.column_config.TextColumn("metric", width="medium"),
              "why missing": st.column_config.TextColumn("why missing", width="large"),
              **{r.mode: st.column_config.NumberColumn(r.mode, format="%.3f", width="small") for r in per_mode}}
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", column_config=config)


def _metric_key(name: str):
    return metric_order({"": {name: None}}).index(name), name


def _evidence_table(evidence: list[str], per_mode: list[QuestionResult]) -> None:
    """How each reference passage was found, per mode: its rank in the ranking and the rule that matched
    (exact, normalised, 90% tokens in order), and whether the assembled context holds it."""
    rows = []
    for i, passage in enumerate(evidence):
        row: dict = {"passage": passage[:160] + ("…" if len(passage) > 160 else "")}
        for r in per_mode:
            match = r.evidence_matches[i] if i < len(r.evidence_matches) else None
            if match is None:
                row[r.mode] = "—"
                continue
            rank = match.get("retrieved")
            found = f"rank {rank + 1} ({match.get('retrieved_rule')})" if rank is not None else "not retrieved"
            context = match.get("context_rule")
            row[r.mode] = found + (f" · in context ({context})" if context else " · not in context")
        rows.append(row)
    st.caption("Reference passages: where each mode found them, and by which rule (exact; normalised: quotes, "
               "dashes, ligatures, hyphenation, case; 90% tokens in order: a fuzzy fallback).")
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={"passage": st.column_config.TextColumn("passage", width="large"),
                                **{r.mode: st.column_config.TextColumn(r.mode, width="medium") for r in per_mode}})


def leaderboard(rows: list[dict]) -> None:
    frame = pd.DataFrame(rows)
    metrics = [c for c in frame.columns if c not in ("run", "run_id", "set", "status", "mode", "questions")]
    frame = frame.drop(columns=["run_id"])
    sort_by = st.selectbox("Sort by", metrics, index=metrics.index("f1") if "f1" in metrics else 0,
                           key="eval_board_sort")
    frame = frame.sort_values(sort_by, ascending=sort_by == TIME_METRIC, na_position="last")
    # "Best" means something only where the values differ: a column of zeros (or of one value) has no best.
    ranked = [m for m in metrics if m != TIME_METRIC and frame[m].dropna().nunique() > 1]
    st.dataframe(frame.style.highlight_max(subset=ranked, color="#d4f4dd").format(precision=3, na_rep="—"),
                 hide_index=True, width="stretch",
                 column_config={"run": st.column_config.TextColumn("run", width="medium"),
                                **{m: st.column_config.NumberColumn(m, width="small") for m in metrics}})
    if len(ranked) < len([m for m in metrics if m != TIME_METRIC]):
        st.caption("Columns where every run scores the same are not highlighted: they have no best.")
