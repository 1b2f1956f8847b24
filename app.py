"""PaperGraph: `streamlit run app.py`. The entry point only sets up navigation and the sidebar; each page
(pages/*.py) lays out widgets and calls into `core`."""
from __future__ import annotations

import streamlit as st

from core.pipeline.worker import work_to_resume
from core.presentation import display as present
from core.query.warmup import warming
from core.settings.config import Settings, SettingsError
from core.text.safe_markdown import md_escape
from pages.widgets import auth, state

STILL_INDICATORS_CSS = ("<style>[data-testid='stSpinner'] *, [data-testid='stSkeleton'], "
                        "[data-testid='stStatusWidget'], [data-testid='stStatusWidget'] * "
                        "{animation: none !important; transition: none !important}"
                        "*, *::before, *::after {transition-duration: 0s !important}</style>")


def models_text(models: present.ModelStatus) -> str:
    return (f"Embedding: **{md_escape(models.embedding_model)}** — {models.embedding_state}  \n"
            f"LLM: {md_escape(models.llm_note)}")


def models_line(lib, polling: bool) -> None:
    """The sidebar's model line, redrawn every 2 s while the background warm-up loads the model. A page whose
    answers rerun as a fragment (Ask) never reruns this script, so the line said "loading" long after the model
    had loaded; once the warm-up ends, one full rerun draws it again without the timer."""
    auth.fragment_guard()
    models = present.model_status(lib)
    st.markdown(models_text(models))
    if polling and not models.warming:
        st.rerun(scope="app")


def main() -> None:
    st.set_page_config(page_title="PaperGraph", page_icon="📚", layout="wide")
    # Streamlit's spinner, placeholders and "running" icon animate at the display's frame rate for as long as a run
    # lasts: without a GPU that is ~0.13 CPU-s per second of waiting in the researcher's browser, ~0.045 when still
    # (headless Chromium). With eight sessions sharing two cores it was most of the browsers' cost (bench/load_ask.py:
    # 1.05 -> 0.79 CPU-s per answer). Their text and icons stay. Every other transition keeps its delay and takes no
    # frames: Streamlit fades what a rerun has not redrawn yet (opacity, 1 s after 0.5 s) and eases borders; each
    # frame of those was painted and composited in software, ~0.09 CPU-s per second of waiting in one browser, 0.025
    # without (still dimmed, after the same 0.5 s, in one step; tests/pages/test_browser_ask_cost.py). Style-only HTML
    # goes to Streamlit's event container, so it takes no room on the page.
    st.html(STILL_INDICATORS_CSS)
    # Before any page: served to a network, a browser signs in (or is refused) first, its session cookie read again at
    # every run; see pages/widgets/auth.py and, in front of Streamlit, pages/widgets/server_gate.py (serve.py).
    user = auth.gate()

    # Streamlit treats a pages/ folder beside app.py as a legacy multipage app until the first st.navigation call:
    # a deep link (/document?doc=…) as the first request after a server start would run the page alone, without the
    # sign-in gate, sidebar or navigation. serve.py leaves that mode out before the first session; should a page run
    # alone anyway (AppTest after switch_page), its first call, auth.page_guard(), checks access itself and reruns
    # through here (pages/widgets/state.py ensure_entry_point). The browser tests open a deep link first.
    pages = [
        st.Page("pages/library.py", title="Library", icon=":material/library_books:", default=True),
        st.Page("pages/document.py", title="Document", icon=":material/description:"),
        st.Page("pages/ask.py", title="Ask", icon=":material/question_answer:"),
        st.Page("pages/compare.py", title="Compare", icon=":material/compare:"),
        st.Page("pages/search.py", title="Search", icon=":material/search:"),
        st.Page("pages/graph.py", title="Graph", icon=":material/hub:"),
        st.Page("pages/gallery.py", title="Gallery", icon=":material/photo_library:"),
        st.Page("pages/results.py", title="Results", icon=":material/leaderboard:"),
        st.Page("pages/evaluate.py", title="Evaluate", icon=":material/analytics:"),
    ]
    if user.is_editor:  # a viewer's navigation has no Settings page (and /settings falls back to the Library)
        pages.append(st.Page("pages/settings.py", title="Settings", icon=":material/settings:"))
    page = st.navigation(pages)

    try:
        lib = state.library()
    except SettingsError as exc:
        st.error(f"The workspace's settings file cannot be used: {exc}")
        st.caption(state.workspace_root())
        if user.is_editor and st.button("Reset the settings to their defaults"):
            auth.require_editor()
            state.reset_settings(Settings())
            st.rerun()
        st.stop()

    # Counts, not the list: this runs on every full rerun, and the list's rows cost ~45 ms at 1,000 papers.
    by_status = lib.documents.status_counts()
    if work_to_resume(lib) and not state.ingestor().busy:
        # Resume a queue (or graph work) left by an earlier run of the app or by the CLI, and take back what a killed
        # process left parsing, indexing or extracting.
        state.kick_ingest()

    with st.sidebar:
        st.markdown("### PaperGraph")
        auth.sidebar(user)
        st.caption("Workspace")
        st.code(str(lib.workspace.root), language=None, wrap_lines=True)
        counts = present.ordered_counts(by_status)
        if counts:
            st.markdown("  \n".join(f"{present.STATUS_BADGES[s]} **{n}** {s}" for s, n in counts.items()))
        else:
            st.markdown("No documents yet.")
        st.caption("Models")
        models_slot = st.empty()

    models_slot.markdown(models_text(present.model_status(lib)))
    page.run()
    # Drawn again after the page, which may have just loaded the embedding model (a first search).
    warming_now = warming(lib)
    with models_slot.container():
        st.fragment(models_line, run_every=2.0 if warming_now else None)(lib, warming_now)


# Streamlit runs this script as __main__ and leaves it in sys.modules["__main__"] after the run, so every worker
# process the ingest pool spawns later imports it again as __mp_main__ (multiprocessing's "safe importing of main
# module"): unguarded, each worker ran the app in Streamlit's bare mode, opening the workspace and resuming the
# queue in a second writer.
if __name__ == "__main__":
    main()
