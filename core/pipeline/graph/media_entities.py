"""Tables, figures and equations as graph entities: "Table 2 — GLUE dev results by model size" (type table, figure
or equation; named after its caption, after its paper only when it has none), linked BELONGS_TO its paper and
RELATED to the entities its description mentions.

The media entity is added to its chunk's extraction before the extraction is stored, so it is a contribution
like any other: deleting the paper removes it, adding the paper back makes the same node (core/graph/merge.py).
Its links: every entity the extractor found in the item's chunk (which holds its caption and description), and
the entities a VLM named while describing the image.
"""
from __future__ import annotations

import re
from dataclasses import replace

from core.content.media_doc import load_media_doc
from core.content.media_items import ENTITY_NAME_SEP, entity_name
from core.library import Library
from core.schema.graph import ChunkExtraction, EntityType, ExtractedEntity, ExtractedRelation, GraphEdge, GraphNode
from core.schema.records import MEDIA_TYPES, Chunk

BELONGS_TO = "BELONGS_TO"  # media entity → its paper node (other entities are MENTIONED_IN papers)
ENTITY_TYPES = {"table": EntityType.TABLE.value, "image": EntityType.FIGURE.value,
                "equation": EntityType.EQUATION.value}
MEDIA_ENTITY_TYPES = frozenset(ENTITY_TYPES.values())
_DESCRIPTION_CHARS = 600
CAPTION_CHARS = 60  # of a media entity's name: what a graph label can show
# "Table 2:", "Fig. 3.", "Figure 1 -", "TABLE IV." at the start of a caption: the label says it already.
_CAPTION_LABEL = re.compile(r"^\s*(table|tab\.|figure|fig\.|equation|eq\.)\s*[\dIVXLivxl]+[a-z]?\s*[:.|\-–—]?\s*", re.I)


def short_caption(caption: str, max_chars: int = CAPTION_CHARS) -> str:
    """What a caption says the item shows, short: without its label, its first sentence, cut at a word."""
    text = _CAPTION_LABEL.sub("", " ".join((caption or "").split()))
    text = re.split(r"(?<=[a-z0-9)\]])\.\s", text, maxsplit=1)[0].rstrip(" .:;,")
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars - 1]
    if " " in cut[max_chars // 2:]:
        cut = cut[:cut.rfind(" ")]
    return cut.rstrip(" ,;:-–(") + "…"


def media_entity_name(label: str, caption: str, paper_title: str) -> str:
    """"Table 2 — GLUE dev results by model size"; "Table 2 — <the paper's short title>" when it has no caption."""
    shown = short_caption(caption)
    return f"{label}{ENTITY_NAME_SEP}{shown}" if len(shown) >= 3 else entity_name(label, paper_title)


def with_media_entity(lib: Library, chunk: Chunk, extraction: ChunkExtraction) -> ChunkExtraction:
    """`extraction` of an item chunk with the item's entity and its links added; any other chunk unchanged."""
    if chunk.kind not in MEDIA_TYPES or not chunk.item_indices or extraction.failed:
        return extraction
    doc = load_media_doc(lib, chunk.doc_id)
    item = next((i for i in doc.media if i.index == chunk.item_indices[0]), None)
    record = lib.documents.get(chunk.doc_id)
    if item is None or record is None:
        return extraction
    label = doc.labels[item.index]
    name = media_entity_name(label, item.caption, record.display_title)
    description = doc.current(item)
    shown = (description.text if description else chunk.text)
    entity = ExtractedEntity(name=name, type=ENTITY_TYPES[item.type],
                             description=f"{label} of \"{record.display_title}\""
                                         f"{': ' + item.caption if item.caption else ''}. {shown}"[:_DESCRIPTION_CHARS])
    seen = {name.casefold()}
    vlm_entities = []
    for e in (description.entities if description else []):
        if e.name.casefold() not in seen:
            vlm_entities.append(ExtractedEntity(name=e.name, type=e.type or "concept",
                                                description=e.description or f"Shown in {name}."))
    linked = []
    for e in list(extraction.entities) + vlm_entities:
        if e.name.casefold() in seen:
            continue
        seen.add(e.name.casefold())
        linked.append(ExtractedRelation(source=name, target=e.name, keywords=f"{label.split()[0].lower()}, shows",
                                        description=f"{name} shows {e.name}.", strength=1.0))
    return replace(extraction, entities=[entity, *extraction.entities, *vlm_entities],
                   relations=[*extraction.relations, *linked])


def paper_edge(edge: GraphEdge, node: GraphNode | None) -> GraphEdge:
    """The edge from an entity to its paper: BELONGS_TO for a table, figure or equation, as it is."""
    if node is not None and node.type in MEDIA_ENTITY_TYPES:
        return replace(edge, relation=BELONGS_TO)
    return edge
