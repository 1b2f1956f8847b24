"""Streamlit rendering shared by the Ask and Compare pages: an answer with its citations, the sources with the
page region each came from, and what a mode retrieved. Paper text is untrusted: everything is escaped."""
from __future__ import annotations

import re
from contextlib import contextmanager

import streamlit as st

from core.library import Library
from core.models.embedding import EmbeddingModelError
from core.models.llm.base import LLMError
from core.pipeline.pages import PageImageUnavailable
from core.presentation import display as present
from core.presentation import page_view as pv
from core.query.engine import QueryError
from core.query.records import Answer, QueryParams, QueryResult, Source
from core.schema.modes import Mode
from core.store.base import StoreUnavailable
from core.text.safe_markdown import md_escape

MEDIA_KINDS = ("table", "image", "equation")
_ESCAPED_MARKER = re.compile(r"\\\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\\\]")


def ready_papers_or_stop(lib: Library) -> dict[str, str]:
    """Labels of the ready papers; the page stops with a hint when there are none."""
    ready = {d.id: present.document_label(d) for d in lib.documents.ready_papers()}
    if not ready:
        st.info("Nothing is searchable yet: add PDFs on the Library page and wait until they are ready.")
        st.stop()
    return ready


@contextmanager
def query_errors(what: str):
    """A question that cannot run says why; a model or store that is down points to the Settings page."""
    try:
        yield
    except (QueryError, ValueError) as exc:
        st.error(str(exc))
        st.stop()
    except (EmbeddingModelError, StoreUnavailable, LLMError) as exc:
        st.error(f"{what}: {exc}. Check the Settings page.")
        st.stop()


def source_boxes(lib: Library, result: QueryResult, source: Source) -> list[list[float]]:
    hit = next((c.hit for c in result.retrieval.chunks if c.id == source.chunk_id), None)
    return pv.hit_boxes(lib, hit) if hit is not None else pv.as_boxes(source.bbox)


def answer_markdown(answer: Answer, known: set[int]) -> str:
    """Escaped sentences; each [n] stays as text (the buttons under the answer open it in place), a marker that
    matches no source is flagged with "?", a sentence citing nothing is flagged."""
    def marked(match: re.Match) -> str:
        numbers = re.split(r"\s*[,;]\s*", match.group(1))
        return "".join(f"**\\[{n}\\]**" if int(n) in known else f"\\[{n}?\\]" for n in numbers)

    parts = []
    for sentence in answer.sentences:
        text = _ESCAPED_MARKER.sub(marked, md_escape(sentence.text))
        parts.append(text if sentence.cited else f"{text} :orange-badge[no citation]")
    return " ".join(parts)


def show_answer(lib: Library, result: QueryResult, slot=None, key: str = "ask") -> None:
    """The short answer (bold), the answer with its [n] markers, and a button per cited source that shows the
    cited page in place (a dialog): a link would open a new tab, and with it a new session."""
    slot = slot or st
    answer = result.answer
    if answer is None:
        slot.info("Context only: no answer was generated. The assembled context is below.")
        return
    if answer.extractive:
        slot.caption("Extractive answer: the passages' sentences closest to the question, not written by an LLM.")
    else:
        slot.caption(f"Written by {md_escape(answer.model)}; every sentence should cite its source.")
    short = (getattr(answer, "short_answer", "") or "").strip()
    if short:
        slot.markdown(f"**{md_escape(short)}**")
    slot.markdown(answer_markdown(answer, {s.n for s in result.context.sources}))
    citation_buttons(lib, result, key)
    if answer.uncited and not answer.extractive:
        slot.warning(f"{len(answer.uncited)} sentence(s) cite no source: check them before relying on them.")
    if answer.unknown_citations:
        slot.warning(f"The answer cites sources that do not exist: {answer.unknown_citations}.")


def citation_buttons(lib: Library, result: QueryResult, key: str) -> None:
    """One small button per source the answer cites, in citation order; a click opens the cited page."""
    cited = list(dict.fromkeys(n for s in result.answer.sentences for n in s.citations))
    sources = [s for n in cited if (s := result.context.source(n)) is not None]
    if not sources:
        return
    with st.container(horizontal=True, gap="small", vertical_alignment="center", key=f"{key}_citations"):
        st.caption("Open a citation:", width="content")
        for source in sources:
            if st.button(f"[{source.n}]", key=f"{key}_cite_{source.n}", type="tertiary",
                         help=f"{md_escape(source.doc_title) or source.doc_id[:12]}, page {source.page + 1}: show "
                              "the passage on its page, here"):
                st.session_state[f"{key}_cite_offset_{source.n}"] = 0  # opens on the cited page
                cited_page(lib, result, source.n, key)


@st.dialog("Cited passage", width="large")
def cited_page(lib: Library, result: QueryResult, n: int, key: str) -> None:
    """The cited page with the passage highlighted, and the pages around it, without leaving the session."""
    source = result.context.source(n)
    if source is None:
        st.warning(f"Source [{n}] is not in this answer's context.")
        return
    boxes = source_boxes(lib, result, source)
    st.markdown(f"**\\[{n}\\] {md_escape(source.doc_title) or source.doc_id[:12]}** — page {source.page + 1} · "
                f"{md_escape(source.kind)}")
    st.caption(md_escape(source.section) or "(no section)")
    with st.expander("The cited passage", expanded=False):
        st.markdown(md_escape(source.text, paragraphs=True))
    pages = _page_count(lib, source.doc_id)
    offset_key = f"{key}_cite_offset_{n}"
    offset = st.session_state.get(offset_key, 0)
    page = min(max(source.page + offset, 0), max(pages - 1, source.page))
    left, middle, right = st.columns([1, 3, 1], vertical_alignment="center")
    # Buttons inside a dialog rerun the dialog alone: the page behind it, and its answer, stay as they are.
    if left.button("◀ Previous page", key=f"{key}_cite_prev_{n}", disabled=page <= 0):
        st.session_state[offset_key] = offset - 1
        st.rerun(scope="fragment")
    if right.button("Next page ▶", key=f"{key}_cite_next_{n}", disabled=page >= pages - 1):
        st.session_state[offset_key] = offset + 1
        st.rerun(scope="fragment")
    middle.page_link("pages/document.py", label=f"Open page {page + 1} in the Document page",
                     icon=":material/description:",
                     query_params={"doc": source.doc_id, "tab": "Pages", "page": str(page + 1),
                                   "hl": pv.box_param(boxes) if page == source.page else ""})
    try:
        if page != source.page:
            st.image(pv.page_image_with_boxes(lib, source.doc_id, page, []), width="stretch",
                     caption=f"Page {page + 1} (the passage is on page {source.page + 1})")
            return
        # The region first, where the eye lands; the whole page (a screen and more) a click below.
        # At its own size, as on the Search page: stretched to the dialog, a one-column crop came out at about
        # three times the page's print size, wider than the eye takes in.
        st.image(pv.crop_hit(lib, source.doc_id, page, boxes),
                 caption=f"Page {page + 1}: the cited passage highlighted")
        with st.expander(f"The whole of page {page + 1}"):
            st.image(pv.page_image_with_boxes(lib, source.doc_id, page, [], highlight=boxes), width="stretch")
    except PageImageUnavailable as exc:
        st.caption(str(exc).capitalize())


def _page_count(lib: Library, doc_id: str) -> int:
    doc = lib.documents.get(doc_id)
    return doc.pages if doc is not None else 0


def run_notes(result: QueryResult) -> str:
    t = result.timings
    parts = [f"retrieval {t.get('retrieve_s', 0) * 1000:.0f} ms"]
    if "generate_s" in t:
        parts.append(f"generation {t['generate_s'] * 1000:.0f} ms")
    parts.append(f"LLM calls {result.llm_calls}" + (f" (+{result.llm_cached} from cache)" if result.llm_cached else ""))
    if result.tokens:
        parts.append(f"≈{result.tokens.get('prompt', 0)} prompt + {result.tokens.get('completion', 0)} answer tokens")
    if result.llm_free:
        parts.append("without an LLM: " + ", ".join(result.llm_free))
    return " · ".join(parts)


def show_sources(lib: Library, result: QueryResult, cited_only: bool = False, page_crops: bool = True,
                 key: str = "ask") -> None:
    """Each source with its passage and a link to its page; tables and figures with their image; the cited text
    passages with the highlighted page region (`page_crops`), the others with a button that shows it. Drawing
    every source's page region cost the server and the browser about 10 page images per answer: with eight
    researchers asking at once (bench/load_ask.py) that, not the answer, set the wait."""
    cited = {n for s in (result.answer.sentences if result.answer else []) for n in s.citations}
    for source in result.context.sources:
        if cited_only and source.n not in cited:
            continue
        mark = "cited · " if source.n in cited else ""
        label = (f"\\[{source.n}\\] {md_escape(source.doc_title) or source.doc_id[:12]} — page {source.page + 1} · "
                 f"{mark}{md_escape(source.kind)}")
        with st.expander(label, expanded=source.n in cited and page_crops):
            st.caption(md_escape(source.section) or "(no section)")
            st.markdown(md_escape(source.text, paragraphs=True))
            boxes = source_boxes(lib, result, source)
            st.page_link("pages/document.py", label=f"Open page {source.page + 1} in the Document view",
                         icon=":material/description:",
                         query_params={"doc": source.doc_id, "tab": "Pages", "page": str(source.page + 1),
                                       "hl": pv.box_param(boxes)})
            if page_crops and source.n not in cited and source.kind not in MEDIA_KINDS:
                if st.button("Show the passage on its page", key=f"{key}_source_page_{source.n}",
                             icon=":material/find_in_page:"):
                    st.session_state[f"{key}_cite_offset_{source.n}"] = 0
                    cited_page(lib, result, source.n, key)
                continue
            _source_image(lib, source, boxes, page_crops)


def _source_image(lib: Library, source: Source, boxes, page_crops: bool) -> None:
    if source.kind in MEDIA_KINDS:
        from core.pipeline.media.images import item_image

        chunk = lib.chunks.get_many([source.chunk_id]).get(source.chunk_id)
        png = item_image(lib, chunk) if chunk else None
        if png:
            st.image(png, caption=f"The {source.kind} as it appears in the paper")
            return
    if not page_crops:
        return
    try:
        st.image(pv.crop_hit(lib, source.doc_id, source.page, boxes),
                 caption=f"Page {source.page + 1}: the cited passage highlighted")
    except PageImageUnavailable as exc:
        st.caption(str(exc).capitalize())


def show_retrieved(result: QueryResult, unique: dict[str, set] | None = None, limit: int = 15) -> None:
    """Entities, relations and chunks the mode retrieved; those no other compared mode found are marked."""
    unique = unique or {}
    r = result.retrieval
    only = " :green-badge[only here]"
    if r.keywords:
        st.caption(f"Keywords ({md_escape(r.keywords.source)}): low = {md_escape(', '.join(r.keywords.low))}; "
                   f"high = {md_escape(', '.join(r.keywords.high))}")
    if r.entities:
        lines = [f"- {md_escape(e.name)} ({md_escape(e.type)})" + (only if e.key in unique.get('entities', ()) else "")
                 for e in r.entities[:limit]]
        st.markdown(f"**Entities** ({len(r.entities)})\n" + "\n".join(lines))
    if r.relations:
        lines = [f"- {md_escape(x.source_name)} — {md_escape(x.target_name)}"
                 + (only if x.pair in unique.get('relations', ()) else "") for x in r.relations[:limit]]
        st.markdown(f"**Relations** ({len(r.relations)})\n" + "\n".join(lines))
    if r.reports:
        st.markdown(f"**Community reports** ({len(r.reports)})\n" + "\n".join(
            f"- {md_escape(str(rep.get('title', '')))}" for rep in r.reports))
    if r.chunks:
        lines = [f"- {md_escape(c.hit.doc_title[:50])}, p. {c.hit.page + 1} · "
                 f"{md_escape(' '.join(c.hit.window_text.split())[:90])}…"
                 + (only if c.id in unique.get('chunks', ()) else "") for c in r.chunks]
        st.markdown(f"**Passages** ({len(r.chunks)})\n" + "\n".join(lines))
    for note in r.notes:
        st.caption(md_escape(note))


def params_form(lib: Library, prefix: str, papers: dict[str, str]) -> dict:
    """The retrieval knobs shared by Ask and Compare, defaulting to the workspace's query settings."""
    q = lib.settings.query
    with st.expander("Retrieval options"):
        c1, c2 = st.columns(2)
        top_k = c1.number_input("Graph top-k (entities / relations)", 1, 200, q.top_k, key=f"{prefix}_top_k")
        chunk_top_k = c2.number_input("Passages kept", 1, 50, q.chunk_top_k, key=f"{prefix}_chunk_top_k")
        c1, c2, c3 = st.columns(3)
        ent = c1.number_input("Entity tokens", 0, 20000, q.max_entity_tokens, step=100, key=f"{prefix}_ent")
        rel = c2.number_input("Relation tokens", 0, 20000, q.max_relation_tokens, step=100, key=f"{prefix}_rel")
        chk = c3.number_input("Passage tokens", 0, 60000, q.max_chunk_tokens, step=500, key=f"{prefix}_chk")
        c1, c2, c3 = st.columns(3)
        rerank = c1.toggle("Rerank", q.rerank, key=f"{prefix}_rerank")
        bm25 = c2.toggle("BM25 fusion (naive, mix)", q.bm25, key=f"{prefix}_bm25")
        use_llm = c3.toggle("Use the LLM", lib.chat_model() is not None, key=f"{prefix}_use_llm",
                            disabled=lib.settings.llm.provider == "none",
                            help="Off: keywords and answer without an LLM even when one is set.")
        vlm_images = st.toggle("Send the context's table and figure images to the VLM", False,
                               key=f"{prefix}_vlm_images", disabled=lib.settings.vlm.provider == "none",
                               help="RAG-Anything's VLM-enhanced query: the VLM set on the Settings page sees the "
                                    "images and writes the answer. Needs a VLM.")
        doc_ids = st.multiselect("Papers", list(papers), format_func=lambda i: papers[i], key=f"{prefix}_papers",
                                 placeholder="all ready papers")
    return dict(top_k=int(top_k), chunk_top_k=int(chunk_top_k), max_entity_tokens=int(ent),
                max_relation_tokens=int(rel), max_chunk_tokens=int(chk), rerank=rerank, bm25=bm25,
                use_llm=use_llm, doc_ids=list(doc_ids), vlm_images=vlm_images)


def make_params(lib: Library, mode: Mode | None, options: dict, context_only: bool) -> QueryParams:
    """The form's knobs over the workspace's; mode None: the workspace's default mode."""
    return QueryParams.from_config(lib.settings.query, mode=mode, context_only=context_only, **options)
