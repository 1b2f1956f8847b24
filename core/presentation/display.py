"""How documents, statuses and settings are named and shaped for display: plain values, no Streamlit."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from core.library import Library
from core.presentation.citations import authors_short
from core.query.warmup import warming
from core.schema.records import DocStatus, Document, GraphStatus
from core.settings.config import Settings

NO_LLM_NOTE = "no LLM configured: everything runs on the embedded, LLM-free default"


# ---------------------------------------------------------------------------------------------- status

# Material icons ship with Streamlit's frontend; emoji depend on the reader's fonts.
STATUS_BADGES = {"queued": ":gray[:material/schedule:]", "parsing": ":blue[:material/hourglass_top:]",
                 "indexing": ":blue[:material/hourglass_bottom:]", "ready": ":green[:material/check_circle:]",
                 "failed": ":red[:material/error:]"}


def ordered_counts(counts: Mapping[DocStatus, int]) -> dict[str, int]:
    """Counts by status value in the order the sidebar and the Library list them, statuses with none left out."""
    return {s.value: counts[s] for s in DocStatus if counts.get(s)}


def any_in_progress(docs: list[Document]) -> bool:
    return any(d.status.in_progress or graph_busy(d) for d in docs)


def graph_busy(doc: Document) -> bool:
    return doc.status == DocStatus.READY and doc.graph_status.in_progress


def status_snapshot(docs: list[Document]) -> tuple[tuple[str, str, str], ...]:
    """What the Library's live progress compares to know a status changed: the same whatever the list's order
    (the page shows the newest first, the store lists the oldest first; compared in order, they always differed
    and the page reran without pause)."""
    return tuple(sorted((d.id, d.status.value, d.graph_status.value) for d in docs))


def newest_first(docs: list[Document]) -> list[Document]:
    """The Library table's order: the latest added on top, where an upload is seen without scrolling."""
    return sorted(docs, key=lambda d: (-d.created_at, d.id))


def table_identity(docs: list[Document]) -> str:
    """Names the table's rows in their order: the Library keys its table by it, so a selection (row positions)
    never outlives the rows it was made on — an upload from another session lands on top and would shift it."""
    import hashlib

    return hashlib.sha256("\n".join(d.id for d in docs).encode()).hexdigest()[:12]


def upload_notices_to_keep(notices: list[tuple], docs: list[Document]) -> list[tuple]:
    """The upload outcomes still worth showing: an "added and queued" one only while its document is queued or
    being parsed or indexed (once it is ready the table says so; a failure has its own message). Refusals and
    "already in the library" stay until dismissed. A notice is (kind, name, AddResult | None, error)."""
    by_id = {d.id: d for d in docs}

    def waiting(result) -> bool:
        doc = by_id.get(result.doc_id)
        return doc is not None and doc.status.in_progress

    return [n for n in notices if n[3] or n[2] is None or n[2].outcome != "added" or waiting(n[2])]


def extractor_label(extractor: str) -> str:
    """Which extractor built a paper's part of the graph, in words."""
    if not extractor:
        return ""
    return ", ".join("LLM-free (spaCy)" if e == "spacy" else e.removeprefix("llm:") + " (LLM)"
                     for e in extractor.split(", "))


def stage_text(doc: Document, detail: str) -> str:
    """'parsing: mineru (flash): analysing layout' rather than 'parsing: parsing: …'."""
    status = doc.status.value
    detail = (detail or "").strip()
    if detail.lower().startswith(status):
        detail = detail[len(status):].lstrip(" :")
    return f"{status}: {detail}" if detail else status


def format_items(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def format_timings(timings: dict[str, float]) -> str:
    labels = {"parse_s": "parse", "chunk_s": "chunk", "embed_s": "embed", "index_s": "index", "total_s": "total",
              "graph_total_s": "graph"}
    return ", ".join(f"{label} {timings[key]:.1f}s" for key, label in labels.items() if key in timings)


def cited_by_counts(resolved) -> dict[str, int]:
    """How many papers of the library cite each one, from the references that resolve to a library paper."""
    citing: dict[str, set[str]] = {}
    for ref in resolved:
        if ref.cited_doc_id and ref.cited_doc_id != ref.doc_id:
            citing.setdefault(ref.cited_doc_id, set()).add(ref.doc_id)
    return {doc_id: len(papers) for doc_id, papers in citing.items()}


def document_rows(docs: list[Document], papers: dict | None = None, metas: dict | None = None,
                  cited_by: dict[str, int] | None = None) -> list[dict]:
    """One row per document for the Library table, in the order given (plain values: st.dataframe renders no
    HTML). `papers` are the graph's PaperRecords by document id, `metas` their bibliographic metadata, `cited_by`
    how many papers of the library cite each (cited_by_counts)."""
    import datetime as dt

    papers, metas, cited_by = papers or {}, metas or {}, cited_by or {}

    def graph_cell(d: Document) -> str:
        if d.status != DocStatus.READY:
            return ""
        return "not built" if d.graph_status == GraphStatus.NONE else d.graph_status.value

    return [{
        "status": d.status.value,
        "title": d.display_title,
        "authors": authors_short(metas.get(d.id)),
        "year": metas[d.id].year if d.id in metas else None,
        "venue": metas[d.id].venue if d.id in metas else "",
        "cited by": cited_by.get(d.id, 0) if d.status == DocStatus.READY else None,
        "pages": d.pages or None,
        "chunks": d.chunk_count if d.status == DocStatus.READY else None,
        "graph": graph_cell(d),
        "entities": papers[d.id].entity_count if d.id in papers else None,
        "relations": papers[d.id].relation_count if d.id in papers else None,
        "extractor": extractor_label(papers[d.id].extractor) if d.id in papers else "",
        "message": d.message,
        "added": dt.datetime.fromtimestamp(d.created_at) if d.created_at else None,
        "graph message": d.graph_message,
        "items": format_items(d.item_counts),
        "file": d.filename,
        "backend": d.backend,
        "timings": format_timings(d.timings),
        "id": d.id[:12],
    } for d in docs]


@dataclass
class ModelStatus:
    embedding_model: str
    loaded: bool
    llm_note: str = NO_LLM_NOTE
    warming: bool = False  # the app's background warm-up is loading it for the first question

    @property
    def embedding_state(self) -> str:
        if self.loaded:
            return "loaded"
        if self.warming:
            return "loading in the background for the first question"
        return "not loaded yet (loads on first search or ingest)"


def model_status(lib: Library) -> ModelStatus:
    from core.models.embedding import is_loaded  # numpy only; sentence_transformers loads with the model
    from core.models.llm.factory import describe_llm

    note = NO_LLM_NOTE if lib.settings.llm.provider == "none" else describe_llm(lib.settings)
    if lib.settings.llm.provider == "none" and (reader := lib.reader_model()) is not None:
        note = f"none configured; answers are read by the installed {reader.name} (the graph stays LLM-free)"
    return ModelStatus(lib.settings.embedding.model, is_loaded(lib.settings.embedding.model), note, warming(lib))


def llm_usage_text(usage: dict) -> str:
    """core.models.llm.cache.usage_summary in one line: what the LLM cost, and what the cache saved."""
    if not usage["calls"] and not usage["cache_hits"]:
        return "No LLM call made yet in this workspace."
    purposes = ", ".join(f"{p or 'other'} {u['calls']}" for p, u in usage["by_purpose"].items() if u["calls"])
    return (f"{usage['calls']:,} LLM calls made ({purposes or 'none'}), {usage['cache_hits']:,} answered from the "
            f"cache, {usage['errors']:,} failed; {usage['prompt_tokens']:,} prompt + "
            f"{usage['completion_tokens']:,} completion tokens, {usage['latency_s']:.0f} s waiting.")


def document_label(doc: Document) -> str:
    """How a document is named in pickers: its title, with the file name when the title came from elsewhere."""
    title = doc.display_title
    return title if title == doc.filename else f"{title} ({doc.filename})"


# ---------------------------------------------------------------------------------------------- settings form

# The Settings page's tabs: the most used first (the LLM), then the pipeline's stages in order. Every section of
# Settings is on exactly one tab (tests/presentation/test_settings_layout.py).
SETTINGS_TABS: list[tuple[str, tuple[str, ...]]] = [
    ("LLM", ("llm",)),
    ("Parsing & chunking", ("parsing", "chunking", "metadata")),
    ("Embedding & store", ("embedding", "store")),
    ("Graph", ("graph", "explorer")),
    ("Asking", ("query",)),
    ("VLM", ("vlm",)),
    ("Workers", ("compute",)),
]


def settings_tabs() -> list[tuple[str, tuple[str, ...]]]:
    """(tab label, Settings section names) in the page's order; a section the list forgets gets a tab of its own
    at the end, so a new stage never goes missing from the page."""
    from dataclasses import fields

    placed = {name for _, names in SETTINGS_TABS for name in names}
    extra = [(getattr(Settings(), f.name).TITLE, (f.name,)) for f in fields(Settings) if f.name not in placed]
    return SETTINGS_TABS + extra


def settings_from_values(values: dict[str, dict]) -> Settings:
    """The form's values as Settings; validation is core.settings.config's (save_settings runs it)."""
    from dataclasses import fields, replace

    base = Settings()
    return replace(base, **{f.name: replace(getattr(base, f.name), **values.get(f.name, {}))
                            for f in fields(Settings)})
