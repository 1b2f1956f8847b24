"""Each paper's parsed reference list, its in-text citation links, and which library paper each entry resolves to,
in the workspace's SQLite file (created on first open, as the metadata table is; `python -m core refs refresh`
fills it for papers ingested before).

`cited_doc_id` is the library's citation graph: a paper's deletion clears it wherever it pointed to the paper, so
what cited it reads "not in your library" again. `title_key` and `text_key` (the title and the whole entry
lower-cased without anything but letters and digits) let a paper added later find the older entries that name it
without reading every entry back."""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from core.schema.references import CitationLink, ParsedReference
from core.store.sqlite_db import Database, ensure_schema

SCHEMA = """
CREATE TABLE IF NOT EXISTS paper_references (
    doc_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    label TEXT NOT NULL,
    text TEXT NOT NULL,
    authors TEXT NOT NULL,
    title TEXT NOT NULL,
    year INTEGER,
    year_suffix TEXT NOT NULL,
    venue TEXT NOT NULL,
    doi TEXT NOT NULL,
    arxiv TEXT NOT NULL,
    page INTEGER NOT NULL,
    bbox TEXT,
    title_key TEXT NOT NULL,
    text_key TEXT NOT NULL,
    cited_doc_id TEXT NOT NULL DEFAULT '',
    llm_fields TEXT NOT NULL DEFAULT '',
    names TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (doc_id, idx)
);
CREATE INDEX IF NOT EXISTS paper_references_by_cited ON paper_references(cited_doc_id);
CREATE INDEX IF NOT EXISTS paper_references_by_doi ON paper_references(doi);
CREATE INDEX IF NOT EXISTS paper_references_by_arxiv ON paper_references(arxiv);
CREATE INDEX IF NOT EXISTS paper_references_by_title ON paper_references(title_key);
CREATE TABLE IF NOT EXISTS citation_links (
    doc_id TEXT NOT NULL,
    ref_idx INTEGER NOT NULL,
    marker TEXT NOT NULL,
    sentence TEXT NOT NULL,
    page INTEGER NOT NULL,
    bbox TEXT
);
CREATE INDEX IF NOT EXISTS citation_links_by_doc ON citation_links(doc_id, ref_idx);
"""
# A table made before the LLM pass gains its column: the names of the fields the LLM read, comma-separated.
# A table made before whole names were kept gains their column (JSON list; '[]': the export writes family names).
_ADDED_COLUMNS = {"paper_references": {"llm_fields": "TEXT NOT NULL DEFAULT ''", "names": "TEXT NOT NULL DEFAULT '[]'"}}


def _bbox(value: str | None) -> list[float] | None:
    try:
        box = json.loads(value) if value else None
    except ValueError:
        return None
    return [float(x) for x in box] if isinstance(box, list) else None


def _names(value: str | None) -> list[str]:
    try:
        names = json.loads(value or "[]")
    except ValueError:
        return []
    return [str(a) for a in names] if isinstance(names, list) else []


def _ref(row) -> ParsedReference:
    authors = _names(row["authors"])
    return ParsedReference(doc_id=row["doc_id"], idx=row["idx"], text=row["text"], label=row["label"],
                           authors=authors, title=row["title"], year=row["year"], year_suffix=row["year_suffix"],
                           venue=row["venue"], doi=row["doi"], arxiv=row["arxiv"], page=row["page"],
                           bbox=_bbox(row["bbox"]), cited_doc_id=row["cited_doc_id"],
                           llm_fields=[f for f in row["llm_fields"].split(",") if f], names=_names(row["names"]))


def _link(row) -> CitationLink:
    return CitationLink(doc_id=row["doc_id"], ref_idx=row["ref_idx"], marker=row["marker"], sentence=row["sentence"],
                        page=row["page"], bbox=_bbox(row["bbox"]))


class SQLiteReferenceStore:
    def __init__(self, db: Database):
        self.db = db
        ensure_schema(db, SCHEMA, _ADDED_COLUMNS)

    def replace_doc(self, doc_id: str, refs: Sequence[ParsedReference], keys: Sequence[tuple[str, str]],
                    links: Sequence[CitationLink]) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM paper_references WHERE doc_id = ?", (doc_id,))
            conn.execute("DELETE FROM citation_links WHERE doc_id = ?", (doc_id,))
            conn.executemany(
                "INSERT INTO paper_references (doc_id, idx, label, text, authors, title, year, year_suffix, venue, "
                "doi, arxiv, page, bbox, title_key, text_key, cited_doc_id, llm_fields, names) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(doc_id, r.idx, r.label, r.text, json.dumps(r.authors, ensure_ascii=False), r.title, r.year,
                  r.year_suffix, r.venue, r.doi, r.arxiv, r.page, json.dumps(r.bbox) if r.bbox else None,
                  title_key, text_key, r.cited_doc_id, ",".join(r.llm_fields),
                  json.dumps(r.names, ensure_ascii=False))
                 for r, (title_key, text_key) in zip(refs, keys)])
            conn.executemany("INSERT INTO citation_links (doc_id, ref_idx, marker, sentence, page, bbox) "
                             "VALUES (?, ?, ?, ?, ?, ?)",
                             [(doc_id, x.ref_idx, x.marker, x.sentence, x.page, json.dumps(x.bbox) if x.bbox else None)
                              for x in links])

    def references(self, doc_id: str) -> list[ParsedReference]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT * FROM paper_references WHERE doc_id = ? ORDER BY idx", (doc_id,))
            return [_ref(r) for r in rows]

    def links(self, doc_id: str) -> list[CitationLink]:
        with self.db.connect() as conn:
            rows = conn.execute("SELECT * FROM citation_links WHERE doc_id = ? ORDER BY rowid", (doc_id,))
            return [_link(r) for r in rows]

    def cited_by(self, doc_id: str) -> list[ParsedReference]:
        """The entries of other papers that resolve to this one."""
        with self.db.connect() as conn:
            rows = conn.execute("SELECT * FROM paper_references WHERE cited_doc_id = ? ORDER BY doc_id, idx",
                                (doc_id,))
            return [_ref(r) for r in rows]

    def resolved(self, doc_ids: Iterable[str] | None = None) -> list[ParsedReference]:
        """Every entry that resolves to a library paper; with doc_ids, those citing or cited by one of them."""
        with self.db.connect() as conn:
            if doc_ids is None:
                rows = conn.execute("SELECT * FROM paper_references WHERE cited_doc_id != '' ORDER BY doc_id, idx")
                return [_ref(r) for r in rows]
            ids = list(dict.fromkeys(doc_ids))
            found: dict[tuple[str, int], ParsedReference] = {}
            for start in range(0, len(ids), 400):
                part = ids[start:start + 400]
                marks = ",".join("?" * len(part))
                for row in conn.execute(f"SELECT * FROM paper_references WHERE cited_doc_id != '' AND "
                                        f"(doc_id IN ({marks}) OR cited_doc_id IN ({marks}))", part + part):
                    ref = _ref(row)
                    found[(ref.doc_id, ref.idx)] = ref
            return sorted(found.values(), key=lambda r: (r.doc_id, r.idx))

    def candidates(self, doi: str, arxiv: str, title_key: str, min_prefix: int = 20) -> list[ParsedReference]:
        """Entries of any paper that may name a paper with these identifiers or this title (the caller checks the
        year): by DOI, arXiv id, title, the title found inside the entry's text, or an entry's title of at least
        min_prefix characters that starts the paper's (a subtitle left out)."""
        clauses, params = [], []
        if doi:
            clauses.append("doi = ?")
            params.append(doi)
        if arxiv:
            clauses.append("arxiv = ?")
            params.append(arxiv)
        if title_key:
            clauses.append("title_key = ? OR instr(text_key, ?) > 0 OR (length(title_key) >= ? AND "
                           "instr(?, title_key) = 1)")
            params += [title_key, title_key, min_prefix, title_key]
        if not clauses:
            return []
        with self.db.connect() as conn:
            rows = conn.execute(f"SELECT * FROM paper_references WHERE {' OR '.join(clauses)}", params)
            return [_ref(r) for r in rows]

    def set_cited(self, pairs: Iterable[tuple[str, int, str]]) -> None:
        """(citing doc id, entry index, cited doc id or '') for each entry whose resolution changed."""
        with self.db.transaction() as conn:
            conn.executemany("UPDATE paper_references SET cited_doc_id = ? WHERE doc_id = ? AND idx = ?",
                             [(cited, doc_id, idx) for doc_id, idx, cited in pairs])

    def delete_doc(self, doc_id: str) -> None:
        """The paper's entries and links, and every other paper's resolution to it."""
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM paper_references WHERE doc_id = ?", (doc_id,))
            conn.execute("DELETE FROM citation_links WHERE doc_id = ?", (doc_id,))
            conn.execute("UPDATE paper_references SET cited_doc_id = '' WHERE cited_doc_id = ?", (doc_id,))

    def doc_counts(self) -> dict[str, int]:
        """Rows per document id: its entries and links, and the entries elsewhere that resolve to it."""
        out: dict[str, int] = {}
        with self.db.connect() as conn:
            for sql in ("SELECT doc_id, COUNT(*) FROM paper_references GROUP BY doc_id",
                        "SELECT doc_id, COUNT(*) FROM citation_links GROUP BY doc_id",
                        "SELECT cited_doc_id, COUNT(*) FROM paper_references WHERE cited_doc_id != '' "
                        "GROUP BY cited_doc_id"):
                for doc_id, n in conn.execute(sql):
                    out[doc_id] = out.get(doc_id, 0) + n
        return out
