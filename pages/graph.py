"""Graph: see, filter, search, explain and fix the entity graph. Widgets only; the work is in core.pipeline.graph
(explorer: filters → view; render: pyvis HTML; panels; paths; edits; export)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.pipeline.graph import edits
from core.pipeline.graph.duplicates import merge_entities
from core.presentation import display as present
from core.presentation.bibtex import to_bibtex
from core.presentation.citations import papers_metadata
from core.presentation.graph import explorer, graph_index, panels
from core.presentation.graph.description import edge_description, entity_description, node_tips
from core.presentation.graph.render import EDGE_PARAM_SEP, RenderOptions, major_nodes, render_html
from core.schema.graph import PAPER_PREFIX
from core.text.safe_markdown import md_escape
from pages.widgets import auth, graph_tools, state
from pages.widgets.graph_component import graph_view
from pages.widgets.graph_tools import description_block, passage_block, run_edit

auth.page_guard()  # signed in (or open on loopback) before anything: see pages/widgets/auth.py
lib = state.library()
config = lib.settings.explorer
editor = auth.is_editor()  # viewers explore; renames, merges, deletions and undos are an editor's
st.title("Graph")

if not lib.graph.counts()[0]:
    st.info("The graph is empty: add papers on the Library page; their entities and relations appear here once "
            "their graph stage is done.")
    st.stop()

index = graph_index.load_index(lib)
papers = lib.graph_sources.papers()
built_by = present.extractor_label(", ".join(sorted({p.extractor for p in papers.values()})))
llm_note = "" if lib.chat_model() else " No LLM is configured: the graph, panels and paths are LLM-free, and an " \
    "entity is described by its papers' sentences that say most about it, not by a summary."
st.caption(f"{index.entity_count():,} entities from {len(papers)} paper(s), built by {md_escape(built_by)}."
           f"{llm_note}")


def name_of(key: str) -> str:
    node = index.nodes.get(key)
    return node.name if node else key


def entity_label(key: str) -> str:
    node = index.nodes.get(key)
    return f"{node.name} ({node.type})" if node else key


# --------------------------------------------------------------------------------- state from the URL, once
STATE_KEYS = {name: f"g_{name}" for name in explorer.VIEW_STATE_FIELDS}
defaults = {"search": "", "types": [], "papers": [], "communities": [], "years": [], "min_degree": 0,
            "min_weight": 0.0, "max_nodes": config.max_nodes, "color_by": "type", "include_papers": False,
            "neighbourhood": False, "depth": 1, "overview": True}
view_param = st.query_params.get("view", "")
if view_param and view_param != st.session_state.get("g_view_seen"):
    st.session_state["g_view_seen"] = view_param
    restored = explorer.decode_view_state(view_param)
    restored["types"] = [t for t in restored.get("types", []) if t in index.types]
    restored["papers"] = [d for d in restored.get("papers", []) if d in index.paper_titles]
    restored["communities"] = [c for c in restored.get("communities", []) if c in index.communities]
    restored["max_nodes"] = min(max(restored.get("max_nodes", config.max_nodes), 10), config.max_nodes_limit)
    restored["depth"] = min(max(restored.get("depth", 1), 1), explorer.MAX_DEPTH)
    if restored.get("color_by") not in explorer.COLOR_BY:
        restored.pop("color_by", None)
    for name, value in restored.items():
        st.session_state[STATE_KEYS[name]] = value
for name, value in defaults.items():
    st.session_state.setdefault(STATE_KEYS[name], value)

entity_param = st.query_params.get("entity", "")
if entity_param and entity_param != st.session_state.get("g_entity_seen"):
    st.session_state["g_entity_seen"] = entity_param
    if entity_param in index.nodes:
        st.session_state["g_entity"] = entity_param
        st.session_state["g_edge"] = None
edge_param = st.query_params.get("edge", "")
if edge_param and edge_param != st.session_state.get("g_edge_seen"):
    st.session_state["g_edge_seen"] = edge_param
    ends = edge_param.split(EDGE_PARAM_SEP)
    st.session_state["g_edge"] = tuple(ends) if len(ends) == 2 else None
# A click in the graph: the component's value, read here (before the view is built, which may depend on the chosen
# entity) and acted on once per click; it reruns the page in the same session, so nothing else is lost.
click = st.session_state.get("g_click")
if isinstance(click, dict) and click.get("seq") != st.session_state.get("g_click_seen"):
    st.session_state["g_click_seen"] = click.get("seq")
    if click.get("kind") == "node" and click.get("id") in index.nodes:
        st.session_state["g_entity"] = click["id"]
        st.session_state["g_edge"] = None
        st.query_params.pop("edge", None)
    elif click.get("kind") == "edge" and click.get("source") in index.nodes and click.get("target") in index.nodes:
        st.session_state["g_edge"] = (click["source"], click["target"])
        st.query_params["edge"] = click["source"] + EDGE_PARAM_SEP + click["target"]
        st.session_state["g_edge_seen"] = st.query_params["edge"]
if st.session_state.get("g_entity") not in index.nodes:
    st.session_state["g_entity"] = ""

# --------------------------------------------------------------------------------- filters
# The view is built from the filters' session state, which holds a changed widget's value before the widget is
# drawn: so the folded filter box's label can say which filters are set.
years = index.years
if len(years) >= 2:
    low, high = (list(st.session_state["g_years"]) + [years[0], years[-1]])[:2]
    st.session_state["g_years"] = (max(min(low, high), years[0]), min(max(low, high), years[-1]))
values = {name: st.session_state[key] for name, key in STATE_KEYS.items()}
chosen_years = tuple(values["years"]) if len(years) >= 2 and len(values["years"]) == 2 else None
if chosen_years is not None and chosen_years == (years[0], years[-1]):
    chosen_years = None  # the full range: papers that state no year stay in
focus = st.session_state["g_entity"] if values["neighbourhood"] else ""
filters = explorer.ViewFilters(
    types=tuple(values["types"]), doc_ids=tuple(values["papers"]), communities=tuple(values["communities"]),
    years=chosen_years, min_degree=int(values["min_degree"]), min_weight=float(values["min_weight"]),
    search="" if focus else values["search"], focus=focus, depth=int(values["depth"]),
    max_nodes=int(values["max_nodes"]), include_papers=bool(values["include_papers"]),
    color_by=values["color_by"], overview=bool(values["overview"]))
st.query_params["view"] = explorer.encode_view_state(values)
st.session_state["g_view_seen"] = st.query_params["view"]

# The search and the view's size and colours on one line above the graph; the other filters folded (open, the box
# was taller than a laptop's window and pushed the graph out of sight).
search_col, color_col, size_col = st.columns([4, 2, 3], vertical_alignment="bottom")
search_col.text_input("Search entities", key="g_search", placeholder="a name, an alias, or a close spelling",
                      help="Shows the entities whose name or alias matches (typos and word order tolerated).")
color_col.radio("Colour by", explorer.COLOR_BY, horizontal=True, key="g_color_by")
size_col.slider("Maximum nodes", 10, config.max_nodes_limit, step=10, key="g_max_nodes",
                help=f"Views above {config.static_layout_above} nodes are laid out on the server and drawn "
                     "without physics.")
narrowed = filters.narrowed_by()
with st.expander(f"Filters · {', '.join(narrowed)}" if narrowed else "Filters: types, papers, communities, years, "
                 "overview, neighbourhood", expanded=False, key="g_filters_box"):
    c1, c2, c3 = st.columns(3)
    with c1:
        st.multiselect("Entity types", index.types, key="g_types", placeholder="all types")
        st.multiselect("Papers", list(index.paper_titles), key="g_papers", placeholder="all papers",
                       format_func=lambda d: index.paper_titles.get(d, d[:12]))
    with c2:
        st.multiselect("Communities", index.communities, key="g_communities", placeholder="all communities",
                       format_func=lambda c: f"community {c}")
        if len(years) >= 2:
            st.slider("Publication years", years[0], years[-1], key="g_years",
                      help="Entities from papers published in these years (papers that state no year are left "
                           "out while the range is narrowed).")
        st.number_input("Minimum relations per entity", min_value=0, step=1, key="g_min_degree")
        st.number_input("Minimum edge weight", min_value=0.0, step=0.5, key="g_min_weight")
    with c3:
        st.toggle("Overview: the papers and their main entities", key="g_overview",
                  help="Each paper with its most connected entities, so shared ones show between them. Off: the "
                       "most connected entities of the whole graph. A search or a neighbourhood replaces it.")
        st.toggle("Show paper nodes", key="g_include_papers", disabled=bool(st.session_state["g_overview"]),
                  help="Always shown in the overview.")
        st.toggle("Only the neighbourhood of the chosen entity", key="g_neighbourhood")
        st.slider("Neighbourhood depth", 1, explorer.MAX_DEPTH, key="g_depth")


@st.cache_data(max_entries=32, show_spinner=False)
def drawn_view(key: str, _filters: explorer.ViewFilters) -> tuple[explorer.GraphView, str]:
    """The bounded view and its pyvis page, once per (workspace, graph version, filters, settings) in `key`: the
    reruns a click or a typed connection causes build, read and render nothing again (a pyvis page with
    vis-network inlined is about half a megabyte)."""
    built = explorer.build_view(index, _filters, config)
    if not built.nodes:
        return built, ""
    tips = node_tips(lib, index, lib.graph.get_nodes([n.key for n in built.nodes]))  # each one's best sentence
    options = RenderOptions(color_by=_filters.color_by, type_order=index.types, show_note=False)
    return built, render_html(built, options, tips, config)


try:
    view, page_html = drawn_view(f"{lib.workspace.db_path}|{index.version!r}|{filters!r}|{config!r}", filters)
except explorer.ViewError as exc:
    st.error(f"These filters cannot be shown: {md_escape(str(exc))}")
    st.stop()

# --------------------------------------------------------------------------------- the graph
st.caption(md_escape(view.note))
if focus and values["search"]:
    st.caption("The search box is ignored while a neighbourhood is shown.")
if view.nodes:
    graph_view(page_html, height=RenderOptions().height_px + 50, key="g_click")
    shown_papers = sum(n.is_paper for n in view.nodes)
    st.caption(f"Colours: {'community' if filters.color_by == 'community' else 'entity type'} (key above the "
               f"graph); {'squares are papers, ' if shown_papers else ''}node size: relations; edge width: weight"
               f"{'; dashed: mentioned in a paper' if shown_papers else ''}. Labelled: up to the "
               f"{len(major_nodes(view))} most connected, none covering another; hover a node for its name and "
               "details, zoom in for every label. Click a node or an edge for its details below.")

# --------------------------------------------------------------------------------- entity and edge panels
in_view = [n.key for n in view.nodes if not n.key.startswith(PAPER_PREFIX)]
current = st.session_state["g_entity"]
choices = [""] + sorted(set(in_view) | ({current} if current else set()), key=lambda k: name_of(k).casefold())
st.selectbox("Entity", choices, key="g_entity", format_func=lambda k: entity_label(k) if k else "(choose one)",
             help="The entities of this view; clicking a node in the graph chooses it too.")
if st.query_params.get("entity") != (st.session_state["g_entity"] or None):
    if st.session_state["g_entity"]:
        st.query_params["entity"] = st.session_state["g_entity"]
        st.session_state["g_entity_seen"] = st.session_state["g_entity"]
    else:
        st.query_params.pop("entity", None)


def show_notice() -> None:
    kind, text = st.session_state.pop("g_notice", (None, None))
    if kind:
        getattr(st, kind)(md_escape(text))


show_notice()
edge_choice = st.session_state.get("g_edge")
if edge_choice:
    panel = panels.edge_panel(lib, index, *edge_choice)
    with st.container(border=True):
        if panel is None:
            st.warning("That relation is no longer in the graph.")
        else:
            e = panel.edge
            st.subheader(f"{md_escape(panel.source_name)} — {md_escape(panel.target_name)}")
            st.caption(f"{e.relation} · weight {e.weight:g} · {len(panel.papers)} paper(s)")
            if e.description:
                description_block(edge_description(lib, index, e), "relation")
            if e.keywords:
                st.markdown(f"**Keywords:** {md_escape(e.keywords)}")
            st.markdown("**Passages**")
            for n, passage in enumerate(panel.passages, 1):
                passage_block(passage, n)
            if editor and not e.target.startswith(PAPER_PREFIX) and st.button("Delete this relation",
                                                                              key="g_delete_edge"):
                run_edit(lambda: edits.delete_relation(lib, e.source, e.target),
                         f"Deleted the relation {panel.source_name} — {panel.target_name}.")
        if st.button("Close", key="g_close_edge"):
            st.session_state["g_edge"] = None
            st.query_params.pop("edge", None)
            st.rerun()

key = st.session_state["g_entity"]
if key:
    panel = panels.entity_panel(lib, index, key)
    if panel is None:
        st.warning("That entity is no longer in the graph.")
    else:
        node = panel.node
        with st.container(border=True):
            st.subheader(md_escape(node.name))
            st.caption(f"{md_escape(node.type)} · {panel.degree} relation(s) · {len(panel.papers)} paper(s)"
                       + ("" if node.community is None else f" · community {node.community}")
                       + f" · extracted by {md_escape(present.extractor_label(', '.join(node.extractors)))}")
            description_block(entity_description(lib, index, node))
            left, right = st.columns([3, 2])
            with left:
                st.markdown("**Papers**")
                for doc_id, title in panel.papers:
                    st.page_link("pages/document.py", label=title[:120], icon=":material/description:",
                                 query_params={"doc": doc_id})
                st.markdown("**Passages**")
                for n, passage in enumerate(panel.passages, 1):
                    passage_block(passage, n)
                if panel.more_passages:
                    st.caption(f"… and {panel.more_passages} more passage(s).")
                around = panels.neighbourhood_papers(index, panel)
                if around:  # made on click: fields LaTeX-escaped (core/presentation/bibtex.py)
                    st.download_button(f"Export BibTeX of the {len(around)} paper(s) around this entity",
                                       lambda: to_bibtex(papers_metadata(lib, around)), file_name="neighbourhood.bib",
                                       mime="application/x-bibtex", key="g_entity_bibtex", on_click="ignore",
                                       icon=":material/format_quote:",
                                       help="The papers whose passages mention it and those its neighbours come "
                                            "from.")
            with right:
                st.markdown("**Neighbours**")
                if panel.neighbours:
                    st.dataframe(pd.DataFrame([{"name": n.name, "type": n.type, "relation": n.relation,
                                                "weight": n.weight} for n in panel.neighbours]),
                                 hide_index=True, width="stretch", height=260)
                    related = [n for n in panel.neighbours if n.relation == "RELATED"]
                    pick = st.selectbox("Open a relation", [""] + [n.key for n in related], key="g_pick_edge",
                                        format_func=lambda k: name_of(k) if k else "(choose a neighbour)")
                    if pick and st.button("Show the relation", key="g_show_edge"):
                        st.session_state["g_edge"] = (key, pick)
                        st.rerun()
                if panel.more_neighbours:
                    st.caption(f"… and {panel.more_neighbours} more.")

            if editor and not node.is_paper:
                with st.expander("Fix this entity"):
                    st.caption("Edits are kept apart from what the papers say and applied again whenever the graph "
                               "is rebuilt or a new paper mentions the entity. They can be undone below.")
                    rename_col, type_col = st.columns(2)
                    with rename_col:
                        new_name = st.text_input("New name", value=node.name, key=f"g_rename_{key}")
                        if st.button("Rename", key="g_rename_btn"):
                            run_edit(lambda: edits.rename_entity(lib, key, new_name), f"Renamed to {new_name}.")
                    with type_col:
                        types = sorted(set(lib.settings.graph.entity_types) | set(index.types) | {node.type})
                        new_type = st.selectbox("Type", types, index=types.index(node.type), key=f"g_type_{key}")
                        if st.button("Change type", key="g_retype_btn"):
                            run_edit(lambda: edits.retype_entity(lib, key, new_type), f"Type set to {new_type}.")
                    st.markdown("**Merge another entity into this one**")
                    query = st.text_input("Find the entity to merge", key=f"g_merge_q_{key}")
                    matches = [k for k, _ in index.search(query, limit=20) if k != key] if query.strip() else []
                    other = st.selectbox("Entity to merge", [""] + matches, key=f"g_merge_pick_{key}",
                                         format_func=lambda k: entity_label(k) if k else "(search above)")
                    if other:
                        other_panel = panels.entity_panel(lib, index, other)
                        a, b = st.columns(2)
                        for column, side in ((a, panel), (b, other_panel)):
                            if side is None:
                                continue
                            with column:
                                st.markdown(f"**{md_escape(side.node.name)}** ({md_escape(side.node.type)}), "
                                            f"{side.degree} relation(s)")
                                st.caption(md_escape(side.node.description[:400]))
                                if side.passages:
                                    st.caption(md_escape(side.passages[0].text))
                        if st.button(f"Merge {other_panel.node.name if other_panel else other} into "
                                     f"{node.name}", key="g_merge_btn"):
                            run_edit(lambda: merge_entities(lib, [other], into=key),
                                     f"Merged {name_of(other)} into {node.name}.")
                    st.markdown("**Delete**")
                    if st.checkbox("Yes, delete this entity and its relations", key=f"g_confirm_delete_{key}"):
                        if st.button("Delete the entity", type="primary", key="g_delete_btn"):
                            run_edit(lambda: edits.delete_entity(lib, key), f"Deleted {node.name}.")

graph_tools.explain_connection_panel(lib, index, key, name_of, entity_label)
graph_tools.duplicates_panel(lib, index, editor)
graph_tools.edits_panel(lib, editor)
graph_tools.export_panel(lib, filters)
