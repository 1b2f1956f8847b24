"""Which vector space a workspace's vectors are in, so vectors of two models or variants are never compared.

The workspace's SQLite records one space ("<model>|fp32", "<model>|int8": core.models.embedding.vector_space).
Asking for an embedder whose space differs while vectors are stored is refused with what to do (set the setting
back, or `python -m core reembed`); with no vectors stored the new space is simply recorded. A workspace made before
the record existed holds the only variant there was then: the configured model in fp32. A re-embedding marks the
record first, so one interrupted half-way is refused until it is run again to the end."""
from __future__ import annotations

import threading
from collections.abc import Callable

from core.store.base import VectorSpaceRecord

REEMBEDDING = "reembedding:"  # prefix of the record while `reembed` rewrites the vectors
_checked: set[tuple[str, str]] = set()  # (record's location, space) pairs this process has found to agree
_lock = threading.Lock()


class VectorSpaceMismatch(ValueError):
    """The settings ask for an embedder whose vectors cannot be compared with the workspace's. User-facing; a
    ValueError so the CLI and the Library page refuse an upload with it as they refuse other bad input."""


def recorded_space(record: VectorSpaceRecord) -> str | None:
    return record.recorded()


def record_space(record: VectorSpaceRecord, space: str) -> None:
    record.record(space)
    with _lock:
        _checked.difference_update({k for k in _checked if k[0] == record.location})


def check_space(record: VectorSpaceRecord, space: str, has_vectors: Callable[[], bool], legacy_space: str) -> None:
    """Raise VectorSpaceMismatch unless vectors of `space` may be written to and compared with the workspace's.
    `has_vectors` is asked only when the record is missing or differs; `legacy_space` is what a workspace with
    vectors but no record holds."""
    key = (record.location, space)
    if key in _checked:
        return
    current = recorded_space(record)
    if current is None:
        current = legacy_space if has_vectors() else space
        record_space(record, current)
    if current != space:
        if current.startswith(REEMBEDDING) or has_vectors():
            raise VectorSpaceMismatch(_mismatch_message(current, space))
        record_space(record, space)  # nothing stored yet: nothing to mix
    with _lock:
        _checked.add(key)


def _mismatch_message(current: str, wanted: str) -> str:
    if current.startswith(REEMBEDDING):
        return (f"re-embedding this workspace's vectors into {current[len(REEMBEDDING):]} was interrupted: run "
                "`python -m core reembed` to finish it")
    return (f"this workspace's vectors were made by {current}, but the embedding settings ask for {wanted}: "
            "their vectors cannot be compared. Set the embedding model and variant back, or re-embed the "
            "workspace with `python -m core reembed`.")
