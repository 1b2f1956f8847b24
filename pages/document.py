"""Document: what the parser made of one paper, as markdown, as items, as a gallery and drawn on its pages."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.content.content_list import MalformedContentList
from core.content.pages import PageImageUnavailable, load_items
from core.models.scholarly import OnlineDisabled
from core.pipeline.metadata.enrich import enrich
from core.pipeline.metadata.refresh import correct_field
from core.presentation import display as present
from core.presentation import page_view as pv
from core.presentation.citations import author_year
from core.schema.metadata import FIELDS, MANUAL
from core.schema.records import DocStatus
from core.text import safe_markdown as safe_md
from core.text import tables
from pages.widgets import auth, state
from pages.widgets.references_panel import show_references
from pages.widgets.results_panel import show_results

auth.page_guard()  # signed in (or open on loopback) before anything: see pages/widgets/auth.py
lib = state.library()
docs = lib.documents.list()
if not docs:
    st.title("Document")
    st.info("The library is empty: add PDFs on the Library page.")
    st.stop()

by_id = {d.id: d for d in docs}

# A link (?doc=…&page=…&hl=…) chooses the document and page once; the pickers take over afterwards.
wanted = st.query_params.get("doc", "")
followed = bool(wanted) and wanted != st.session_state.get("doc_param_seen")
if followed:
    st.session_state["doc_param_seen"] = wanted
    match = [d.id for d in docs if d.id.startswith(wanted)]
    if len(match) == 1:
        st.session_state["document_pick"] = match[0]
        page_param = st.query_params.get("page", "")
        if page_param.isdigit():
            st.session_state[f"document_page_{match[0][:16]}"] = int(page_param)
if st.session_state.get("document_pick") not in by_id:
    st.session_state.pop("document_pick", None)

doc_id = st.selectbox("Document", list(by_id), key="document_pick",
                      format_func=lambda i: present.document_label(by_id[i]))
doc = by_id[doc_id]
if followed:
    # A link to this same page (a "Cited by" paper, a citing sentence) reruns it with the link's parameters, but the
    # browser's address keeps the ones it had: the script's parameters already say the new paper, so nothing would
    # be sent, and a reload showed the first paper again. Setting the parameter sends the address the page shows.
    st.query_params["doc"] = doc_id
    st.session_state["doc_param_seen"] = doc_id
elif st.query_params.get("doc") != doc_id:  # the picker chose another paper: its address, without the old highlight
    st.query_params["doc"] = doc_id
    st.session_state["doc_param_seen"] = doc_id
    st.query_params.pop("hl", None)

st.header(safe_md.md_escape(doc.display_title))
meta = [f"status: {doc.status.value}", f"file: {safe_md.md_escape(doc.filename)}"]
if doc.pages:
    meta.append(f"{doc.pages} pages")
if doc.backend:
    meta.append(f"backend: {safe_md.md_escape(doc.backend)}")
if doc.status == DocStatus.READY:
    meta.append(f"{doc.chunk_count} chunks")
st.caption(" · ".join(meta))


def show_metadata() -> None:
    """The paper's bibliographic fields with where each came from; an editor corrects them here (kept through a
    re-parse: core/pipeline/metadata/refresh.py)."""
    paper = lib.metadata.get(doc.id)
    label = author_year(paper)
    with st.expander(f"Bibliographic metadata{' · ' + safe_md.md_escape(label) if label else ''}",
                     key=f"metadata_{doc.id[:16]}"):
        for note in st.session_state.pop("metadata_notes", []):
            st.warning(safe_md.md_escape(note))
        if paper is None:
            st.caption("Nothing extracted yet (`python -m core meta refresh` reads it for papers ingested before).")
        rows = [{"field": name, "value": "; ".join(v) if isinstance(v := paper.get(name), list) else
                 ("" if v is None else str(v)), "source": paper.sources.get(name, "")}
                for name in FIELDS] if paper is not None else []
        if rows:
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                         column_config={"value": st.column_config.TextColumn("value", width=560)})
        if not auth.is_editor():
            return
        enrich_button()
        with st.form(f"metadata_form_{doc.id[:16]}"):
            st.caption("Correct a field; an emptied field goes back to what was extracted. Authors: one per line "
                       "or separated by ';'.")
            typed = {}
            for name in FIELDS:
                value = paper.get(name) if paper is not None else None
                shown = "\n".join(value) if isinstance(value, list) else "" if value is None else str(value)
                box = st.text_area if name in ("authors", "abstract") else st.text_input
                typed[name] = (box(name, shown, key=f"meta_{name}_{doc.id[:16]}"), shown)
            if st.form_submit_button("Save corrections"):
                auth.require_editor()
                notes = []
                for name, (new, old) in typed.items():
                    if new == old:
                        continue
                    value = [a for a in new.replace(";", "\n").splitlines() if a.strip()] if name == "authors" else new
                    try:
                        _, cut = correct_field(lib, doc.id, name, value, MANUAL)
                        notes += cut
                    except ValueError as exc:
                        notes.append(str(exc))
                st.session_state["metadata_notes"] = notes
                st.rerun()


def enrich_button() -> None:
    """Missing fields from Crossref / OpenAlex (core.pipeline.metadata.enrich), only once the user enabled it."""
    if not lib.settings.metadata.online_enrichment:
        st.caption("Online enrichment is off, so nothing leaves this machine; Settings → Parsing & chunking → "
                   "Paper metadata online turns it on.")
        return
    if st.button("Fill missing fields from Crossref / OpenAlex", key=f"enrich_{doc.id[:16]}",
                 help="Sends this paper's DOI (or its title) to the services; hand corrections stay."):
        auth.require_editor()
        try:
            (report,) = enrich(lib, [doc.id])
            filled = ", ".join(f"{name} ({source})" for name, source in report.filled.items())
            notes = [f"filled {filled}" if filled else "no field filled", *report.notes]
        except OnlineDisabled as exc:
            notes = [str(exc)]
        st.session_state["metadata_notes"] = notes
        st.rerun()


show_metadata()
show_references(lib, doc)
show_results(lib, doc)
for warning in doc.warnings:
    st.warning(safe_md.md_escape(warning))
if doc.status == DocStatus.FAILED:
    st.error(f"Failed: {safe_md.md_escape(doc.message)}")
elif doc.status.in_progress:
    st.info(f"This document is {doc.status.value}; what is shown may be incomplete until it is ready.")

parsed = lib.workspace.parsed_dir(doc.id)
try:
    items = load_items(lib, doc.id)
except MalformedContentList as exc:
    st.error(f"The parsed content list of this document cannot be read: {safe_md.md_escape(str(exc))}. "
             + ("Retry the document on the Library page to parse it again." if auth.is_editor()
                else "An editor can parse it again."))
    st.stop()
if not items and not (parsed / "markdown.md").exists():
    st.info("Nothing has been parsed for this document yet.")
    st.stop()

ITEM_COLUMNS = {"#": st.column_config.NumberColumn("#", width=50), "page": st.column_config.NumberColumn(width=50),
                "level": st.column_config.NumberColumn(width=50), "box": st.column_config.TextColumn(width=50),
                "text": st.column_config.TextColumn("text", width=720)}


def show_markdown() -> None:
    md_path = parsed / "markdown.md"
    if not md_path.exists():
        st.info("This parse wrote no markdown.")
        return
    for block in safe_md.markdown_blocks(md_path.read_text(encoding="utf-8", errors="replace"), parsed, demote=2):
        if block.kind == "markdown":
            st.markdown(block.text)
        elif block.kind == "image":
            st.image(str(block.path), caption=safe_md.md_escape(block.text) or None, width=pv.display_width(block.path))
        else:
            show_table(block.table_html)


def show_table(table_html: str) -> None:
    frame = tables.table_frame(table_html)
    if frame is not None:
        st.dataframe(frame, hide_index=True)
    else:
        st.text(tables.table_text(table_html))


def show_items() -> None:
    groups = pv.item_rows(items)
    st.markdown(" · ".join(f"**{safe_md.md_escape(kind)}** {len(rows)}" for kind, rows in groups.items()))
    for n, (kind, rows) in enumerate(groups.items()):
        with st.expander(f"{safe_md.md_escape(kind)} ({len(rows)})", expanded=n == 0):
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", column_config=ITEM_COLUMNS)


def show_gallery() -> None:
    media = pv.media_items(items)
    if not media:
        st.info("The parser found no figures or tables in this document.")
    for item in media:
        label = "Table" if item.type == "table" else "Figure"
        st.markdown(f"**{label}** · page {item.page_idx + 1}"
                    + (f" — {safe_md.md_escape(item.caption)}" if item.caption else " — (no caption found)"))
        image = safe_md.safe_local_file(parsed, item.img_path) if item.img_path else None
        if item.type == "table" and item.table_body:
            show_table(item.table_body)
            if image:
                with st.expander("Table as cropped from the page"):
                    st.image(str(image), width=pv.display_width(image))
        elif image:
            if item.type == "table":
                st.caption("The parser kept this table as a picture only: its cells are not searchable.")
            st.image(str(image), width=pv.display_width(image))
        else:
            st.caption("No image file was written for this item.")
        if item.footnote:
            st.caption(safe_md.md_escape(item.footnote))
        st.divider()


def show_pages() -> None:
    if not doc.pages:
        st.info("The page count is unknown for this document.")
        return
    kinds = [kind for kind, _, _ in pv.legend(items)]
    left, right = st.columns([5, 3])
    with right:
        # One page picker per document: each remembers its page, and none outlives a shorter document.
        # Streamlit forgets a widget's value while its tab is not drawn, so the page is also kept aside.
        key, kept = f"document_page_{doc.id[:16]}", f"document_page_kept_{doc.id[:16]}"
        if key not in st.session_state and kept in st.session_state:
            st.session_state[key] = min(st.session_state[kept], doc.pages)
        page_no = st.number_input("Page", min_value=1, max_value=doc.pages, step=1, key=key)
        st.session_state[kept] = page_no
        shown = st.pills("Item types to draw", kinds, selection_mode="multi", default=kinds,
                         format_func=safe_md.md_escape, key=f"document_kinds_{doc.id[:16]}") or []
        on_page = pv.items_on_page(items, page_no - 1)
        if on_page:
            st.html(pv.legend_html(pv.legend(on_page), sum(1 for i in on_page if not i.bbox)))
        else:
            st.caption("The parser found nothing on this page.")
        groups = pv.item_rows(on_page, text_chars=160)
        rows = [{"type": kind, **row} for kind, kind_rows in groups.items() for row in kind_rows]
        if rows:
            st.dataframe(pd.DataFrame(rows).sort_values("#"), hide_index=True, width="stretch",
                         column_order=["#", "type", "box", "text"],
                         column_config={**ITEM_COLUMNS, "text": st.column_config.TextColumn("text", width=260)})
    with left:
        # A search hit's box (from an Ask link) is drawn while its page is shown.
        highlight = pv.parse_box_param(st.query_params.get("hl")) \
            if st.query_params.get("page") == str(page_no) else None
        drawn = [i for i in on_page if pv.box_kind(i) in shown]
        try:
            st.image(pv.page_image_with_boxes(lib, doc.id, page_no - 1, drawn, highlight=highlight),
                     caption=f"Page {page_no} of {doc.pages}: boxes of the items the parser found"
                             + (" (the search hit in magenta)" if highlight else ""))
        except PageImageUnavailable as exc:
            st.info(str(exc).capitalize())


# The open tab lives in the URL (?tab=Pages), so a link can open one; only the open tab's content is computed.
tabs = st.tabs(["Markdown", "Items", "Gallery", "Pages"], key="tab", bind="query-params")
for tab, show in zip(tabs, (show_markdown, show_items, show_gallery, show_pages)):
    if tab.open:
        with tab:
            show()
