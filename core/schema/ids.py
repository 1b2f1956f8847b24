"""Chunk and embedding-window ids: "<doc id>:<chunk index>" and "<chunk id>:<window index>".

They are stored in SQLite, Chroma and the graph's provenance lists, so their spelling never changes. Document ids
(sha256 digests, or a bench's plain names) contain no ':'.
"""
from __future__ import annotations

SEP = ":"


def chunk_id(doc_id: str, index: int) -> str:
    return f"{doc_id}{SEP}{index}"


def window_id(chunk_id: str, n: int) -> str:
    return f"{chunk_id}{SEP}{n}"


def window_ids(chunk_id: str, count: int) -> list[str]:
    """The ids of a chunk's windows 0..count-1."""
    return [window_id(chunk_id, n) for n in range(count)]


def doc_id_of(chunk_or_window_id: str) -> str:
    return chunk_or_window_id.split(SEP, 1)[0]


def chunk_id_of(window_id: str) -> str:
    return window_id.rsplit(SEP, 1)[0]


def chunk_order(chunk_id: str) -> tuple[str, int]:
    """Sort key: a paper's chunks in reading order (chunk 10 after chunk 9); an id of another shape sorts by
    itself."""
    doc, _, index = chunk_id.rpartition(SEP)
    return (doc, int(index)) if index.isdigit() else (chunk_id, 0)
