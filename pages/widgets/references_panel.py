"""The Document page's references panel: the library papers this paper cites and those that cite it, each with the
sentences that make the citation (a link opens the sentence on its page), and its references not in the library,
with an Export BibTeX of them."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.library import Library
from core.presentation import page_view as pv
from core.presentation.references import LibraryCitation, entry_line, reference_panel, references_bibtex
from core.schema.records import Document
from core.text import safe_markdown as safe_md

MAX_BIBTEX = 500  # references exported at once; a broken parse can make thousands of "entries"


def _citation(item: LibraryCitation, citing: str) -> None:
    st.page_link("pages/document.py", label=item.name[:140], icon=":material/description:",
                 query_params={"doc": item.other})
    if not item.links:
        st.caption("Listed in the references; no citation marker in the text was linked to it. Entry: "
                   + safe_md.md_escape(item.entry.text[:300]))
    for link in item.links[:5]:
        st.markdown(f"> {safe_md.md_escape(link.sentence)}")
        st.page_link("pages/document.py", label=f"Page {link.page + 1} · {link.marker[:60]}",
                     icon=":material/format_quote:",
                     query_params={"doc": citing, "tab": "Pages", "page": str(link.page + 1),
                                   "hl": pv.box_param(link.bbox) if link.bbox else ""})
    if len(item.links) > 5:
        st.caption(f"… and {len(item.links) - 5} more sentences")


def show_references(lib: Library, doc: Document) -> None:
    panel = reference_panel(lib, doc.id)
    title = (f"References · cites {len(panel.cites)} and cited by {len(panel.cited_by)} in your library · "
             f"{len(panel.outside)} not in your library")
    with st.expander(title, key=f"references_{doc.id[:16]}"):
        if not panel.total and not panel.cited_by:
            st.caption("No reference list was read for this paper (`python -m core refs refresh` reads the lists "
                       "of papers ingested before).")
        st.markdown("**Cites, in your library**")
        if not panel.cites:
            st.caption("None of its references is a paper of your library.")
        for item in panel.cites:
            _citation(item, doc.id)
        st.markdown("**Cited by, in your library**")
        if not panel.cited_by:
            st.caption("No paper of your library cites it.")
        for item in panel.cited_by:
            _citation(item, item.other)
        st.markdown(f"**Not in your library** ({len(panel.outside)})")
        if panel.outside:
            rows = [{"#": r.label or str(r.idx + 1), "reference": entry_line(r)[:400]} for r in panel.outside]
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                         column_config={"reference": st.column_config.TextColumn("reference", width=720)})
            outside = panel.outside[:MAX_BIBTEX]
            st.download_button(f"Export BibTeX ({len(outside)} references)", lambda: references_bibtex(outside),
                               file_name=f"references-{doc.id[:12]}.bib", mime="application/x-bibtex",
                               key=f"references_bibtex_{doc.id[:16]}", icon=":material/format_quote:",
                               on_click="ignore")
