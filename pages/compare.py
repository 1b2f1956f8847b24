"""Compare: one question through several modes at once — a summary table first (each mode's answer in a few
words, its confidence, latency, LLM calls, tokens, sources), then per mode the answer, what it cost and what it
retrieved, with what no other mode found marked: side by side for up to three modes, one tab per mode beyond that."""
from __future__ import annotations

import streamlit as st

from core.library import Library
from core.presentation import compare as summary
from core.query.engine import compare, unique_to_each
from core.query.records import QueryResult
from core.query.routes import available_modes, default_modes
from core.text.safe_markdown import md_escape
from pages.widgets import auth, state
from pages.widgets import query_view as qv


@st.fragment
def compare_and_show(lib: Library, ready: dict[str, str]) -> None:
    """The form and the columns: comparing reruns them alone (a fragment), not the app around them."""
    auth.fragment_guard()  # signed out since (another tab): the sign-in page, never a comparison
    with st.form("compare_form"):
        question = st.text_input("Question", key="compare_question")
        available = available_modes(lib)
        modes = st.multiselect("Modes", available, default=default_modes(available), key="compare_modes")
        context_only = st.toggle("Context only (assemble, do not answer)", key="compare_context_only")
        submitted = st.form_submit_button("Compare", type="primary")
    options = qv.params_form(lib, "compare", ready)

    question = (question or "").strip()
    if submitted and question:
        with qv.query_errors("The comparison could not run"), st.spinner(f"Running {len(modes)} mode(s)…"):
            base = qv.make_params(lib, None, options, context_only)  # compare sets each mode
            st.session_state["compare_results"] = compare(lib, question, modes, base,
                                                              owner=auth.history_owner())
        st.session_state["compare_run"] = st.session_state.get("compare_run", 0) + 1

    results = st.session_state.get("compare_results")
    if results:
        show_columns(lib, results, f"compare{st.session_state.get('compare_run', 0)}")


def show_columns(lib: Library, results: dict[str, QueryResult], run: str) -> None:
    unique = unique_to_each(results)
    first = next(iter(results.values()))
    st.subheader(md_escape(first.question))
    summary_table(results)
    if summary.side_by_side(len(results)):
        places = st.columns(len(results))
    else:  # seven columns wrap words mid-way ("communit/y"): one full-width tab per mode, only the open one drawn
        places = st.tabs([str(mode) for mode in results], key=f"{run}_tabs", on_change="rerun")
    for place, (mode, result) in zip(places, results.items()):
        if getattr(place, "open", None) is False:
            continue
        with place:
            show_mode(lib, mode, result, unique[mode], run)


def summary_table(results: dict[str, QueryResult]) -> None:
    """Every mode on one row: the answer in a few words and what it cost. Cells are text (no markdown)."""
    st.dataframe(summary.summary_rows(results), hide_index=True, width="stretch", key="compare_summary",
                 column_config={
                     "mode": st.column_config.TextColumn("mode", width="small"),
                     "answer": st.column_config.TextColumn(
                         "answer", width="medium", help="The short answer, else the answer's first words"),
                     "confidence": st.column_config.TextColumn(
                         "confidence", width="small",
                         help="How sure the mode's reader is that its answer is right (– : no confidence stated)"),
                     "latency (s)": st.column_config.NumberColumn("latency (s)", format="%.2f", width="small"),
                     "LLM calls": st.column_config.NumberColumn("LLM calls", format="%d", width="small",
                                                                help="Calls made (answers from the cache apart)"),
                     "cached calls": st.column_config.NumberColumn("cached", format="%d", width="small",
                                                                   help="LLM calls answered from the cache"),
                     "tokens": st.column_config.NumberColumn("tokens", format="%d", width="small",
                                                             help="Prompt + completion tokens of the calls made"),
                     "sources": st.column_config.NumberColumn("sources", format="%d", width="small",
                                                              help="Passages in the assembled context"),
                     "cited": st.column_config.NumberColumn("cited", format="%d", width="small",
                                                            help="Sources the answer cites"),
                 })


def show_mode(lib: Library, mode: str, result: QueryResult, unique: dict, run: str) -> None:
    st.markdown(f"### {mode}")
    st.caption(f"{qv.run_notes(result)}  \n{qv.answer_note(result)}.")
    if result.error:
        st.warning(result.error)
    qv.show_answer(lib, result, key=f"compare_{mode}")
    qv.bibtex_of_cited(lib, result, f"{run}_{mode}")
    # Sources run only while open (a click reruns this fragment); inside, plain expanders.
    sources = qv.lazy_expander("Sources", f"{run}_{mode}_sources")
    if sources.open:
        with sources:
            qv.show_sources(lib, result, key=f"compare_{mode}")
    qv.show_retrieved(result, unique, limit=10)
    if result.answer is None:
        with st.expander("Context"):
            st.code(result.context.text or "(empty)", language=None, wrap_lines=True)


auth.page_guard()  # signed in (or open on loopback) before anything: see pages/widgets/auth.py
library = state.library()
st.title("Compare modes")
papers = qv.ready_papers_or_stop(library, "compare")
st.caption("The same question through each mode: a summary of every mode's answer and cost, then each mode's "
           "answer and what it retrieved. "
           + ("No reading model: keywords and answers are LLM-free." if library.reader_model() is None else
              f"Answers read by {library.reader_model().name}."))
compare_and_show(library, papers)
