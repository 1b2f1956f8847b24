"""PaperGraph's server: `streamlit run serve.py` (what `make run` does). It serves app.py through Streamlit's own
ASGI app (st.App) with one middleware in front, pages/widgets/server_gate.Gate: host-name check against DNS
rebinding, the /sign-in form that sets the signed session cookie, and no app routes, uploads or cache commands for
anyone not allowed them, no websocket or state-changing request from another site's page, and no fragment run for
a session that has signed out. app.py run on its own (`streamlit run app.py`) has none of that, so it refuses to
serve.
"""
import streamlit as st
import uvicorn.config
from starlette.middleware import Middleware
from streamlit.runtime.pages_manager import PagesManager

from pages.widgets.server_gate import Gate

# app.py lists its pages with st.navigation. Until some run calls it, Streamlit 1.67 treats the pages/ folder
# beside app.py as a legacy multipage app: a server's first request ran a deep-linked page without app.py and the
# browser showed the raw page list for seconds. Deciding it before the first session leaves that mode out.
PagesManager.uses_pages_directory = False


def _as_is(app, trusted_hosts=None):
    return app


# uvicorn (the server under st.App) rewrites each request's client address from X-Forwarded-For whenever the peer is
# 127.0.0.1 (its FORWARDED_ALLOW_IPS default), before any middleware of ours runs: any local client, or anything
# behind a local proxy, chose the address its failed sign-ins were counted and logged against. Streamlit passes no
# switch for it, and uvicorn builds that wrapper only after importing this module (Config.load), so it is replaced
# here by one that leaves the request as it is; the gate reads X-Forwarded-For itself, from the proxies named in
# $PAPERGRAPH_TRUSTED_PROXIES only (core.settings.proxies).
uvicorn.config.ProxyHeadersMiddleware = _as_is
app = st.App("app.py", middleware=[Middleware(Gate)])
