"""Evaluate: question sets, runs of every mode over them, scores side by side, a leaderboard, a pairwise judge."""
from __future__ import annotations

import streamlit as st

from core.eval.questions import (
    QuestionSetError,
    parse_question_set,
    questions_from_table,
    questions_to_jsonl,
    questions_to_table,
)
from core.eval.report import leaderboard_rows
from core.eval.runner import EvalOptions
from core.query.routes import available_modes, default_modes
from core.schema.eval import RUNNING
from core.text.filenames import safe_filename
from core.text.safe_markdown import md_escape
from pages.widgets import auth, eval_llm, state
from pages.widgets import eval_view as ev

auth.page_guard()  # signed in (or open on loopback) before anything: see pages/widgets/auth.py
lib = state.library()
store = lib.eval_store
jobs = state.eval_jobs()
llm = lib.chat_model()
st.title("Evaluate")
judge_reason = ev.judge_reason(lib)
if llm is None:
    st.info("No LLM is set: answers are extractive, and the answer, retrieval and RAGAS non-LLM metrics run "
            "without an LLM. RAGAS's judged metrics, the pairwise judge and question generation need one "
            + ("(Settings page)." if auth.is_editor() else "(an editor sets one)."), icon=":material/info:")
else:
    st.caption(f"Answers by {md_escape(llm.name)}. "
               + (f"RAGAS judged metrics: {md_escape(judge_reason)}." if judge_reason else
                  "RAGAS judged metrics use it as the judge."))

# Viewers read results; question sets, runs and the judge write to the workspace and call the LLM: editors'.
editor = auth.is_editor()
if editor:
    sets_tab, run_tab, results_tab, board_tab, pair_tab = st.tabs(
        ["Question sets", "Run", "Results", "Leaderboard", "Pairwise judge"])
else:
    results_tab, board_tab = st.tabs(["Results", "Leaderboard"])
    sets = store.sets()

# ------------------------------------------------------------------------------------------------ question sets
if editor:
    with sets_tab:
        st.markdown("A question set is a JSONL, JSON or CSV file: `question`, reference `answers` (one or more), "
                    "optional `evidence` (reference passages) and `doc_id`. In CSV, separate several answers or "
                    "passages with ` | `.")
        ev.question_set_template()
        with st.form("eval_upload_form", clear_on_submit=False):
            upload = st.file_uploader("Question set", type=["jsonl", "json", "csv"], key="eval_upload")
            name = st.text_input("Name", key="eval_upload_name", placeholder="defaults to the file's name")
            submitted = st.form_submit_button("Add the question set", type="primary")
            if submitted and upload is None:
                st.warning("Choose a file first.")
            elif submitted:
                try:
                    questions = parse_question_set(upload.getvalue(), upload.name)
                except QuestionSetError as exc:
                    if exc.errors:
                        st.error(f"{md_escape(str(exc).split(': row')[0])}. Nothing was saved; fix these rows and "
                                 "upload again:")
                        st.dataframe([{"row": e.row, "problem": e.message} for e in exc.errors], hide_index=True)
                    else:
                        st.error(f"{md_escape(str(exc))}. Nothing was saved.")
                else:
                    before = {s.id for s in store.sets()}
                    saved = store.save_set(name or safe_filename(upload.name).rsplit(".", 1)[0], questions,
                                           upload.name)
                    if saved.id in before:
                        st.info(f"**{md_escape(saved.name)}** is already here with the same {len(questions)} "
                                "questions.")
                    else:
                        st.success(f"Saved **{md_escape(saved.name)}**: {len(questions)} questions.")
                    ev.reference_free_notes(questions)

        eval_llm.generation_panel(lib, store, llm)

        sets = store.sets()  # read once per rerun, after anything above may have added one
        if sets:
            chosen = st.selectbox("Review and edit a set", sets, format_func=ev.set_label, key="eval_edit_set")
            ev.reference_free_notes(chosen.questions)
            edited = st.data_editor(questions_to_table(chosen.questions), num_rows="dynamic", width="stretch",
                                    key=f"eval_editor_{chosen.id}")
            left, middle, right = st.columns(3)
            if left.button("Save the edits", key="eval_save_edits"):
                try:
                    store.update_set(chosen.id, questions_from_table(eval_llm.edited_rows(edited), chosen.name))
                    sets = store.sets()
                    st.success("Saved.")
                except QuestionSetError as exc:
                    st.error(md_escape(str(exc)))
            middle.download_button("Download as JSONL", questions_to_jsonl(chosen.questions),
                                   file_name=f"{safe_filename(chosen.name)}.jsonl", key="eval_download_set")
            if right.button("Delete this set", key="eval_delete_set"):
                store.delete_set(chosen.id)
                st.rerun()

# ------------------------------------------------------------------------------------------------ run
if editor:
    with run_tab:
        if not sets:
            st.info("Add or generate a question set first (Question sets tab).")
        else:
            ready = lib.documents.ready_papers()
            if not ready:
                st.warning("No paper is ready: the questions would be asked of an empty library. Add PDFs on the "
                           "Library page first.")
            available = available_modes(lib)
            with st.form("eval_run_form"):
                qset = st.selectbox("Question set", sets, format_func=ev.set_label, key="eval_run_set")
                modes = st.multiselect("Modes", available, default=default_modes(available), key="eval_run_modes")
                c1, c2, c3 = st.columns(3)
                k = c1.number_input("K (Recall@K, complete@K, NDCG@K)", 1, 100, 10, key="eval_run_k")
                limit = c2.number_input("Only the first N questions (0: all)", 0, 5000, 0, key="eval_run_limit")
                label = c3.text_input("Label for the leaderboard", key="eval_run_label")
                style = st.radio("LLM answer style", ["paragraphs", "short"], horizontal=True,
                                 key="eval_run_style",
                                 help="short: the answer alone (a few words), which EM and F1 against short "
                                      "reference answers can score; paragraphs: the Ask page's cited answer")
                c1, c2, c3, c4 = st.columns(4)
                use_llm = c1.toggle("Answer with the LLM", value=llm is not None, disabled=llm is None,
                                    key="eval_run_use_llm")
                ragas_on = c2.toggle("RAGAS non-LLM metrics", value=True, key="eval_run_ragas")
                judge_on = c3.toggle("RAGAS judged metrics", value=not judge_reason, disabled=bool(judge_reason),
                                     help=judge_reason or "faithfulness, answer relevancy, context precision "
                                                          "and recall, judged by the configured LLM",
                                     key="eval_run_judge")
                rerank = c4.toggle("Rerank", value=lib.settings.query.rerank, key="eval_run_rerank")
                start = st.form_submit_button("Start the run", type="primary", disabled=not ready)
            if start:
                if not modes:
                    st.error("Choose at least one mode.")
                else:
                    options = EvalOptions(modes=modes, k=int(k), use_llm=use_llm and llm is not None,
                                          ragas=ragas_on, ragas_judge=judge_on and not judge_reason, rerank=rerank,
                                          limit=int(limit), answer_style=style)
                    try:
                        # The Results tab's picker opens on it (a new run is a new picker: ev.results_picker_key).
                        st.session_state["eval_run_id"] = jobs.start(qset, options, label=label)
                        st.session_state.pop("eval_finished", None)  # the last run's "finished" note
                    except RuntimeError as exc:
                        st.error(md_escape(str(exc)))
        ev.active_runs(store, jobs)

# ------------------------------------------------------------------------------------------------ results
with results_tab:
    runs = store.runs()
    if not runs:
        st.info("No run yet: start one on the Run tab (or `python -m core eval QA.jsonl`)." if editor else
                "No run yet: runs an editor starts show here.")
    else:
        wanted = st.session_state.get("eval_run_id")
        index = next((i for i, r in enumerate(runs) if r.id == wanted), 0)
        run = st.selectbox("Run", runs, index=index, format_func=ev.run_label, key=ev.results_picker_key(runs))
        st.session_state["eval_run_id"] = run.id  # kept when the picker is drawn anew
        results, summary = ev.run_results(store, run)
        status = run.shown_status
        ev.run_status(store, run)  # follows a running run and reruns the page once it ends
        if editor and status != RUNNING and run.done < run.total:
            if st.button("Resume this run", key="eval_resume"):
                auth.require_editor()
                qset = store.get_set(run.set_id)
                if qset is None:
                    st.error("Its question set was deleted: the run cannot be resumed.")
                else:
                    jobs.start(qset, EvalOptions.from_dict(run.options), resume=run)
                    st.rerun()
        if not results:
            st.info("No answer scored yet.")
        else:
            ev.summary_table(summary, results)
            ev.metric_bars(summary)
            ev.question_scatter(results)
            ev.drill_down(next((s for s in sets if s.id == run.set_id), None), run, results)
            d1, d2, d3 = st.columns(3)
            stem = safe_filename(f"eval-{run.set_name}-{run.id}")
            csv_text, json_text = ev.run_exports(store, run)
            d1.download_button("Download CSV", csv_text, file_name=f"{stem}.csv", key="eval_csv")
            d2.download_button("Download JSON", json_text, file_name=f"{stem}.json", key="eval_json")
            if editor and status != RUNNING and d3.button("Delete this run", key="eval_delete_run"):
                auth.require_editor()
                store.delete_run(run.id)
                st.rerun()

# ------------------------------------------------------------------------------------------------ leaderboard
with board_tab:
    set_names = {None: "every set", **{s.id: s.name for s in sets}}
    chosen_set = st.selectbox("Question set", list(set_names), format_func=set_names.get, key="eval_board_set")
    rows = leaderboard_rows(store, chosen_set, summary_of=lambda r: ev.run_results(store, r)[1])
    if rows:
        ev.leaderboard(rows)
    else:
        st.info("Runs appear here as they finish questions.")

# ------------------------------------------------------------------------------------------------ pairwise
if editor:
    with pair_tab:
        st.markdown("Two modes' answers to the same questions, judged by the LLM on LightRAG's criteria "
                    "(comprehensiveness, diversity, empowerment, overall). Each pair is judged twice with the answers "
                    "swapped; when the two orders disagree the criterion is a tie, and the disagreements are counted.")
        eval_llm.pairwise_panel(store, llm)
