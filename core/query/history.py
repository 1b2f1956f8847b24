"""The workspace's history of questions and results, for the Ask and Compare pages: what an entry holds and how
many are kept. The rows live in the library's HistoryStore (core.store.sqlite_history)."""
from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass

from core.library import Library
from core.query.records import QueryResult

MAX_ENTRIES = 2000  # older entries are dropped: a history, not an archive


@dataclass
class HistoryEntry:
    id: str
    ts: float
    question: str
    mode: str
    summary: str
    payload_json: str

    @property
    def payload(self) -> dict:
        """The whole result, parsed only when asked for: the page lists questions on every rerun."""
        return json.loads(self.payload_json)


def _entry(row: dict) -> HistoryEntry:
    return HistoryEntry(id=row["id"], ts=row["ts"], question=row["question"], mode=row["mode"],
                        summary=row["summary"], payload_json=row["payload"])


def save_result(lib: Library, result: QueryResult, batch: str = "") -> str:
    entry_id = uuid.uuid4().hex
    answer = result.answer.text if result.answer else "(context only)"
    lib.history.add(entry_id=entry_id, ts=time.time(), question=result.question, mode=result.mode, batch=batch,
                    summary=answer[:300], payload=json.dumps(result.to_dict(), default=str), keep=MAX_ENTRIES)
    return entry_id


def recent(lib: Library, limit: int = 50) -> list[HistoryEntry]:
    return [_entry(row) for row in lib.history.recent(limit)]


def clear(lib: Library) -> None:
    lib.history.clear()
