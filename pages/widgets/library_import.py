"""The Library's importer of a Zotero data folder, a .bib or a CSL-JSON file named by its path on this machine. Only
for an editor of an app served on loopback: served to a network, a typed path would read the server's files for
whoever is signed in, so there the page points to the command line instead."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from core.pipeline.metadata.bib_import import import_bibliography
from core.pipeline.metadata.zotero_import import import_zotero
from core.text.safe_markdown import md_escape
from pages.widgets import auth, state

REPORT_KEY = "library_import_report"


def run_import(lib, raw_path: str, collection: str) -> tuple[str, object]:
    """("ok", report) or ("error", message): a folder is a Zotero data folder, a file a .bib or CSL-JSON."""
    path = Path(raw_path.strip()).expanduser()
    if not path.exists():
        return "error", f"{path}: no such file or folder"
    try:
        if path.is_dir():
            return "ok", import_zotero(lib, path, collection.strip() or None)
        return "ok", import_bibliography(lib, path)
    except (OSError, ValueError) as exc:
        return "error", f"{path}: {exc}"


def import_panel(lib) -> None:
    if not auth.serves_loopback_only():
        st.caption(":material/input: Zotero, BibTeX and CSL-JSON imports read files of the machine the app runs on, "
                   "so served to a network they are on its command line only: `python -m core import-zotero "
                   "FOLDER`, `python -m core import-bib FILE`.")
        return
    with st.expander("Import from Zotero, BibTeX or CSL-JSON"):
        st.caption("A path on this machine: a Zotero data folder (zotero.sqlite + storage/, read from a copy, "
                   "Zotero may stay open), a .bib whose `file` fields name PDFs beside it, or a CSL-JSON file. "
                   "PDFs are ingested with the given metadata, the rest kept as metadata only; links and files "
                   "outside the folder are skipped.")
        path = st.text_input("Folder or file", key="library_import_path", placeholder="~/Zotero")
        collection = st.text_input("Zotero collection (optional)", key="library_import_collection")
        if st.button("Import", key="library_import_run", disabled=not path.strip()):
            auth.require_editor()
            with st.spinner("Importing…"):
                outcome = run_import(lib, path, collection)
            if outcome[0] == "ok" and outcome[1].added:
                state.kick_ingest()
            st.session_state[REPORT_KEY] = outcome
        show_report(st.session_state.get(REPORT_KEY))


def show_report(outcome) -> None:
    if not outcome:
        return
    kind, value = outcome
    if kind == "error":
        st.error(md_escape(value))
        return
    st.success(md_escape(value.summary()))
    rows = ([{"what": key, "outcome": f"PDF: {message}"} for key, _, message in value.added]
            + [{"what": key, "outcome": "metadata only"} for key, _ in value.entries]
            + [{"what": what, "outcome": f"skipped: {why}"} for what, why in value.skipped]
            + [{"what": "", "outcome": f"note: {note}"} for note in value.notes])
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", height=min(400, 38 + 35 * len(rows)))
