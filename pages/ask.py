"""Ask: one question, one retrieval mode, an answer whose every sentence cites paper, page and passage."""
from __future__ import annotations

import streamlit as st

from core.query.engine import ask
from core.query.history import recent
from core.query.routes import available_modes, default_mode
from core.schema.modes import modes_help
from core.text.safe_markdown import md_escape
from pages.widgets import auth, state
from pages.widgets import query_view as qv

auth.page_guard()  # signed in (or open on loopback) before anything: see pages/widgets/auth.py
lib = state.library()
st.title("Ask")
ready = qv.ready_papers_or_stop(lib)
llm_note = "no LLM is set: keywords and answers are LLM-free (extractive)" if lib.chat_model() is None else \
    f"answers are written by {lib.chat_model().name}"
st.caption(f"Ask about your {len(ready)} ready paper(s); {llm_note}.")

with st.form("ask_form"):
    question = st.text_input("Question", key="ask_question",
                             placeholder="e.g. which datasets are used to evaluate the model?")
    modes = available_modes(lib)
    mode = st.radio("Mode", modes, index=modes.index(default_mode(lib, modes)), horizontal=True, key="ask_mode",
                    captions=None, help=modes_help())
    options = qv.params_form(lib, "ask", ready)
    context_only = st.toggle("Context only (show what the model would read, do not answer)", key="ask_context_only")
    submitted = st.form_submit_button("Ask", type="primary")

question = (question or "").strip()
if question and submitted:
    answer_slot = st.empty()

    def stream(text: str) -> None:
        answer_slot.markdown(md_escape(text) + " ▌")

    with qv.query_errors("The question could not be answered"), st.spinner(f"Retrieving ({mode})…"):
        result = ask(lib, question, qv.make_params(lib, mode, options, context_only), on_token=stream)
    answer_slot.empty()
    st.session_state["ask_result"] = result

result = st.session_state.get("ask_result")
if result is not None:
    st.subheader(md_escape(result.question))
    st.caption(f"Mode **{result.mode}** · {qv.run_notes(result)}")
    if result.error:
        st.warning(result.error)
    qv.show_answer(lib, result)
    if not result.context.sources:
        st.warning("Nothing matched. Loosen the paper filter, try another mode, or check that the graph is built.")
    st.markdown("#### Sources")
    qv.show_sources(lib, result)
    with st.expander("What was retrieved"):
        qv.show_retrieved(result)
    with st.expander("The assembled context"):
        st.caption(" · ".join(f"{k}: {v} tokens" for k, v in result.context.tokens.items()))
        st.code(result.context.text or "(empty)", language=None, wrap_lines=True)

history = recent(lib, 20)
if history:
    with st.expander(f"Recent questions ({len(history)})"):
        for entry in history:
            st.markdown(f"**{md_escape(entry.question)}** · {entry.mode}  \n{md_escape(entry.summary)}")
