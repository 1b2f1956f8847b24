"""Which phrases each chunk mentions, for retrieval only: the passage ↔ phrase layer of the graph walks.

The LLM-free extractor reads many candidate phrases per chunk and keeps as entities only those a researcher would
look up (core/graph/extract/terms.py). The graph walks of local and ppr need the others too: a name said once in
a short document is the bridge of a two-hop question, and dropping it from the display graph must not drop it from
retrieval (HippoRAG's phrase nodes). These rows are written with the paper's contributions, in the same
transaction (SQLiteGraphSources.replace_doc), so they are replaced when its graph is rebuilt and go when it is
deleted; they live in SQLite whatever the graph backend, and nothing shows them (Graph page, exports, samples).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from core.store.sqlite_db import Database

PHRASE_SCHEMA = """
CREATE TABLE IF NOT EXISTS graph_phrases (
    doc_id TEXT NOT NULL, chunk_id TEXT NOT NULL, phrase TEXT NOT NULL, PRIMARY KEY (chunk_id, phrase)
);
CREATE INDEX IF NOT EXISTS graph_phrases_by_doc ON graph_phrases(doc_id);
"""
PHRASE_TABLE = "graph_phrases"


def write_phrases(conn, doc_id: str, phrases: Iterable[tuple[str, str]]) -> None:
    """Replace a document's (chunk id, phrase key) rows, inside the caller's transaction."""
    conn.execute("DELETE FROM graph_phrases WHERE doc_id = ?", (doc_id,))
    conn.executemany("INSERT OR IGNORE INTO graph_phrases VALUES (?, ?, ?)",
                     [(doc_id, chunk_id, phrase) for chunk_id, phrase in phrases if phrase])


def read_chunk_phrases(db: Database) -> dict[str, list[str]]:
    """chunk id → the phrase keys it mentions, in the order the extractor gave them."""
    out: dict[str, list[str]] = defaultdict(list)
    with db.connect() as conn:
        for chunk_id, phrase in conn.execute("SELECT chunk_id, phrase FROM graph_phrases ORDER BY rowid"):
            out[chunk_id].append(phrase)
    return dict(out)
