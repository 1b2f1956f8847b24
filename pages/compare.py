"""Compare: one question through several modes at once, one column per mode — the answer, what it cost, and
what it retrieved, with what no other mode found marked."""
from __future__ import annotations

import streamlit as st

from core.query.engine import compare, unique_to_each
from core.query.routes import available_modes, default_modes
from core.text.safe_markdown import md_escape
from pages.widgets import auth, state
from pages.widgets import query_view as qv

auth.page_guard()  # signed in (or open on loopback) before anything: see pages/widgets/auth.py
lib = state.library()
st.title("Compare modes")
ready = qv.ready_papers_or_stop(lib)
available = available_modes(lib)
st.caption("The same question through each mode, run side by side. "
           + ("No LLM is set: keywords and answers are LLM-free." if lib.chat_model() is None else
              f"Answers by {lib.chat_model().name}."))

with st.form("compare_form"):
    question = st.text_input("Question", key="compare_question")
    modes = st.multiselect("Modes", available, default=default_modes(available), key="compare_modes")
    options = qv.params_form(lib, "compare", ready)
    context_only = st.toggle("Context only (assemble, do not answer)", key="compare_context_only")
    submitted = st.form_submit_button("Compare", type="primary")

question = (question or "").strip()
if submitted and question:
    with qv.query_errors("The comparison could not run"), st.spinner(f"Running {len(modes)} mode(s)…"):
        base = qv.make_params(lib, None, options, context_only)  # compare sets each mode
        st.session_state["compare_results"] = compare(lib, question, modes, base)

results = st.session_state.get("compare_results")
if results:
    unique = unique_to_each(results)
    first = next(iter(results.values()))
    st.subheader(md_escape(first.question))
    columns = st.columns(len(results))
    for column, (mode, result) in zip(columns, results.items()):
        with column:
            st.markdown(f"### {mode}")
            st.caption(qv.run_notes(result))
            if result.error:
                st.warning(result.error)
            qv.show_answer(lib, result, key=f"compare_{mode}")
            with st.expander("Sources", expanded=False):
                qv.show_sources(lib, result, page_crops=False)
            qv.show_retrieved(result, unique[mode], limit=10)
            if result.answer is None:
                with st.expander("Context"):
                    st.code(result.context.text or "(empty)", language=None, wrap_lines=True)
