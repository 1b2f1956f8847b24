"""A source's passage on its page, in a dialog over the Ask or Compare page: the session (and the answer behind
the dialog) stays, where a link would open a new tab and with it a new session. Opened by the answer's [n]
buttons ("Cited passage") and by a source's "Show the passage on its page" button, which may be a source the
answer does not cite ("The passage on its page"). Paper text is untrusted: everything is escaped."""
from __future__ import annotations

import streamlit as st

from core.content.pages import PageImageUnavailable
from core.library import Library
from core.presentation import page_view as pv
from core.query.records import QueryResult, Source
from core.text.safe_markdown import md_escape, passage_markdown
from pages.widgets import auth


def source_boxes(lib: Library, result: QueryResult, source: Source) -> list[list[float]]:
    hit = next((c.hit for c in result.retrieval.chunks if c.id == source.chunk_id), None)
    return pv.hit_boxes(lib, hit) if hit is not None else pv.as_boxes(source.bbox)


def document_link(source: Source, page: int, boxes: list[list[float]], label: str) -> None:
    """Same tab, same session: the Document page's Pages tab on `page`, the passage highlighted there."""
    st.page_link("pages/document.py", label=label, icon=":material/description:",
                 query_params={"doc": source.doc_id, "tab": "Pages", "page": str(page + 1),
                               "hl": pv.box_param(boxes) if page == source.page else ""})


def open_passage(lib: Library, result: QueryResult, n: int, key: str, cited: bool) -> None:
    """Open source `n`'s page in a dialog titled for what it is: a cited passage or just a retrieved one."""
    st.session_state[f"{key}_cite_offset_{n}"] = 0  # opens on the passage's own page
    (_cited_dialog if cited else _passage_dialog)(lib, result, n, key, cited)


def _page_view(lib: Library, result: QueryResult, n: int, key: str, cited: bool) -> None:
    """The passage's page with the passage highlighted, and the pages around it."""
    source = result.context.source(n)
    if source is None:
        st.warning(f"Source [{n}] is not in this answer's context.")
        return
    what = "cited passage" if cited else "passage"
    boxes = source_boxes(lib, result, source)
    st.markdown(f"**\\[{n}\\] {md_escape(source.doc_title) or source.doc_id[:12]}** — page {source.page + 1} · "
                f"{md_escape(source.kind)}")
    st.caption(md_escape(source.section) or "(no section)")
    with st.expander(f"The {what}", expanded=False):
        st.markdown(passage_markdown(source.text))
    pages = _page_count(lib, source.doc_id)
    offset_key = f"{key}_cite_offset_{n}"
    offset = st.session_state.get(offset_key, 0)
    page = min(max(source.page + offset, 0), max(pages - 1, source.page))
    left, middle, right = st.columns([1, 3, 1], vertical_alignment="center")
    # Buttons inside a dialog rerun the dialog alone: the page behind it, and its answer, stay as they are.
    if left.button("◀ Previous page", key=f"{key}_cite_prev_{n}", disabled=page <= 0):
        st.session_state[offset_key] = offset - 1
        st.rerun(scope="fragment")
    if right.button("Next page ▶", key=f"{key}_cite_next_{n}", disabled=page >= pages - 1):
        st.session_state[offset_key] = offset + 1
        st.rerun(scope="fragment")
    with middle:
        document_link(source, page, boxes, f"Open page {page + 1} in the Document page")
    try:
        if page != source.page:
            st.image(pv.page_image_with_boxes(lib, source.doc_id, page, []), width="stretch",
                     caption=f"Page {page + 1} (the passage is on page {source.page + 1})")
            return
        # The region first, where the eye lands; the whole page (a screen and more) a click below.
        # At its own size, as on the Search page: stretched to the dialog, a one-column crop came out at about
        # three times the page's print size, wider than the eye takes in.
        st.image(pv.crop_hit(lib, source.doc_id, page, boxes), caption=f"Page {page + 1}: the {what} highlighted")
        with st.expander(f"The whole of page {page + 1}"):
            st.image(pv.page_image_with_boxes(lib, source.doc_id, page, [], highlight=boxes), width="stretch")
    except PageImageUnavailable as exc:
        st.caption(str(exc).capitalize())


# Two dialogs, one per title (a dialog's title is fixed when it is declared); distinct functions, so distinct
# fragment ids.
@st.dialog("Cited passage", width="large")
def _cited_dialog(lib: Library, result: QueryResult, n: int, key: str, cited: bool) -> None:
    auth.fragment_guard()  # a dialog's buttons rerun it alone: signed out since, the sign-in page instead
    _page_view(lib, result, n, key, cited)


@st.dialog("The passage on its page", width="large")
def _passage_dialog(lib: Library, result: QueryResult, n: int, key: str, cited: bool) -> None:
    auth.fragment_guard()
    _page_view(lib, result, n, key, cited)


def _page_count(lib: Library, doc_id: str) -> int:
    doc = lib.documents.get(doc_id)
    return doc.pages if doc is not None else 0
