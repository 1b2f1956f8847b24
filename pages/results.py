"""Results: the numbers the papers' tables report, as leaderboards across the library. Pick a dataset and a metric
(or search), filter by paper, year and setting; select a row to see the table it was read from; export CSV,
Markdown or LaTeX. The logic is core.service.results (the CLI, REST and MCP read the same leaderboards)."""
from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from core.presentation import display as present
from core.presentation.results import table_crop
from core.service import results as service
from core.service.errors import ServiceError
from core.service.results_export import to_csv, to_latex, to_markdown
from core.text.safe_markdown import md_escape
from pages.widgets import auth, state


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


ALL_METRICS = ""

auth.page_guard()  # signed in (or open on loopback) before anything: see pages/widgets/auth.py
lib = state.library()
st.title("Results")
st.caption("The numbers the papers' tables report (method × dataset × metric), read without an LLM at ingest; "
           "each row cites its paper, page and table cell.")
for kind, text in st.session_state.pop("results_notices", []):
    getattr(st, kind)(text)

docs = lib.documents.ready_papers()
if not docs:
    st.info("No paper is ready yet: add PDFs on the Library page.")
    st.stop()
if lib.results.count() == 0:
    st.info("No results are stored yet. Papers added from now on get them at ingest; papers ingested before are "
            "read by `python -m core results rebuild`" + (" or the button below." if auth.is_editor() else "."))
    if auth.is_editor() and st.button("Read the results of every paper", key="results_rebuild"):
        auth.require_editor()
        from core.pipeline.result_records import rebuild_results  # the write side: only when asked

        with st.spinner("Reading the papers' tables…"):
            done = rebuild_results(lib)
        st.session_state["results_notices"] = [("success", f"{_count(len(done), 'paper')} read, "
                                                           f"{_count(sum(done.values()), 'result')} stored.")]
        st.rerun()
    st.stop()

datasets = {n.key: n for n in service.names(lib, "dataset")}
left, middle, right = st.columns([3, 2, 3])
dataset = left.selectbox("Dataset", list(datasets), key="results_dataset", index=None,
                         placeholder="every dataset (or search)",
                         format_func=lambda k: f"{datasets[k].name} · {_count(datasets[k].records, 'result')}, "
                                               f"{_count(datasets[k].papers, 'paper')}")
metrics = {n.key: n for n in service.names(lib, "metric", dataset=dataset)} if dataset else {}
metric = middle.selectbox("Metric", [ALL_METRICS, *metrics], key=f"results_metric_{dataset or ''}",
                          format_func=lambda k: f"{metrics[k].name} ({metrics[k].records})" if k else "every metric",
                          disabled=not dataset)
query = right.text_input("Search methods, datasets, metrics and captions", key="results_query")

by_id = {d.id: d for d in docs}
with st.expander("Filter by paper, year and setting"):
    papers = st.multiselect("Papers", list(by_id), key="results_papers", placeholder="every paper",
                            format_func=lambda i: present.document_label(by_id[i]))
    year_text = st.text_input("Year", key="results_year", placeholder="2020, or 2018-2020")
    setting = st.text_input("Setting", key="results_setting", placeholder="test, dev, zero-shot…")

if not dataset and not query:
    st.info("Pick a dataset, or search for a method, dataset or metric.")
    st.stop()
try:
    view = service.leaderboard(lib, dataset=dataset, metric=metric or None, query=query or None,
                               year=year_text or None, setting=setting or None, doc_ids=papers or None, limit=200)
except ServiceError as exc:
    st.warning(md_escape(exc.message))
    st.stop()
if not view.boards:
    st.info(md_escape(view.note or "No results match."))
    st.stop()

stamp = hashlib.sha256(repr((dataset, metric, query, year_text, setting, papers)).encode()).hexdigest()[:12]
exports = st.columns(3)
for column, (label, data, name, mime) in zip(exports, (
        ("CSV", to_csv(view), "results.csv", "text/csv"),
        ("Markdown", to_markdown(view), "results.md", "text/markdown"),
        ("LaTeX", to_latex(view), "results.tex", "application/x-latex"))):
    column.download_button(f"Download {label}", data.encode("utf-8"), file_name=name, mime=mime,
                           key=f"results_export_{label}", icon=":material/download:", on_click="ignore")
if view.more_boards:
    st.caption(f"{view.more_boards} more leaderboards not shown: pick a dataset or a metric.")

COLUMNS = {"#": st.column_config.NumberColumn("#", width="small"),
           "Method": st.column_config.TextColumn("Method", width=200),
           "Value": st.column_config.TextColumn("Value", width="small", help="As the paper prints it"),
           "Setting": st.column_config.TextColumn("Setting", width="small"),
           "Paper": st.column_config.TextColumn("Paper", width=300),
           "Year": st.column_config.NumberColumn("Year", format="%d", width="small"),
           "Page": st.column_config.NumberColumn("Page", format="%d", width="small"),
           "Cell": st.column_config.TextColumn("Cell", width=180)}

for n, board in enumerate(view.boards):
    towards = {"higher": "higher is better", "lower": "lower is better"}.get(board.direction,
                                                                              "direction not stated: higher first")
    st.subheader(f"{md_escape(board.dataset or 'Dataset not named')} — {md_escape(board.metric)}")
    st.caption(f"{len(board.rows)} results · {towards}"
               + (f" · {board.more_rows} more not shown" if board.more_rows else ""))
    event = st.dataframe(pd.DataFrame(service.display_rows(board)), key=f"results_table_{stamp}_{n}",
                         on_select="rerun", selection_mode="single-row", hide_index=True, width="stretch",
                         column_config=COLUMNS)
    for position in event.selection.rows:
        row = board.rows[position]
        st.markdown(f"**{md_escape(row.method)}**: {md_escape(row.metric)} {md_escape(row.value_text)} on "
                    f"{md_escape(row.dataset or 'the dataset')}"
                    + (f" ({md_escape(row.setting)})" if row.setting else "")
                    + f" — {md_escape(row.paper)}, page {row.page}, {md_escape(row.cell)}")
        png = table_crop(lib, row.paper_id, row.item_index)
        if png:
            st.image(png, caption=f"{row.table or 'The table'} as cropped from page {row.page}")
        else:
            st.caption("No image of this table (no image file and no source PDF to cut it from).")
        st.page_link("pages/document.py", label="Open the paper at this page", icon=":material/description:",
                     query_params={"doc": row.paper_id, "tab": "Pages", "page": str(row.page)})
