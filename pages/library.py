"""Library: add PDFs, Markdown, text and HTML files (or MinerU outputs), watch them being parsed and indexed,
retry or delete them."""
from __future__ import annotations

import os

import pandas as pd
import streamlit as st

from core.pipeline.documents import (
    DOCUMENT_SUFFIXES,
    add_document,
    add_mineru_upload,
    busy_stage,
    delete_document,
    mineru_stop,
    retry_document,
)
from core.pipeline.parsing.budget import GB, child_memory_bytes
from core.presentation import display as present
from core.presentation import library_filters as filters
from core.presentation.bibtex import to_bibtex
from core.presentation.citations import papers_metadata
from core.schema.records import DocStatus, GraphStatus
from core.text.safe_markdown import md_escape
from pages.widgets import auth, library_import, state
from pages.widgets.first_steps import show_first_steps
from pages.widgets.table_export import csv_download

auth.page_guard()  # signed in (or open on loopback) before anything: see pages/widgets/auth.py
lib = state.library()
st.title("Library")
show_first_steps(lib, "library")  # an empty workspace: add papers, then ask

# ------------------------------------------------------------------------------------------------ uploads
# Each batch of uploads is handled once: the uploader gets a fresh key afterwards, which also empties it.
round_ = st.session_state.setdefault("upload_round", 0)
editor = auth.is_editor()
files = zips = None
if editor:  # viewers search and read; adding papers is an editor's
    left, right = st.columns([3, 2])
    with left:
        files = st.file_uploader("Add PDFs or text documents", type=[s.lstrip(".") for s in DOCUMENT_SUFFIXES],
                                 accept_multiple_files=True, key=f"pdf_upload_{round_}",
                                 help="PDF, Markdown, plain text or HTML. Each file is stored, then parsed and "
                                      "indexed in the background; a text document's headings become its sections.")
    with right:
        with st.expander("Import a MinerU output (zip)"):
            st.caption("A zip of MinerU's output folder (content_list.json, markdown, images/) made elsewhere, "
                       "e.g. on a GPU machine with the full models. Page images are unavailable for imports.")
            zips = st.file_uploader("MinerU output zip", type=["zip"], accept_multiple_files=True,
                                    key=f"zip_upload_{round_}")
        library_import.import_panel(lib)  # a Zotero folder, a .bib or CSL-JSON by its path (loopback only)

if files or zips:
    auth.require_editor()
    results = []
    with st.spinner("Storing the uploads…"):
        for f in files or []:
            try:
                results.append(("pdf", f.name, add_document(lib, f.name, f.getvalue()), None))
            except ValueError as exc:  # the embedding settings no longer match the stored vectors
                results.append(("pdf", f.name, None, str(exc)))
        for z in zips or []:
            try:
                results.append(("zip", z.name, add_mineru_upload(lib, z.name, z.getvalue()), None))
            except ValueError as exc:
                results.append(("zip", z.name, None, str(exc)))
    state.kick_ingest()
    st.session_state["upload_results"] = results
    st.session_state["upload_round"] = round_ + 1
    st.rerun()

docs = present.newest_first(lib.documents.list())
# "Added and queued" lasts while the document waits or is parsed: the live progress below reruns the page when a
# status changes, and once the document is ready (or failed, with its own message) the notice is gone.
st.session_state["upload_results"] = present.upload_notices_to_keep(st.session_state.get("upload_results", []), docs)
for _kind, name, result, error in st.session_state["upload_results"]:
    if error:
        st.error(f"**{md_escape(name)}**: not imported — {md_escape(error)}")
    elif result.outcome == "added":
        st.success(f"**{md_escape(result.filename)}**: added and queued for parsing")
    else:
        st.info(f"**{md_escape(result.filename)}**: {md_escape(result.message)}")
if st.session_state.get("upload_results") and st.button("Dismiss", key="dismiss_uploads"):
    st.session_state["upload_results"] = []
    st.rerun()


# ------------------------------------------------------------------------------------------------ progress
@st.fragment(run_every=state.POLL_SECONDS)
def live_progress(snapshot: tuple) -> None:
    """Polls the registry while something is in progress; a status change reruns the page, whose table and
    counts then update and, once nothing is in progress, polling stops."""
    auth.fragment_guard()
    now = lib.documents.list()
    if present.status_snapshot(now) != snapshot:
        st.rerun(scope="app")
    live = lib.stages.progress()
    graph_live = lib.stages.graph_progress()
    st.subheader("In progress")
    worker = state.ingestor()
    workers = "; ".join(filter(None, (worker.backend_note, worker.throughput.summary())))
    if workers:  # worker names and counts only, no paper text
        st.caption(md_escape(workers))
    for doc in now:
        if doc.status.in_progress:
            detail, fraction = live.get(doc.id, ("", 0.0))
            text = present.stage_text(doc, detail)
        elif present.graph_busy(doc):
            detail, fraction = graph_live.get(doc.id, ("", 0.0))
            text = f"graph: {detail or doc.graph_status.value} (searchable already)"
        else:
            continue
        st.progress(min(max(float(fraction or 0.0), 0.0), 1.0),
                    text=f"**{md_escape(doc.display_title)}** — {md_escape(text)}")


if present.any_in_progress(docs):
    live_progress(present.status_snapshot(docs))

# ------------------------------------------------------------------------------------------------ failures
failed = [d for d in docs if d.status == DocStatus.FAILED]
for doc in failed[:5]:
    st.error(f"**{md_escape(present.document_label(doc))}** failed: {md_escape(doc.message)}",
             icon=":material/error:")
if len(failed) > 5:
    with st.expander(f"{len(failed) - 5} more failed documents"):
        for doc in failed[5:]:
            st.error(f"**{md_escape(doc.display_title)}**: {md_escape(doc.message)}")

# ------------------------------------------------------------------------------------------------ table
st.subheader("Documents")
if not docs:
    st.info("The library is empty: add PDFs above." if editor else "The library is empty: an editor adds the papers.")
    st.stop()

metas = lib.metadata.get_many()
# Filters by the year, authors and venue each paper states (its metadata; the Document page corrects a field).
span = filters.year_range(docs, metas)
venues = filters.venue_options(docs, metas)
years, unknown = None, True
left, middle, right = st.columns([3, 2, 2])
if span is not None:
    # Keyed by the range: a kept value outside a range that shrank (a paper deleted) would not fit the slider.
    first, last = left.slider("Published", min_value=span[0], max_value=span[1], value=span,
                              key=f"year_filter_{span[0]}_{span[1]}")
    unknown = left.checkbox("and papers without a year", value=True, key="year_filter_unknown")
    years = None if (first, last) == span else (first, last)
author = middle.text_input("Author", key="author_filter", placeholder="e.g. Cohan; Beltagy",
                           help="Papers with an author of this name (any part of it, accents ignored); separate "
                                "several authors with ';' to find papers that have them all.")
if "venue_filter" in st.session_state:  # a venue no longer listed (its paper deleted or corrected) drops out
    st.session_state["venue_filter"] = [v for v in st.session_state["venue_filter"] if v in venues]
chosen_venues = right.multiselect("Venue", venues, key="venue_filter", placeholder="any venue") if venues else []
chosen = filters.LibraryFilter(years=years, keep_unknown_year=unknown, author=author,
                               venues=tuple(v for v in chosen_venues if v in venues))
if chosen.active:
    shown = filters.filter_documents(docs, metas, chosen)
    st.caption(md_escape(filters.describe(chosen, len(shown), len(docs))))
    docs = shown
# Newest first (an upload shows on top). The key names the rows in their order: a selection is row positions, so
# a table whose rows changed (an upload or a deletion, from any session) starts with none rather than a shifted one.
table_key = f"library_table_{st.session_state.setdefault('table_round', 0)}_{present.table_identity(docs)}"
papers = lib.graph_sources.papers()
rows = present.document_rows(docs, papers, metas, present.cited_by_counts(lib.references.resolved()))
event = st.dataframe(
    pd.DataFrame(rows), key=table_key, on_select="rerun", selection_mode="multi-row",
    hide_index=True, width="stretch",
    column_config={
        "status": st.column_config.TextColumn("status", width="small"),
        "title": st.column_config.TextColumn("title", width=340),
        "authors": st.column_config.TextColumn("authors", width=200,
                                               help="From the paper's first page or PDF metadata; correct them on "
                                                    "the Document page."),
        "year": st.column_config.NumberColumn("year", format="%d", width="small"),
        "venue": st.column_config.TextColumn("venue", width=160),
        "cited by": st.column_config.NumberColumn("cited by", format="%d", width="small",
                                                  help="Papers of this library whose reference lists cite it (the "
                                                       "Document page lists them, each with its sentence)."),
        "pages": st.column_config.NumberColumn("pages", format="%d", width="small"),
        "chunks": st.column_config.NumberColumn("chunks", format="%d", width="small"),
        "graph": st.column_config.TextColumn("graph", width="small",
                                             help="The entity graph is built after a paper is searchable."),
        "entities": st.column_config.NumberColumn("entities", format="%d", width="small"),
        "relations": st.column_config.NumberColumn("relations", format="%d", width="small"),
        "extractor": st.column_config.TextColumn("extractor", help="What built this paper's part of the graph."),
        "message": st.column_config.TextColumn("message", width=340),
        "added": st.column_config.DatetimeColumn("added", format="YYYY-MM-DD HH:mm", width="small",
                                                 help="When the file was added; the newest are on top."),
    })
selected = [docs[i] for i in event.selection.rows if i < len(docs)]
left, right = st.columns([1, 4])
with left:
    csv_download(rows, "library.csv", key="library_csv")  # titles come from papers: escaped (widgets/table_export)
with right:  # BibTeX of the selection, or of every paper listed; fields LaTeX-escaped (core/presentation/bibtex.py)
    cite = [d.id for d in (selected or docs)]
    # Made on click (a callable): written for every rerun, a 1,000-paper .bib cost 0.2 s and 1.7 MB to the browser.
    st.download_button(f"Export BibTeX ({len(cite)} {'selected' if selected else 'listed'})",
                       lambda: to_bibtex(papers_metadata(lib, cite)), file_name="papergraph.bib",
                       mime="application/x-bibtex", key="library_bibtex", icon=":material/format_quote:",
                       on_click="ignore")
nodes, edges = lib.graph.counts()
if nodes:
    st.caption(f":material/hub: Entity graph of the collection: {nodes:,} nodes and {edges:,} edges "
               f"(`python -m core graph stats`, `python -m core graph export --format graphml --out FILE`).")
built_by = {p.extractor for p in papers.values()}
if "spacy" in built_by:
    st.caption(":material/info: Papers whose extractor says *LLM-free (spaCy)* got their part of the graph "
               "without an LLM: noun phrases and names, linked when they share a sentence."
               + (" Configure an LLM in Settings and use *Rebuild graph* for LightRAG-style entities and relations."
                  if editor else ""))  # a viewer can do neither: no hint at what they cannot do
st.caption("Select rows to open, retry or delete documents." if editor else
           "Select a row to open it in the Document view.")

if selected:
    ready = [d for d in selected if d.status == DocStatus.READY]
    retryable = [d for d in selected if d.status == DocStatus.FAILED]
    deletable = [d for d in selected if not d.status.in_progress]
    cols = st.columns(4)
    if len(selected) == 1 and ready:
        cols[0].page_link("pages/document.py", label="Open in the Document view", icon=":material/description:",
                          query_params={"doc": ready[0].id})
    if editor and cols[1].button(f"Retry {len(retryable)} failed", disabled=not retryable, key="retry_selected"):
        auth.require_editor()
        for doc in retryable:
            retry_document(lib, doc.id)
        state.kick_ingest()
        st.rerun()
    if editor and cols[2].button(f"Delete {len(deletable)} selected", disabled=not deletable, key="delete_selected",
                                 help="Documents being parsed or indexed cannot be deleted until they finish."):
        auth.require_editor()
        st.session_state["confirm_delete"] = [d.id for d in deletable]
    stopped = [d for d in ready if mineru_stop(d)]
    if editor and len(selected) == 1 and stopped:  # MinerU was stopped on it: let it try again with more memory
        share = child_memory_bytes(lib.settings.parsing, lib.settings.compute.workers or os.cpu_count() or 1)
        st.caption(f":material/memory: {md_escape(mineru_stop(stopped[0]))}")
        gb = st.number_input("Memory for MinerU on this document (GB)", min_value=0.5, step=0.5,
                             value=float(max(1.0, round(2 * share / GB))), key="retry_memory_gb",
                             help="Its child gets this much (at most what the other workers leave of 80% of the "
                                  "machine), and every page, even those too dense for the usual budget.")
        if st.button(f"Retry with MinerU and {gb:g} GB", key="retry_memory"):
            auth.require_editor()
            retry_document(lib, stopped[0].id, memory_gb=gb)
            state.kick_ingest()
            st.rerun()
    graphable = [d for d in ready if d.graph_status != GraphStatus.EXTRACTING]
    if editor and cols[3].button(f"Rebuild graph of {len(graphable)}", disabled=not graphable, key="regraph_selected",
                                 help="Extract entities again with the extractor now configured; chunks it already "
                                      "did are reused."):
        auth.require_editor()
        from core.pipeline.graph.stage import retry_graph

        for doc in graphable:
            retry_graph(lib, doc.id)
        state.kick_ingest()
        st.rerun()

pending = [d for d in docs if d.id in set(st.session_state.get("confirm_delete", []))]
if pending and editor:
    names = ", ".join(md_escape(d.display_title) for d in pending[:5]) + (" …" if len(pending) > 5 else "")
    st.warning(f"Delete {len(pending)} document(s) and everything derived from them (parsed output, page "
               f"images, index)? {names}")
    # Read again on every run, the click's included: a paper may have been queued or started since it was selected.
    for doc in pending:
        if busy_stage(doc):
            st.caption(f":material/pending: **{md_escape(doc.display_title)}** is {busy_stage(doc)}: its worker "
                       "stops at its next step, and what it wrote is removed with the rest.")
    yes, no = st.columns([1, 6])
    if yes.button("Yes, delete", type="primary", key="confirm_delete_yes"):
        auth.require_editor()
        for doc in pending:
            delete_document(lib, doc.id)
        st.session_state["confirm_delete"] = []
        st.session_state["table_round"] += 1  # a fresh table: the old selection named rows that are gone
        st.rerun()
    if no.button("Cancel", key="confirm_delete_no"):
        st.session_state["confirm_delete"] = []
        st.rerun()

# ------------------------------------------------------------------------------------------------ duplicates
if nodes and editor:  # finding duplicates is for merging them: an editor's work
    with st.expander("Likely duplicate entities"):
        st.caption("Pairs of entities whose names and descriptions embed close together. Nothing is merged on "
                   "its own: \"BERT\" and \"BERT-large\" are close but not the same. A merge keeps the first "
                   "entity, moves the other's edges and sources to it, and applies to papers added later.")
        if st.button("Find likely duplicates", key="find_duplicates"):
            from core.pipeline.graph.duplicates import suggest_duplicates

            with st.spinner("Comparing entity embeddings…"):
                st.session_state["duplicates"] = [vars(s) for s in suggest_duplicates(lib, limit=30)]
        found = st.session_state.get("duplicates")
        if found == []:
            st.info("No pair of entities is above the similarity threshold (Settings → graph).")
        for n, s in enumerate(found or []):
            left, right = st.columns([5, 1])
            left.markdown(f"**{md_escape(s['keep_name'])}** ← {md_escape(s['merge_name'])} "
                          f"· similarity {s['similarity']:.2f}")
            if right.button("Merge", key=f"merge_duplicate_{n}"):
                auth.require_editor()
                from core.pipeline.graph.duplicates import merge_entities

                merge_entities(lib, [s["merge"]], into=s["keep"])
                st.session_state["duplicates"] = [d for d in found if s["merge"] not in (d["keep"], d["merge"])]
                st.session_state["merge_notice"] = f"Merged {s['merge_name']} into {s['keep_name']}."
                st.rerun()
        notice = st.session_state.pop("merge_notice", None)
        if notice:
            st.success(md_escape(notice))
