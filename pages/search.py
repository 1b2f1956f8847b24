"""Search: semantic search over the ready papers, each hit shown with the page region it came from."""
from __future__ import annotations

import streamlit as st

from core.content.pages import PageImageUnavailable
from core.models.embedding import EmbeddingModelError
from core.presentation import display as present
from core.presentation import page_view as pv
from core.query.search import SearchFilters, search
from core.store.base import StoreUnavailable
from core.text import safe_markdown as safe_md
from pages.widgets import auth, state
from pages.widgets.first_steps import show_first_steps

KINDS = ["text", "table", "image", "equation"]

auth.page_guard()  # signed in (or open on loopback) before anything: see pages/widgets/auth.py
lib = state.library()
st.title("Search")
st.caption("The passages closest in meaning to your words, with where they come from, filtered by paper, "
           "item type and section. For answers with citations, use the Ask page.")

ready = {d.id: d for d in lib.documents.ready_papers()}
if not ready:
    show_first_steps(lib, "search")  # what to do first, with a link to the Library
    st.stop()

with st.form("search_form"):
    query = st.text_input("Question or phrase", key="search_query",
                          placeholder="e.g. which solver converges fastest on the benchmark?")
    top_k = st.slider("Number of results", 1, 30, 8, key="search_top_k")
    with st.expander("Filters"):
        papers = st.multiselect("Papers", list(ready), format_func=lambda i: present.document_label(ready[i]),
                                key="search_papers", placeholder="all papers")
        kinds = st.multiselect("Item types", KINDS, key="search_kinds", placeholder="all types")
        sections = st.multiselect("Sections", lib.chunks.sections(), key="search_sections",
                                  placeholder="all sections")
    st.form_submit_button("Search", type="primary")

if not (query or "").strip():
    st.stop()

try:
    if not present.model_status(lib).loaded:
        with st.spinner("Loading the embedding model (first search only, 5–15 s)…"):
            lib.embedder()
    hits = search(lib, query, top_k=top_k, filters=SearchFilters(doc_ids=papers, kinds=kinds, sections=sections))
except (EmbeddingModelError, StoreUnavailable) as exc:
    st.error(f"Search is unavailable: {exc}. Check the Settings page.")
    st.stop()
if not hits:
    st.warning("No results. Loosen the filters, or check that the papers you expect are ready.")
    st.stop()

st.caption(f"{len(hits)} result(s)")
for rank, hit in enumerate(hits, 1):
    chunk = hit.chunk
    with st.container(border=True):
        text_col, image_col = st.columns([3, 2])
        with text_col:
            st.markdown(f"**{rank}. {safe_md.md_escape(hit.doc_title or chunk.doc_id[:12])}**")
            st.caption(f"page {hit.page + 1} · {safe_md.md_escape(chunk.section) or '(no section)'} · "
                       f"{safe_md.md_escape(chunk.kind)}"
                       f" · score {hit.score:.3f}")
            st.markdown(safe_md.passage_markdown(hit.window_text))  # the parser's HTML and Markdown read as text
            if chunk.text.strip() != hit.window_text.strip():
                with st.expander("The whole chunk"):
                    st.markdown(safe_md.passage_markdown(chunk.text))
            boxes = pv.hit_boxes(lib, hit)
            st.page_link("pages/document.py", label=f"Open page {hit.page + 1} in the Document view",
                         icon=":material/description:",
                         query_params={"doc": chunk.doc_id, "tab": "Pages", "page": str(hit.page + 1),
                                       "hl": pv.box_param(boxes)})
        with image_col:
            try:
                st.image(pv.crop_hit(lib, chunk.doc_id, hit.page, boxes),
                         caption=f"Page {hit.page + 1}: where the passage was found")
            except PageImageUnavailable as exc:
                st.caption(str(exc).capitalize())
