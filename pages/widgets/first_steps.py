"""The first-contact hint (core/presentation/first_steps.py) with its link: on the Library (the landing page) above
the uploads, on Ask, Compare and Search in place of the page, which then stops."""
from __future__ import annotations

import streamlit as st

from core.library import Library
from core.presentation.first_steps import first_steps
from pages.widgets import auth

PAGES = {"library": "pages/library.py", "ask": "pages/ask.py"}


def show_first_steps(lib: Library, page: str) -> bool:
    """Draws the hint when the workspace has nothing to ask yet; True when it did."""
    hint = first_steps(lib.documents.status_counts(), page, editor=auth.is_editor())
    if hint is None:
        return False
    with st.container(border=True):
        st.markdown(hint.text)
        st.page_link(PAGES[hint.link], label=hint.link_label,
                     icon=":material/library_books:" if hint.link == "library" else ":material/question_answer:")
    return True
