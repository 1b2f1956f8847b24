"""Gallery: every table, figure and equation of the collection, its original caption beside its generated
description, filtered by paper, kind and words; tables as data (and CSV); re-describe one item."""
from __future__ import annotations

import streamlit as st

from core.content.images import item_png
from core.content.media_items import kind_name
from core.models.vlm import describe_vlm
from core.pipeline.media.describe import redescribe_item
from core.presentation import display as present
from core.presentation.gallery import KINDS, gallery_entries, kind_counts
from core.text import tables
from core.text.safe_markdown import md_escape
from pages.widgets import auth, state

PER_PAGE = 12

auth.page_guard()  # signed in (or open on loopback) before anything: see pages/widgets/auth.py
lib = state.library()
st.title("Gallery")
st.caption("Tables, figures and equations of the ready papers. "
           f"Descriptions: {md_escape(describe_vlm(lib.settings.vlm))}.")
for kind, text in st.session_state.pop("gallery_notices", []):
    getattr(st, kind)(text)

docs = lib.documents.ready_papers()
if not docs:
    st.info("No paper is ready yet: add PDFs on the Library page.")
    st.stop()
by_id = {d.id: d for d in docs}
left, middle, right = st.columns([3, 2, 3])
picked = left.multiselect("Papers", list(by_id), key="gallery_papers", placeholder="all papers",
                          format_func=lambda i: present.document_label(by_id[i]))
kinds = middle.multiselect("Types", list(KINDS), key="gallery_kinds", placeholder="all types", format_func=kind_name)
query = right.text_input("Search captions and descriptions", key="gallery_query")

entries = gallery_entries(lib, picked or None, kinds or None, query)
counts = kind_counts(entries)
st.markdown(" · ".join(f"**{n}** {k.lower()}{'s' if n != 1 else ''}" for k, n in counts.items())
            or "Nothing matches.")
pages = max(1, (len(entries) + PER_PAGE - 1) // PER_PAGE)
page = st.number_input("Page", min_value=1, max_value=pages, step=1, key="gallery_page") if pages > 1 else 1
vlm_note = "a VLM" if lib.settings.vlm.provider != "none" else "the offline describer (no VLM is set)"


def show(entry) -> None:
    item = entry.item
    st.markdown(f"#### {md_escape(entry.label)} · {md_escape(entry.doc_title)}")
    st.caption(f"{entry.kind} · page {item.page_idx + 1}")
    image_col, text_col = st.columns([1, 1])
    with image_col:
        png = item_png(lib, entry.doc_id, item)
        if png:
            st.image(png)
        else:
            st.caption("No image of this item (no image file and no source PDF to cut it from).")
        if item.type == "table" and item.table_body:
            frame = tables.table_frame(item.table_body)
            if frame is not None:
                st.dataframe(frame, hide_index=True)
                st.download_button("Download CSV", tables.table_csv(item.table_body).encode("utf-8"),
                                   file_name=f"{entry.label.replace(' ', '_')}-{entry.doc_id[:8]}.csv",
                                   mime="text/csv", key=f"gallery_csv_{entry.doc_id[:16]}_{item.index}")
    with text_col:
        st.markdown("**Original caption**")
        st.markdown(md_escape(item.caption) if item.caption else "_(no caption found)_")
        if item.footnote:
            st.caption(md_escape(item.footnote))
        st.markdown("**Generated description**")
        current = entry.current
        if current is None:
            st.caption("Not described yet: the paper is indexed with an older version"
                       + ("; retry it on the Library page." if auth.is_editor() else "."))
        else:
            st.caption(md_escape(current.note))
            st.markdown("  \n".join(md_escape(line) for line in current.text.splitlines()))
            if current.entities:
                st.caption("Entities: " + ", ".join(md_escape(e.name) for e in current.entities))
        if entry.vlm and not entry.vlm.text and entry.vlm.message:
            st.warning(f"VLM: {md_escape(entry.vlm.message)}")
        elif entry.vlm and entry.vlm.message:
            st.caption(f"VLM: {md_escape(entry.vlm.message)}")
        # An editor's: it rewrites the item's description and may call the VLM.
        if auth.is_editor() and st.button("Re-describe", key=f"gallery_redescribe_{entry.doc_id[:16]}_{item.index}",
                                          help=f"Describe this item again now, with {vlm_note}."):
            auth.require_editor()
            with st.spinner(f"Describing {entry.label}…"):
                try:
                    result = redescribe_item(lib, entry.doc_id, item.index)
                except Exception as exc:  # shown, never a crash of the page
                    st.session_state["gallery_notices"] = [("error", f"{entry.label}: {md_escape(str(exc))}")]
                else:
                    if result.text:
                        kind, text = "success", f"{entry.label} described again ({result.note})."
                    else:
                        kind, text = "warning", f"{entry.label}: {result.message or 'no description came back'}"
                    st.session_state["gallery_notices"] = [(kind, md_escape(text))]
            st.rerun()
    st.divider()


for entry in entries[(page - 1) * PER_PAGE: page * PER_PAGE]:
    show(entry)
