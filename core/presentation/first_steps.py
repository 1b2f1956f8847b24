"""The first-contact hint: on a workspace with nothing to ask yet, what to do first ("add papers, then ask"), said
by the landing page (the Library) and by the pages that need ready papers (Ask, Compare, Search), each pointing to
the page that does it. Plain text, no Streamlit: the pages add the link."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from core.schema.records import DocStatus

ADD_WHAT = "PDFs (or Markdown, text and HTML files, or a MinerU output)"


@dataclass(frozen=True)
class FirstSteps:
    text: str  # markdown with no paper text in it
    link: str  # the page to go to: "library" or "ask"
    link_label: str


def first_steps(counts: Mapping[DocStatus, int], page: str, editor: bool = True) -> FirstSteps | None:
    """What a researcher should do first on `page` ("library", "ask", "compare", "search"), or None once a paper
    is ready. `counts`: documents per status (DocumentStore.status_counts)."""
    if counts.get(DocStatus.READY):
        return None
    total = sum(counts.values())
    busy = sum(n for status, n in counts.items() if status.in_progress)
    if page == "library":
        if total:
            return None  # the Library shows its documents' progress and failures itself
        add = (f"**Start here: add papers, then ask.** Drop {ADD_WHAT} into the box below. Each is parsed and "
               "indexed in the background (a few seconds a page); once one is *ready*, ask questions about your "
               "papers on the Ask page, where every answer cites paper and page, or search their passages."
               if editor else "**This library is empty.** An editor adds the papers; once one is ready, ask "
                              "questions about them on the Ask page.")
        return FirstSteps(add, "ask", "Ask")
    if busy:
        text = (f"**Almost there:** {busy} paper(s) are being parsed and indexed. Questions can be asked once one is "
                "ready; the Library page shows their progress.")
    elif total:
        text = ("**No paper could be read.** The Library page says why for each one, and can retry them; add other "
                "papers there.")
    elif editor:
        text = (f"**Start here: add papers, then ask.** This workspace has no papers yet. Add {ADD_WHAT} on the "
                "Library page; once one is ready (a few seconds a page), come back here"
                + (" to ask questions: every answer cites paper and page." if page == "ask" else
                   " to compare the modes' answers." if page == "compare" else " to search its passages."))
    else:
        text = "**This workspace has no papers yet.** An editor adds them on the Library page."
    return FirstSteps(text, "library", "Go to the Library")
