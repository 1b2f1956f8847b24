"""The graph as a Streamlit component: the pyvis page (core/presentation/graph/render.py) drawn in a sandboxed
frame, and a click on a node or an edge returned as the component's value, so the Graph page updates its panel
in the same session instead of reloading the app (filters, open expanders and scroll position stay).

The frontend is a static folder (frontend/index.html + main.js) served by Streamlit from this path: nothing from
a CDN, nothing fetched at run time (vis-network comes inlined in the pyvis page it is given).
"""
from __future__ import annotations

import time
from pathlib import Path

import streamlit.components.v1 as components


def _declare():
    """Declare the component, again if need be. Streamlit names a component after its caller's module through
    `inspect.getmodule`, whose module cache CPython fills without a lock: while another session's thread is filling
    it, the lookup can miss and Streamlit raises "module is None" (seen once in a browser test). The cache is
    complete once that thread is done, so asking again a moment later finds the module."""
    for attempt in range(6):
        try:
            return components.declare_component("graph_view", path=str(Path(__file__).parent / "frontend"))
        except RuntimeError as error:
            if "module is None" not in str(error) or attempt == 5:
                raise
            time.sleep(0.05 * (attempt + 1))


_component = _declare()


def graph_view(page_html: str, height: int, key: str) -> dict | None:
    """Draws `page_html`; returns the last click, {"kind": "node", "id": key} or {"kind": "edge", "source": key,
    "target": key}, each with a "seq" unique per click (so the page acts on a click once), or None before any.
    The page is redrawn only when `page_html` changes, so zoom and selection survive the reruns a click causes."""
    return _component(html=page_html, height=height, key=key, default=None)
