"""The Graph page's tool panels below the graph: explain a connection, suggested duplicates, the user's edits and
export. Widgets only, like the page (pages/graph.py); split out so the page script stays one screen of layout."""
from __future__ import annotations

import io
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from core.library import Library
from core.pipeline.graph import edits
from core.pipeline.graph.duplicates import merge_entities, suggest_duplicates
from core.presentation.graph import explorer, export, panels, paths
from core.presentation.graph.description import Description
from core.presentation.graph.graph_index import GraphIndex
from core.text.plain import strip_markup
from core.text.safe_markdown import md_escape
from pages.widgets import auth

_EXPORT_FORMATS = {"graphml": "GraphML (Gephi, yEd, networkx)", "json": "JSON (nodes/links)",
                   "csv": "CSV (nodes and edges, zipped)", "cypher": "Cypher script (Neo4j)",
                   "html": "This view as a standalone HTML page"}


def passage_block(passage: paths.Passage, n: int) -> None:
    where = f"{md_escape(passage.paper)}" + (f", page {passage.page + 1}" if passage.page is not None else "")
    st.markdown(f"{n}. *{where}* — {md_escape(' '.join(strip_markup(passage.text).split()))}")
    if passage.page is not None:
        st.page_link("pages/document.py", label=f"Open page {passage.page + 1} in the Document view",
                     icon=":material/description:",
                     query_params={"doc": passage.doc_id, "tab": "Pages", "page": str(passage.page + 1)})


def description_block(description: Description, what: str = "entity") -> None:
    """A readable description: an LLM's summary when there is one, the best one or two sentences of the papers,
    each with its paper, and the other sentences folded (core/presentation/graph/description.py)."""
    if description.empty:
        st.markdown("*(no description)*")
        return
    if description.summary:
        st.markdown(md_escape(description.summary))
    for sentence in description.lead:
        st.markdown(f"{md_escape(sentence.text)} — *{md_escape(sentence.paper)}*")
    if description.more:
        more = len(description.more) + description.more_count
        with st.expander(f"{more} more sentence(s) about this {what} from the papers"):
            st.markdown("\n".join(f"- {md_escape(s.text)} — *{md_escape(s.paper)}*" for s in description.more))
            if description.more_count:
                st.caption(f"… and {description.more_count} more.")


def run_edit(action, success: str) -> None:
    auth.require_editor()  # every graph edit passes here
    try:
        with st.spinner("Updating the graph and its vectors…"):
            action()
    except (edits.EditError, KeyError) as exc:
        st.session_state["g_notice"] = ("error", f"Not changed: {exc}")
    else:
        st.session_state["g_notice"] = ("success", success)
    st.rerun()


def explain_connection_panel(lib: Library, index: GraphIndex, key: str, name_of: Callable[[str], str],
                             entity_label: Callable[[str], str]) -> None:
    with st.expander("Explain a connection"):
        st.caption("The shortest chains of relations between two entities (up to 3), each step with the passage "
                   "that supports it.")
        left, right = st.columns(2)
        ends = []
        for column, label, default in ((left, "From", key), (right, "To", "")):
            with column:
                q = st.text_input(f"{label}: search", key=f"g_path_q_{label}",
                                  placeholder=name_of(default) if default else "an entity name")
                found = [k for k, _ in index.search(q, limit=20)] if q.strip() else ([default] if default else [])
                ends.append(st.selectbox(label, [""] + found, key=f"g_path_{label}",
                                         format_func=lambda k: entity_label(k) if k else "(search above)"))
        if st.button("Find paths", key="g_find_paths", disabled=not all(ends)):
            st.session_state["g_paths"] = (ends[0], ends[1], paths.explain_connection(lib, index, ends[0], ends[1]))
        found_paths = st.session_state.get("g_paths")
        if found_paths:
            source, target, connections = found_paths
            if not connections:
                st.info(f"No chain of at most {paths.MAX_HOPS} relations links {md_escape(name_of(source))} and "
                        f"{md_escape(name_of(target))}.")
            for n, connection in enumerate(connections, 1):
                with st.container(border=True):
                    st.markdown(f"**Path {n}** ({connection.length} hop(s)): " +
                                " → ".join(md_escape(name_of(k)) for k in connection.keys))
                    for hop in connection.hops:
                        st.markdown(f"- **{md_escape(hop.source_name)} — {md_escape(hop.target_name)}** "
                                    f"({md_escape(hop.keywords) or 'related'}, weight {hop.weight:g})")
                        if hop.passage:
                            passage_block(hop.passage, 1)


def duplicates_panel(lib: Library, index: GraphIndex, editor: bool) -> None:
    if not editor:  # suggestions are for merging, an editor's work (the Library hides them from viewers too)
        return
    with st.expander("Suggested duplicates"):
        st.caption("Pairs of entities whose names and descriptions embed close together, with each side's evidence. "
                   "Nothing is merged on its own.")
        if st.button("Find likely duplicates", key="g_find_duplicates"):
            with st.spinner("Comparing entity embeddings…"):
                st.session_state["g_duplicates"] = [vars(s) for s in suggest_duplicates(lib, limit=20)]
        found_dups = st.session_state.get("g_duplicates")
        if found_dups == []:
            st.info("No pair of entities is above the similarity threshold (Settings → graph).")
        for n, s in enumerate(found_dups or []):
            with st.container(border=True):
                st.caption(f"similarity {s['similarity']:.2f}")
                cols = st.columns(2)
                sides = [panels.entity_panel(lib, index, s["keep"]), panels.entity_panel(lib, index, s["merge"])]
                for column, side in zip(cols, sides):
                    with column:
                        if side is None:
                            st.caption("(no longer in the graph)")
                            continue
                        st.markdown(f"**{md_escape(side.node.name)}** ({md_escape(side.node.type)}), {side.degree} "
                                    f"relation(s), {len(side.papers)} paper(s)")
                        st.caption(md_escape(side.node.description[:300]))
                        if side.passages:
                            st.caption(md_escape(side.passages[0].text))
                if all(sides) and st.button(f"Merge {s['merge_name']} into {s['keep_name']}",
                                                       key=f"g_dup_merge_{n}"):
                    st.session_state["g_duplicates"] = [d for d in found_dups
                                                        if s["merge"] not in (d["keep"], d["merge"])]
                    run_edit(lambda s=s: merge_entities(lib, [s["merge"]], into=s["keep"]),
                             f"Merged {s['merge_name']} into {s['keep_name']}.")


def edits_panel(lib: Library, editor: bool) -> None:
    if not editor:  # a viewer makes no edits and can undo none: "Your edits (0)" only said what they cannot do
        return
    made = edits.list_edits(lib)
    with st.expander(f"Your edits ({len(made)})"):
        if not made:
            st.caption("No edits yet. Merges are recorded as aliases and are not listed here.")
        for n, record in enumerate(made):
            text_col, undo_col = st.columns([5, 1])
            text_col.markdown(md_escape(record.summary))
            if undo_col.button("Undo", key=f"g_undo_{n}"):
                run_edit(lambda record=record: edits.undo_edit(lib, record.override), f"Undone: {record.summary}.")


def export_panel(lib: Library, filters: explorer.ViewFilters) -> None:
    with st.expander("Export"):
        fmt = st.selectbox("Format", list(_EXPORT_FORMATS), key="g_export_format", format_func=_EXPORT_FORMATS.get)
        if st.button("Prepare the file", key="g_export_prepare"):
            with st.spinner("Writing the export…"), tempfile.TemporaryDirectory() as tmp:
                target = Path(tmp) / f"papergraph.{fmt}"
                if fmt == "html":
                    written = export.export_view_html(lib, target, filters)
                else:
                    written = export.export_graph(lib.graph, fmt, target)
                if len(written) > 1:
                    buffer = io.BytesIO()
                    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                        for path in written:
                            archive.write(path, path.name)
                    st.session_state["g_export"] = ("papergraph-csv.zip", buffer.getvalue())
                else:
                    st.session_state["g_export"] = (written[0].name, written[0].read_bytes())
        prepared = st.session_state.get("g_export")
        if prepared:
            st.download_button(f"Download {prepared[0]}", prepared[1], file_name=prepared[0], key="g_export_download")
