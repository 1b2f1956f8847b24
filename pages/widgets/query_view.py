"""Streamlit rendering shared by the Ask and Compare pages: an answer with its citations, the sources (each
passage's page region on demand, in a dialog: pages/widgets/passage_dialog.py), and what a mode retrieved. Paper
text is untrusted: everything is escaped."""
from __future__ import annotations

import re
from contextlib import contextmanager

import streamlit as st

from core.library import Library
from core.models.embedding import EmbeddingModelError
from core.models.llm.base import LLMError
from core.presentation import display as present
from core.presentation.bibtex import to_bibtex
from core.presentation.citations import author_year, papers_metadata
from core.query.engine import QueryError
from core.query.records import MATCHED, UNSUPPORTED, Answer, QueryParams, QueryResult, Source
from core.schema.modes import Mode
from core.store.base import StoreUnavailable
from core.text.plain import strip_markup
from core.text.safe_markdown import md_escape, passage_markdown
from pages.widgets.first_steps import show_first_steps
from pages.widgets.passage_dialog import document_link, open_passage, source_boxes

MEDIA_KINDS = ("table", "image", "equation")
_MARKERS = re.compile(r"\s*\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\]")
_ESCAPED_MARKER = re.compile(r"\\\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\\\]")


def ready_papers_or_stop(lib: Library, page: str) -> dict[str, str]:
    """Labels of the ready papers; with none, the page says what to do first (with a link there) and stops."""
    ready = {d.id: present.document_label(d) for d in lib.documents.ready_papers()}
    if not ready:
        show_first_steps(lib, page)
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


def answer_markdown(answer: Answer, known: set[int]) -> str:
    """Escaped sentences; each [n] stays as text (the buttons under the answer open it in place), a marker that
    matches no source is flagged with "?", a sentence citing nothing is flagged."""
    def marked(match: re.Match) -> str:
        numbers = re.split(r"\s*[,;]\s*", match.group(1))
        # one bold run per marker, a space between: "**[7]****[2]**" would show its asterisks
        return " ".join(f"**\\[{n}\\]**" if int(n) in known else f"\\[{n}?\\]" for n in numbers)

    parts = []
    for k, sentence in enumerate(answer.sentences):
        text = _ESCAPED_MARKER.sub(marked, md_escape(sentence.text))
        if answer.abstained and k == 1 and sentence.citations:
            text = f"**{text}**"  # the most probable sentence of the related passages, highlighted, not stated
        support = getattr(sentence, "support", "")
        if support == UNSUPPORTED:
            text += " :red-badge[not found in the passages]"
        elif support == MATCHED:
            text += f" :blue-badge[source found by PaperGraph: \\[{sentence.citations[0]}\\]]"
        elif not sentence.cited and not answer.abstained:
            text += " :orange-badge[no citation]"
        parts.append(text)
    return " ".join(parts) if not answer.abstained else "\n\n".join(parts)


def show_answer(lib: Library, result: QueryResult, key: str = "ask") -> None:
    """One caption, then one markdown block: the short answer (bold) over the answer with its [n] markers; then a
    button per cited source that shows the cited page in place (a dialog): a link would open a new tab, and with
    it a new session. Few elements on purpose: each is a message to every browser and a node it lays out."""
    answer = result.answer
    if answer is None:
        st.info("Context only: no answer was generated. The assembled context is below.")
        return
    short = (getattr(answer, "short_answer", "") or "").strip()
    first = _MARKERS.sub("", answer.sentences[0].text).strip() if answer.sentences else None
    if first is not None and short.removesuffix(".") == first.removesuffix("."):
        short = ""  # the whole first sentence: shown once, not twice
    st.markdown((f"**{md_escape(short)}**\n\n" if short else "")
                + answer_markdown(answer, {s.n for s in result.context.sources}))
    citation_buttons(lib, result, key)
    unsupported = [x for x in answer.sentences if getattr(x, "support", "") == UNSUPPORTED]
    if answer.off_the_passages:
        st.warning("Nothing this answer says is in the passages: the model wrote it from its own knowledge, not "
                   "from your papers.")
    elif unsupported:
        st.warning(f"{len(unsupported)} sentence(s) say something no passage of the context says: check them "
                   "before relying on them.")
    elif answer.uncited and not answer.extractive:
        st.warning(f"{len(answer.uncited)} sentence(s) cite no source: check them before relying on them.")
    if answer.unknown_citations:
        st.warning(f"The answer cites sources that do not exist: {answer.unknown_citations}.")


def answer_note(result: QueryResult) -> str:
    """Who wrote the answer, for the caption above it."""
    if result.answer is None:
        return "context only"
    answer = result.answer
    sure = "" if answer.confidence is None else (  # an abstention's confidence: that abstaining is right
        f" · {answer.confidence:.0%} likely the papers do not answer it" if answer.abstained
        else f" · confidence {answer.confidence:.0%}")
    if answer.reader == "results":  # no confidence shown: the records' own precision is measured in docs/tuning.md
        return ("Computed (no LLM) from the results the papers' tables report: each number is cited to its table "
                "cell; check the cell before relying on it")
    if answer.reader == "select":  # a model chose; the papers' sentences are the answer
        if answer.abstained:
            return (f"Read by {md_escape(answer.model)}: no sentence of the passages answers this, so nothing is "
                    f"stated{sure}")
        return (f"Read by {md_escape(answer.model)}: it chose the sentence that answers, quoted verbatim from the "
                f"paper{sure}")
    if answer.extractive:
        if answer.abstained:
            return f"Extractive answer (no LLM): no passage states it with enough confidence{sure}; nothing is stated"
        how = {"extractive (no LLM), compared": "compared from two passages",
               "extractive (no LLM), two passages": "chained through two passages"}.get(answer.model,
                                                                                        "sentences of the passages")
        return f"Extractive answer (no LLM): {how}, not written by a model{sure}"
    return f"Written by {md_escape(answer.model)}; every sentence is checked against the passages{sure}"


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
                open_passage(lib, result, source.n, key, cited=True)


def lazy_expander(label: str, key: str, expanded: bool = False):
    """An expander whose content runs only while it is open (opening it reruns the enclosing fragment). A plain
    expander computes and sends its content even closed: the assembled context alone is ~15 KB per answer."""
    return st.expander(label, expanded=expanded, key=key, on_change="rerun")


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


def bridge_note(source: Source) -> str:
    """Why a passage that shares no words with the question is among the sources (ppr's second hop)."""
    if not source.bridge_from:
        return ""
    shares = f"shares “{md_escape(source.bridge_name)}”" if source.bridge_name else "shares a name"
    return f" · second hop: {shares} with \\[{source.bridge_from}\\]"


def cited_numbers(result: QueryResult) -> set[int]:
    return {n for s in (result.answer.sentences if result.answer else []) for n in s.citations}


def show_sources(lib: Library, result: QueryResult, key: str = "ask", lazy_key: str | None = None) -> None:
    """Each source in an expander (the cited ones open): its passage, a link to its page in the Document view,
    tables and figures with their image, text passages with a button that shows the page region in a dialog.
    With `lazy_key`, each expander's content runs only while it is open (keys `{lazy_key}_src_{n}`: one set per
    answer, so a new answer starts from its own defaults). Page regions are drawn on demand only: drawing them
    for every source (or even every cited one) cost the server and the browser more than the answer did with
    eight researchers asking at once (bench/load_ask.py)."""
    cited = cited_numbers(result)
    names = source_names(lib, result)
    for source in result.context.sources:
        is_cited = source.n in cited
        title = md_escape(source.doc_title) or source.doc_id[:12]
        # "Cohan et al. 2020, p. 3 — SPECTER: …" when the paper's metadata names its authors, else title and page.
        where = (f"{md_escape(names[source.doc_id])}, p. {source.page + 1} — {title}" if names.get(source.doc_id)
                 else f"{title} — page {source.page + 1}")
        label = (f"\\[{source.n}\\] {where} · "
                 f"{'cited · ' if is_cited else ''}{md_escape(source.kind)}{bridge_note(source)}")
        if lazy_key is None:
            with st.expander(label):
                _source_body(lib, result, source, is_cited, key)
            continue
        box = lazy_expander(label, f"{lazy_key}_src_{source.n}", expanded=is_cited)
        if box.open:
            with box:
                _source_body(lib, result, source, is_cited, key)


def source_names(lib: Library, result: QueryResult) -> dict[str, str]:
    """doc id → "Cohan et al. 2020" for the sources' papers whose metadata names authors (one read for all)."""
    metas = lib.metadata.get_many({s.doc_id for s in result.context.sources})
    return {d: name for d, m in metas.items() if (name := author_year(m))}


def bibtex_of_cited(lib: Library, result: QueryResult, key: str) -> None:
    """"Export BibTeX" of the papers the answer cites, in citation order (nothing when it cites none)."""
    doc_ids = list(dict.fromkeys(s.doc_id for n in sorted(cited_numbers(result))
                                 if (s := result.context.source(n)) is not None))
    if doc_ids:
        st.download_button(f"Export BibTeX of the {len(doc_ids)} cited paper{'s' if len(doc_ids) > 1 else ''}",
                           lambda: to_bibtex(papers_metadata(lib, doc_ids)), file_name="cited.bib",
                           mime="application/x-bibtex",
                           key=f"{key}_bibtex", icon=":material/format_quote:", on_click="ignore")


def _source_body(lib: Library, result: QueryResult, source: Source, cited: bool, key: str) -> None:
    st.caption(md_escape(source.section) or "(no section)")
    st.markdown(passage_markdown(source.text))  # the parser's HTML and Markdown read as text
    document_link(source, source.page, source_boxes(lib, result, source),
                  f"Open page {source.page + 1} in the Document view")
    if source.kind in MEDIA_KINDS and _source_image(lib, source):
        return
    if st.button("Show the passage on its page", key=f"{key}_source_page_{source.n}",
                 icon=":material/find_in_page:"):
        open_passage(lib, result, source.n, key, cited=cited)


def _source_image(lib: Library, source: Source) -> bool:
    """The table's or figure's own image, as it appears in the paper; False when it has none."""
    from core.content.images import item_image

    chunk = lib.chunks.get_many([source.chunk_id]).get(source.chunk_id)
    png = item_image(lib, chunk) if chunk else None
    if png:
        st.image(png, caption=f"The {source.kind} as it appears in the paper")
    return bool(png)


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
                 f"{md_escape(' '.join(strip_markup(c.hit.window_text).split())[:90])}…"
                 + (only if c.id in unique.get('chunks', ()) else "") for c in r.chunks]
        st.markdown(f"**Passages** ({len(r.chunks)})\n" + "\n".join(lines))
    for note in r.notes:
        st.caption(md_escape(note))


def params_form(lib: Library, prefix: str, papers: dict[str, str]) -> dict:
    """The retrieval knobs shared by Ask and Compare, defaulting to the workspace's query settings; they apply to
    the next question. Drawn only while open (a lazy expander outside the question's form), their widgets neither
    rerun on a change (`on_change="ignore"`: the value goes with the next question) nor lose it closed
    (`persist_state="page"`). Inside the form they were 22 of the ~57 messages of every answer, each a re-render of
    the page in every researcher's browser: ~0.1 of its ~0.4 CPU-s per answer (bench/load_ask.py)."""
    q = lib.settings.query
    values = dict(top_k=q.top_k, chunk_top_k=q.chunk_top_k, ent=q.max_entity_tokens, rel=q.max_relation_tokens,
                  chk=q.max_chunk_tokens, rerank=q.rerank, bm25=q.bm25, use_llm=lib.reader_model() is not None,
                  vlm_images=False, papers=[])
    values.update({name: st.session_state[f"{prefix}_{name}"] for name in values
                   if st.session_state.get(f"{prefix}_{name}") is not None})
    box = lazy_expander("Retrieval options (for the next question)", f"{prefix}_options")
    if box.open:
        with box:
            values.update(_option_widgets(lib, prefix, papers, values))
    return dict(top_k=int(values["top_k"]), chunk_top_k=int(values["chunk_top_k"]),
                max_entity_tokens=int(values["ent"]), max_relation_tokens=int(values["rel"]),
                max_chunk_tokens=int(values["chk"]), rerank=bool(values["rerank"]), bm25=bool(values["bm25"]),
                use_llm=bool(values["use_llm"]), doc_ids=[d for d in values["papers"] if d in papers],
                vlm_images=bool(values["vlm_images"]))


def _option_widgets(lib: Library, prefix: str, papers: dict[str, str], values: dict) -> dict:
    kept = dict(on_change="ignore", persist_state="page")
    c1, c2 = st.columns(2)
    top_k = c1.number_input("Graph top-k (entities / relations)", 1, 200, values["top_k"], key=f"{prefix}_top_k",
                            **kept)
    chunk_top_k = c2.number_input("Passages kept", 1, 50, values["chunk_top_k"], key=f"{prefix}_chunk_top_k", **kept)
    c1, c2, c3 = st.columns(3)
    ent = c1.number_input("Entity tokens", 0, 20000, values["ent"], step=100, key=f"{prefix}_ent", **kept)
    rel = c2.number_input("Relation tokens", 0, 20000, values["rel"], step=100, key=f"{prefix}_rel", **kept)
    chk = c3.number_input("Passage tokens", 0, 60000, values["chk"], step=500, key=f"{prefix}_chk", **kept)
    c1, c2, c3 = st.columns(3)
    rerank = c1.toggle("Rerank", values["rerank"], key=f"{prefix}_rerank", **kept)
    bm25 = c2.toggle("BM25 fusion (naive, mix)", values["bm25"], key=f"{prefix}_bm25", **kept)
    use_llm = c3.toggle("Use the model", values["use_llm"], key=f"{prefix}_use_llm",
                        disabled=lib.reader_model() is None,
                        help="Off: keywords and answer without a model (the extractive reader) even when one is "
                             "set or installed.", **kept)
    vlm_images = st.toggle("Send the context's table and figure images to the VLM", values["vlm_images"],
                           key=f"{prefix}_vlm_images", disabled=lib.settings.vlm.provider == "none",
                           help="RAG-Anything's VLM-enhanced query: the VLM set on the Settings page sees the "
                                "images and writes the answer. Needs a VLM.", **kept)
    doc_ids = st.multiselect("Papers", list(papers), [d for d in values["papers"] if d in papers],
                             format_func=lambda i: papers[i], key=f"{prefix}_papers", placeholder="all ready papers",
                             **kept)
    return dict(top_k=top_k, chunk_top_k=chunk_top_k, ent=ent, rel=rel, chk=chk, rerank=rerank, bm25=bm25,
                use_llm=use_llm, vlm_images=vlm_images, papers=doc_ids)


def make_params(lib: Library, mode: Mode | None, options: dict, context_only: bool) -> QueryParams:
    """The form's knobs over the workspace's; mode None: the workspace's default mode."""
    return QueryParams.from_config(lib.settings.query, mode=mode, context_only=context_only, **options)
