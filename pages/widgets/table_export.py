"""A table's CSV download through the escaping writer (core.text.tables.frame_csv). Streamlit's own download on
st.dataframe is turned off in .streamlit/config.toml (client.disableDataExport): it wrote text from papers into
cells unescaped, and a title like =HYPERLINK("http://…") ran as a formula in the spreadsheet that opened it."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from core.text.tables import frame_csv


def csv_download(frame: pd.DataFrame | list[dict], file_name: str, *, key: str, label: str = "Download CSV") -> None:
    """A download button for `frame` as CSV, formula cells written as text."""
    data = frame if isinstance(frame, pd.DataFrame) else pd.DataFrame(frame)
    st.download_button(label, frame_csv(data), file_name=file_name, mime="text/csv", key=key,
                       icon=":material/download:", on_click="ignore")  # a download need not rerun the page
