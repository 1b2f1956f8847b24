"""What the AppTest page tests share: running the app on a workspace (and opening a page), asking on the Ask page,
reading the text of elements, opening a tab of the Document page, and hostile paper text with a check for markup
that would reach the browser unescaped."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.paths import APP


def run_app(monkeypatch, root, page: str | None = None, query_params: dict | None = None,
            timeout: float = 60) -> AppTest:
    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(root))
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if page:
        at.switch_page(page)
        if query_params:
            at.query_params.update(query_params)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    return at


def ask(at: AppTest, question: str, mode: str | None = None, context_only: bool | None = None) -> AppTest:
    """Ask on the Ask page: the question, the mode and the context-only switch when given (else as the page has
    them), then the form's Ask."""
    at.text_input(key="ask_question").input(question)
    if mode is not None:
        at.radio(key="ask_mode").set_value(mode)
    if context_only is not None:
        at.toggle(key="ask_context_only").set_value(context_only)
    at.button[0].click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def open_tab(at: AppTest, label: str):
    """Only the open tab of the Document page is computed; the tab lives in session state (and the URL)."""
    at.session_state["tab"] = label
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at.tabs[["Markdown", "Items", "Gallery", "Pages"].index(label)]


HOSTILE_TITLE = "<img src=x onerror=alert(1)> **Evil** [click](javascript:alert(1)) :red[x]"
HOSTILE_BODY = ("Hostile body <script>alert('x')</script> with a [link](javascript:alert(2)) and "
                "![px](https://evil.example/pixel.png) inside.")


def _unescaped_markup(text: str) -> list[str]:
    """Raw HTML or script links that would reach the browser as markup (markdown escapes are fine)."""
    import re

    return re.findall(r"(?<!\\)<\s*[a-z/!]|(?<!\\)\]\(\s*(?:javascript|data|vbscript):|(?<!\\)!\[[^\]]*\]\(http", text,
                      re.IGNORECASE)
