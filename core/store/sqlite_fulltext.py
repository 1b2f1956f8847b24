"""BM25 over chunk text with SQLite's FTS5, kept in step with the chunks table by triggers.

Triggers rather than explicit writes: the index changes in the same transaction as the chunks it mirrors, so a
crash can never leave one without the other, and no ingest code has to know the index exists. It is created on
first use and then filled from the chunks already stored ('rebuild'), which is also how older workspaces gain it.
"""
from __future__ import annotations

import re
import threading
from typing import Sequence

from core.store.sqlite_db import Database

SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, content='chunks', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2');
CREATE TRIGGER IF NOT EXISTS chunks_fts_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER IF NOT EXISTS chunks_fts_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER IF NOT EXISTS chunks_fts_update AFTER UPDATE OF text ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO chunks_fts(rowid, text) VALUES (new.rowid, new.text);
END;
"""

# Words that match nearly every chunk: dropping them keeps a query's posting lists short (and fast at 100k chunks)
# without changing the ranking much, since BM25 gives them almost no weight anyway.
STOP_WORDS = frozenset("""a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off
on once only or other our ours ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were what when where which while
who whom why will with would you your yours yourself yourselves also et al""".split())
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def query_terms(text: str, limit: int = 32) -> list[str]:
    terms = []
    for word in _WORD.findall(text.lower()):
        if word not in STOP_WORDS and (len(word) > 1 or word.isdigit()) and word not in terms:
            terms.append(word)
    return terms[:limit]


class SQLiteFullText:
    def __init__(self, db: Database):
        self.db = db
        self._ready = False
        self._lock = threading.Lock()

    def _ensure(self) -> None:
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            with self.db.transaction() as conn:
                existed = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()
                for statement in _statements(SCHEMA):
                    conn.execute(statement)
                if not existed:
                    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
            self._ready = True

    def search(self, text: str, top_k: int, doc_ids: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """(chunk id, BM25 score, higher is better) of the best chunks, among `doc_ids` when given."""
        terms = query_terms(text)
        if not terms or top_k <= 0:
            return []
        self._ensure()
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        sql = ("SELECT c.id, c.doc_id, -bm25(chunks_fts) AS score FROM chunks_fts JOIN chunks c ON c.rowid = "
               "chunks_fts.rowid WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT ?")
        wanted = set(doc_ids) if doc_ids is not None else None
        # Filtering by paper after ranking keeps FTS5's fast top-k path; fetch more when a filter is set.
        limit = top_k if wanted is None else top_k * 8
        with self.db.connect() as conn:
            while True:
                rows = conn.execute(sql, (match, limit)).fetchall()
                hits = [(r["id"], float(r["score"])) for r in rows if wanted is None or r["doc_id"] in wanted]
                if len(hits) >= top_k or len(rows) < limit:
                    return hits[:top_k]
                limit *= 8

    def scores(self, text: str, chunk_ids: Sequence[str]) -> dict[str, float]:
        """BM25 scores of the given chunks (with the whole collection's statistics); absent = no term matched."""
        terms = query_terms(text)
        if not terms or not chunk_ids:
            return {}
        self._ensure()
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        out: dict[str, float] = {}
        with self.db.connect() as conn:
            for start in range(0, len(chunk_ids), 500):
                part = list(chunk_ids[start:start + 500])
                marks = ",".join("?" * len(part))
                rows = conn.execute(
                    "SELECT c.id, -bm25(chunks_fts) AS score FROM chunks_fts JOIN chunks c ON c.rowid = "
                    f"chunks_fts.rowid WHERE chunks_fts MATCH ? AND chunks_fts.rowid IN (SELECT rowid FROM chunks "
                    f"WHERE id IN ({marks}))", [match, *part]).fetchall()
                out.update((r["id"], float(r["score"])) for r in rows)
        return out


def _statements(script: str) -> list[str]:
    """Split the schema into statements, keeping trigger bodies (which contain ';') whole."""
    out, current = [], []
    for line in script.strip().splitlines():
        current.append(line)
        joined = "\n".join(current).strip()
        if joined.endswith("END;") or (joined.endswith(";") and "BEGIN" not in joined):
            out.append(joined)
            current = []
    return out
