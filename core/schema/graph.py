"""Records of the entity graph: what an extractor returns per chunk, and the merged nodes and edges."""
from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from core.schema.records import Chunk

RELATED = "RELATED"  # entity — entity, undirected (source < target)
MENTIONED_IN = "MENTIONED_IN"  # entity → paper node
PAPER_PREFIX = "paper:"  # paper node keys; entity keys never contain ':' (normalisation strips it)


def paper_key(doc_id: str) -> str:
    return PAPER_PREFIX + doc_id


def text_sha(text: str) -> str:
    """The hash an extraction is kept under with its chunk's text: a chunk whose text changed is extracted again."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class EntityType(StrEnum):
    """What a node is. The values are what the graph stores and the Graph page's legend shows; an LLM may write
    other types (the configured GraphConfig.entity_types), which are kept as written."""

    METHOD = "method"
    MODEL = "model"
    DATASET = "dataset"
    METRIC = "metric"
    TASK = "task"
    SOFTWARE = "software"
    PERSON = "person"
    ORGANIZATION = "organization"  # American spelling: LightRAG's, and what graphs built so far store
    FIELD = "field"
    CONCEPT = "concept"  # the catch-all: a term with no more specific type
    # Life sciences and medicine (core/graph/data/fields/life.json)
    GENE_OR_PROTEIN = "gene_or_protein"
    DISEASE = "disease"
    CHEMICAL = "chemical"  # also a type of the physical sciences
    ORGANISM = "organism"
    CELL_OR_TISSUE = "cell_or_tissue"
    ASSAY = "assay"
    # Physical sciences (core/graph/data/fields/physical.json)
    MATERIAL = "material"
    PROPERTY = "property"
    INSTRUMENT = "instrument"
    TABLE = "table"  # a paper's table, figure or equation (core/pipeline/graph/media_entities.py)
    FIGURE = "figure"
    EQUATION = "equation"
    PAPER = "paper"  # a paper node (PAPER_PREFIX keys)


@dataclass
class ExtractedEntity:
    name: str
    type: str
    description: str


@dataclass
class ExtractedRelation:
    source: str  # entity names as the extractor wrote them
    target: str
    keywords: str
    description: str
    strength: float = 1.0


@dataclass
class ChunkExtraction:
    chunk_id: str
    entities: list[ExtractedEntity] = field(default_factory=list)
    relations: list[ExtractedRelation] = field(default_factory=list)
    extractor: str = ""  # "spacy" or "llm:<model name>"
    dropped: int = 0  # records that could not be used (malformed, unknown endpoints...)
    llm_calls: int = 0  # calls actually made (cache hits excluded)
    errors: list[str] = field(default_factory=list)  # why records were dropped, for the status message
    # The LLM could not be reached for good: nothing is stored for this chunk, so the next run retries it.
    failed: bool = False
    # Retrieval only (core/graph/mention_index.py), never shown: the keys of every candidate phrase the chunk's
    # sentences mention, terms or not, so the graph walks reach a passage through a name said once (the LLM-free
    # extractor; the LLM extractor leaves it empty and retrieval walks its entities alone).
    phrases: list[str] = field(default_factory=list)


class Extractor(Protocol):
    name: str

    def extract(self, chunks: Sequence[Chunk]) -> Iterator[ChunkExtraction]:
        """One ChunkExtraction per chunk, in any order; never raises for one bad chunk or reply."""


@dataclass
class GraphNode:
    key: str  # normalised name, or PAPER_PREFIX + doc id
    name: str  # display name: the most frequent spelling
    type: str
    description: str
    source_chunks: list[str] = field(default_factory=list)
    doc_ids: list[str] = field(default_factory=list)
    extractors: list[str] = field(default_factory=list)
    community: int | None = None
    year: int | None = None  # paper nodes: publication year when the paper states it

    @property
    def is_paper(self) -> bool:
        return self.key.startswith(PAPER_PREFIX)


@dataclass
class GraphEdge:
    source: str
    target: str
    relation: str = RELATED
    keywords: str = ""
    description: str = ""
    weight: float = 1.0
    source_chunks: list[str] = field(default_factory=list)
    doc_ids: list[str] = field(default_factory=list)
    year: int | None = None  # MENTIONED_IN: the paper's year

    @property
    def pair(self) -> tuple[str, str]:
        return self.source, self.target


@dataclass
class EntitySource:
    """One chunk's contribution to an entity: the provenance every merged node is rebuilt from."""

    key: str
    doc_id: str
    chunk_id: str
    ord: int  # chunk index in its document: merge order is (doc id, chunk index), never insertion time
    name: str
    type: str
    description: str
    extractor: str


@dataclass
class RelationSource:
    source: str  # entity keys, source < target
    target: str
    doc_id: str
    chunk_id: str
    ord: int
    keywords: str
    description: str
    strength: float
    extractor: str


@dataclass
class PaperRecord:
    """What the graph knows about one paper: its node, and which extractor built its part of the graph."""

    doc_id: str
    title: str
    year: int | None = None
    extractor: str = ""
    entity_count: int = 0
    relation_count: int = 0
    dropped: int = 0
    failed_chunks: int = 0
    llm_calls: int = 0
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class Reference:
    """A bibliography entry of a paper (MinerU `list` items of sub_type `reference`), kept for citation links."""

    doc_id: str
    index: int
    text: str
    year: int | None = None
