"""The contract of each paper's results read from its tables (core.schema.results); callers import it from
core.store.base."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from core.schema.results import ResultRecord


@dataclass(frozen=True)
class ResultFilter:
    """Which result records to read: None leaves a field unfiltered; `doc_ids` (None: every paper) keeps those
    papers' records; `text` keeps records whose names, setting, table label or caption hold every word of it."""

    dataset_key: str | None = None
    metric_key: str | None = None
    method_key: str | None = None
    setting: str | None = None
    doc_ids: Sequence[str] | None = None
    text: str = ""


class ResultStore(Protocol):
    """Each paper's results read from its tables (core.schema.results), replaced whole with every parse and
    deleted with the paper; read across papers by their normalised keys."""

    def replace_doc(self, doc_id: str, records: Sequence[ResultRecord]) -> None: ...  # one transaction
    def by_doc(self, doc_id: str) -> list[ResultRecord]: ...  # in table, row, column order
    def find(self, filters: ResultFilter, limit: int | None = None) -> list[ResultRecord]: ...
    def key_counts(self, kind: str, filters: ResultFilter | None = None) -> list[tuple[str, str, int, int]]:
        """kind "dataset" | "metric" | "method": (key, the name printed most often, records, papers)."""
    def printed_names(self, kind: str, filters: ResultFilter | None = None) -> list[tuple[str, str]]:
        """(key, name as printed) of every spelling of a dataset, metric or method the records print."""
    def delete_doc(self, doc_id: str) -> None: ...
    def doc_counts(self) -> dict[str, int]: ...
    def count(self) -> int: ...
