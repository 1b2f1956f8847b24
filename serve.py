"""PaperGraph's server: `streamlit run serve.py` (what `make run` does). It serves app.py through Streamlit's own
ASGI app (st.App) with one middleware in front, pages/widgets/server_gate.Gate: host-name check against DNS
rebinding, the /sign-in form that sets the signed session cookie, and no app routes, uploads or cache commands for
anyone not allowed them. app.py run on its own (`streamlit run app.py`) has none of that, so it refuses to serve.
"""
import streamlit as st
from starlette.middleware import Middleware
from streamlit.runtime.pages_manager import PagesManager

from pages.widgets.server_gate import Gate

# app.py lists its pages with st.navigation. Until some run calls it, Streamlit 1.67 treats the pages/ folder
# beside app.py as a legacy multipage app: a server's first request ran a deep-linked page without app.py and the
# browser showed the raw page list for seconds. Deciding it before the first session leaves that mode out.
PagesManager.uses_pages_directory = False

app = st.App("app.py", middleware=[Middleware(Gate)])
