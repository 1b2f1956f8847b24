"""BM25 over chunk text with SQLite's FTS5, kept in step with the chunks table by triggers.

FTS5 scores every chunk that matches any query term, so a term found in most chunks ("model", "results") costs
time at 100k chunks and adds almost nothing to the ranking. Queries therefore keep their rarest terms, by the
document frequencies of the fts5vocab table; that is why the tokenizer does not stem (vocabulary terms are then
the query's own lowercased words).

Triggers rather than explicit writes: the index changes in the same transaction as the chunks it mirrors, so a
crash can never leave one without the other, and no ingest code has to know the index exists. It is created on
first use and then filled from the chunks already stored ('rebuild'), which is also how older workspaces gain it.
"""
from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Sequence

from core.store.sqlite_db import Database

SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, content='chunks', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts_vocab USING fts5vocab(chunks_fts, 'row');
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
MAX_TERMS = 8
COMMON_SHARE = 0.2  # a term in more than this share of chunks is dropped (unless every term is that common)
# FTS5 scores every chunk an OR-query matches before it keeps the best, ~15 µs a posting: past this many postings
# in all (the sum of the kept terms' document frequencies) a query stops adding terms, rarest first, keeping at
# least MIN_TERMS. At 100k chunks eight mid-frequency terms made ~15k postings and BM25 cost ~0.3-0.5 s of mix's
# p95; the dropped terms are the commonest kept ones, which BM25 weighs least. The budget binds only on large
# collections: 8 terms under COMMON_SHARE of a 2,000-chunk collection stay below it.
MAX_POSTINGS = 5_000
MIN_TERMS = 2


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
                row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()
                statements = _statements(SCHEMA)
                if row is not None and _definition(row[0]) != _definition(statements[0]):
                    # Made by an older schema (another tokenizer): rebuilt from the chunks, which are the truth.
                    for name in ("chunks_fts_vocab", "chunks_fts"):
                        conn.execute(f"DROP TABLE IF EXISTS {name}")
                    for trigger in ("insert", "delete", "update"):
                        conn.execute(f"DROP TRIGGER IF EXISTS chunks_fts_{trigger}")
                    row = None
                for statement in statements:
                    conn.execute(statement)
                if row is None:
                    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
            self._ready = True

    def stale_rows(self) -> int:
        """Index entries whose chunk is gone (left by a chunk deleted without the triggers): BM25 would count
        their words, and a later chunk given the same rowid would match them."""
        self._ensure()
        with self.db.connect() as conn:
            conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_fts_instances "
                         "USING fts5vocab(main, chunks_fts, instance)")
            return conn.execute("SELECT COUNT(DISTINCT doc) FROM temp.chunks_fts_instances "
                                "WHERE doc NOT IN (SELECT rowid FROM chunks)").fetchone()[0]

    def document_frequencies(self, terms: Sequence[str]) -> tuple[dict[str, int], int] | None:
        """(term → chunks containing it, for the terms in the index; number of chunks, at least 1), or None while
        there is no index yet: read as it is, never created here."""
        marks = ",".join("?" * len(terms))
        try:
            with self.db.connect() as conn:
                df = dict(conn.execute(f"SELECT term, doc FROM chunks_fts_vocab WHERE term IN ({marks})",
                                       list(terms)).fetchall())
                total = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] or 1
        except sqlite3.OperationalError:
            return None
        return df, total

    def rebuild(self) -> None:
        """Index the chunks table again from scratch: what is left of deleted chunks goes."""
        self._ensure()
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")

    def _match(self, text: str) -> str:
        """The FTS5 query: the question's rarest terms, OR-ed; '' when no term is in the index."""
        terms = query_terms(text)
        if not terms:
            return ""
        self._ensure()
        marks = ",".join("?" * len(terms))
        with self.db.connect() as conn:
            df = dict(conn.execute(f"SELECT term, doc FROM chunks_fts_vocab WHERE term IN ({marks})", terms).fetchall())
            total = conn.execute("SELECT MAX(rowid) FROM chunks").fetchone()[0] or 1
        present = sorted((t for t in terms if df.get(t)), key=lambda t: df[t])
        rare = [t for t in present if df[t] <= COMMON_SHARE * total] or present[:2]
        kept, postings = [], 0
        for term in rare[:MAX_TERMS]:
            if len(kept) >= MIN_TERMS and postings + df[term] > MAX_POSTINGS:
                break
            kept.append(term)
            postings += df[term]
        return " OR ".join('"' + t.replace('"', '""') + '"' for t in kept)

    def search(self, text: str, top_k: int, doc_ids: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """(chunk id, BM25 score, higher is better) of the best chunks, among `doc_ids` when given."""
        match = self._match(text) if top_k > 0 else ""
        if not match:
            return []
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
        match = self._match(text) if chunk_ids else ""
        if not match:
            return {}
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


def _definition(create_sql: str) -> str:
    """What a CREATE VIRTUAL TABLE says after USING, spaces normalised: SQLite stores it without IF NOT EXISTS."""
    return " ".join(create_sql.split("USING", 1)[-1].split()).rstrip(";").strip()


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
