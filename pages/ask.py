"""Ask: one question, one retrieval mode, an answer whose every sentence cites paper, page and passage.

The question form and the answer are one fragment: asking reruns them alone, not the app around them (sidebar,
navigation, library counts). What a researcher opens on demand (sources other than the cited ones, what was
retrieved, the assembled context, recent questions, the retrieval options) runs only while open. With eight
researchers asking at once on two cores, the rerun and the browser's layout of what it sends cost more than the
answer (bench/load_ask.py).
"""
from __future__ import annotations

from dataclasses import replace

import streamlit as st

from core.library import Library
from core.models.llm.discovery import find_local_llm
from core.query.engine import ask
from core.query.history import UNKNOWN_OWNER, recent
from core.query.reading.extractive import NOT_DISCUSSED
from core.query.records import QueryResult
from core.query.routes import available_modes, default_mode
from core.schema.modes import modes_help
from core.text.safe_markdown import md_escape
from pages.widgets import auth, state
from pages.widgets import query_view as qv

HISTORY_SHOWN = 20
UNOWNED_NOTE = "asked before histories were kept per account"


@st.cache_data(ttl=120, show_spinner=False)
def local_llm():
    """A local OpenAI-compatible server to recommend (loopback only; probed at most every two minutes)."""
    return find_local_llm()


@st.fragment
def ask_and_answer(lib: Library, ready: dict[str, str]) -> None:
    auth.fragment_guard()  # asking reruns this alone: signed out since (another tab), it shows the sign-in page
    with st.form("ask_form"):
        question = st.text_input("Question", key="ask_question",
                                 placeholder="e.g. which datasets are used to evaluate the model?")
        modes = available_modes(lib)
        mode = st.radio("Mode", modes, index=modes.index(default_mode(lib, modes)), horizontal=True,
                        key="ask_mode", captions=None, help=modes_help())
        context_only = st.toggle("Context only (show what the model would read, do not answer)",
                                 key="ask_context_only")
        submitted = st.form_submit_button("Ask", type="primary")
    options = qv.params_form(lib, "ask", ready)

    question = (question or "").strip()
    if question and submitted:
        # Streamed only when a model writes the answer: an extractive one arrives whole and is drawn below; a slot
        # that shows it and is cleared right after would be three more messages to the browser per answer.
        reader = lib.reader_model() if options["use_llm"] else None
        writes = reader is not None or (options["use_llm"] and options["vlm_images"])
        answer_slot = st.empty() if writes and not context_only else None

        def stream(text: str) -> None:
            # select sends the extractive answer first; the model's reply replaces it when it arrives
            who = md_escape(reader.name) if reader is not None else "the model"
            answer_slot.markdown(f":gray[{who} is reading the passages; meanwhile, the extractive answer:]\n\n"
                                 + md_escape(text) + " ▌")

        with qv.query_errors("The question could not be answered"), st.spinner(f"Retrieving ({mode})…"):
            result = ask(lib, question, replace(qv.make_params(lib, mode, options, context_only), preview=True),
                         on_token=stream if answer_slot is not None else None, owner=auth.history_owner())
        if answer_slot is not None:
            answer_slot.empty()
        st.session_state["ask_result"] = result
        # A new answer gets new keys for its open-on-demand parts: each starts from its own defaults (the cited
        # sources open, the rest closed) instead of inheriting the previous answer's.
        st.session_state["ask_run"] = st.session_state.get("ask_run", 0) + 1

    result = st.session_state.get("ask_result")
    if result is not None:
        show_result(lib, result, f"ask{st.session_state.get('ask_run', 0)}")
    show_history(lib)


def show_result(lib: Library, result: QueryResult, run: str) -> None:
    st.subheader(md_escape(result.question))
    st.caption(f"Mode **{result.mode}** · {qv.run_notes(result)}  \n{qv.answer_note(result)}.")
    if result.error:
        st.warning(result.error)
    qv.show_answer(lib, result)
    qv.bibtex_of_cited(lib, result, run)
    if not result.context.sources:
        st.warning("Nothing matched. Loosen the paper filter, try another mode, or check that the graph is built.")
    unrelated = result.answer is not None and any(s.text == NOT_DISCUSSED for s in result.answer.sentences)
    off = result.answer is not None and result.answer.off_the_passages
    if unrelated or off:  # what was retrieved is not offered as if it were evidence
        label = "none says what the answer says" if off else "none is about the question"
        box = qv.lazy_expander(f"Passages retrieved ({label})", f"{run}_unrelated")
        if box.open:
            with box:
                qv.show_sources(lib, result, lazy_key=run)
    else:
        st.markdown("#### Sources")
        qv.show_sources(lib, result, lazy_key=run)
    retrieved = qv.lazy_expander("What was retrieved", f"{run}_retrieved")
    if retrieved.open:
        with retrieved:
            qv.show_retrieved(result)
    context = qv.lazy_expander("The assembled context", f"{run}_context", expanded=result.answer is None)
    if context.open:
        with context:
            st.caption(" · ".join(f"{k}: {v} tokens" for k, v in result.context.tokens.items()))
            st.code(result.context.text or "(empty)", language=None, wrap_lines=True)


def reader_note(lib: Library) -> str:
    """Who reads the answers, as the settings stand (the answer itself names the reader that answered)."""
    model, reader = lib.reader_model(), lib.settings.query.reader
    if model is None or reader == "extractive":
        return "answers are extractive (LLM-free): the learned reader states the sentence that answers, or abstains"
    how = {"write": "writes", "select": "chooses"}.get(reader, "chooses (writes, for explain questions, when fast)")
    return f"{md_escape(model.name)} reads the passages and {how} the answer's evidence"


def show_history(lib: Library) -> None:
    """The reader's own recent questions in this workspace (an editor's list adds those kept before histories had
    owners, marked), read only while the expander is open, as one block."""
    box = qv.lazy_expander("Recent questions", "ask_history")
    if not box.open:
        return
    owner = auth.history_owner()
    history = recent(lib, owner, HISTORY_SHOWN, with_unowned=auth.is_editor()) if owner else []
    with box:
        if not history:
            st.caption("No questions yet.")
            return
        st.markdown("\n\n".join(f"**{md_escape(e.question)}** · {e.mode}"
                                  f"{' · ' + UNOWNED_NOTE if e.owner == UNKNOWN_OWNER else ''}"
                                  f"  \n{md_escape(e.summary)}" for e in history))


auth.page_guard()  # signed in (or open on loopback) before anything: see pages/widgets/auth.py
library = state.library()
st.title("Ask")
papers = qv.ready_papers_or_stop(library, "ask")
llm_note = reader_note(library)
st.caption(f"Ask about your {len(papers)} ready paper(s); {llm_note}.")
if library.reader_model() is None and (local := local_llm()) is not None:
    st.info(f"{md_escape(local.name)} is running on this machine ({md_escape(local.base_url)}, "
            f"{len(local.models)} model(s), e.g. {md_escape(local.models[0])}). Choose it on the Settings page "
            "(provider openai) to have answers written and cited by a model; without one they stay extractive.")
ask_and_answer(library, papers)
