"""The Document page's Results section: every number the paper's tables report, as read at ingest, with the cell
it came from (core.service.results.paper_results)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.library import Library
from core.schema.records import Document
from core.service import results as service
from pages.widgets.table_export import csv_download


def show_results(lib: Library, doc: Document) -> None:
    rows = service.paper_results(lib, doc.id)
    with st.expander(f"Results · {len(rows)} read from its tables", key=f"results_{doc.id[:16]}"):
        if not rows:
            st.caption("No results were read from this paper's tables (a paper ingested before results existed: "
                       "`python -m core results rebuild`).")
            return
        frame = pd.DataFrame([{"Method": r.method, "Dataset": r.dataset, "Metric": r.metric, "Value": r.value_text,
                               "Setting": r.setting, "Page": r.page, "Cell": r.cell} for r in rows])
        st.dataframe(frame, hide_index=True, width="stretch")  # cells are shown as text, never as Markdown
        csv_download(frame, f"results-{doc.id[:8]}.csv", key=f"results_csv_{doc.id[:16]}")
        st.page_link("pages/results.py", label="Compare across the library on the Results page",
                     icon=":material/leaderboard:")
