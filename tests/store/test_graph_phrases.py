"""The retrieval phrases of a paper's chunks (core/store/sqlite_phrases.py) in real SQLite: written with the paper's
contributions, replaced when its graph is rebuilt, gone with the paper, counted by the delete footprint, and kept
in the stored extraction so a rebuild without extracting again finds them."""
from __future__ import annotations

from core.schema.graph import ChunkExtraction, EntitySource, ExtractedEntity, PaperRecord
from core.store.sqlite_db import Database
from core.store.sqlite_graph_sources import SQLiteGraphSources


def _entity(key: str, doc_id: str, chunk_id: str) -> EntitySource:
    return EntitySource(key=key, doc_id=doc_id, chunk_id=chunk_id, ord=0, name=key, type="concept",
                        description="", extractor="spacy")


def test_phrases_are_replaced_with_the_paper_and_deleted_with_it(tmp_path):
    sources = SQLiteGraphSources(Database(tmp_path / "db.sqlite"))
    sources.replace_doc("a", [_entity("ed wood", "a", "a-0")], [], PaperRecord(doc_id="a", title="A"),
                        phrases=[("a-0", "ed wood"), ("a-0", "cult film"), ("a-1", "tim burton")])
    sources.replace_doc("b", [], [], PaperRecord(doc_id="b", title="B"), phrases=[("b-0", "tim burton")])
    assert sources.chunk_phrases() == {"a-0": ["ed wood", "cult film"], "a-1": ["tim burton"],
                                       "b-0": ["tim burton"]}
    assert sources.doc_row_counts(["a"])["phrases"] == 3 and "b" in sources.doc_ids()
    version = sources.meta("version")

    # A rebuild of the paper's graph replaces its phrases, in the transaction that bumps the graph version
    sources.replace_doc("a", [], [], PaperRecord(doc_id="a", title="A"), phrases=[("a-0", "cult film")])
    assert sources.chunk_phrases()["a-0"] == ["cult film"] and "a-1" not in sources.chunk_phrases()
    assert sources.meta("version") != version  # the query side's index is keyed by it (core.graph.mention_index)

    # Deleting the paper (core.pipeline.graph.build.remove_document) takes them; the other paper keeps its own
    sources.replace_doc("a", [], [], None)
    assert sources.doc_row_counts(["a"])["phrases"] == 0
    assert sources.chunk_phrases() == {"b-0": ["tim burton"]}
    sources.clear(keep_extractions=True)
    assert sources.chunk_phrases() == {}


def test_a_stored_extraction_keeps_its_phrases_and_an_old_one_reads_as_none(tmp_path):
    db = Database(tmp_path / "db.sqlite")
    sources = SQLiteGraphSources(db)
    sources.put_extraction("a", 0, "sha", ChunkExtraction(
        chunk_id="a-0", extractor="spacy", entities=[ExtractedEntity("Ed Wood", "person", "")],
        phrases=["ed wood", "cult film"]))
    ((_, extraction),) = sources.extractions("a")
    assert extraction.phrases == ["ed wood", "cult film"] and extraction.entities[0].name == "Ed Wood"
    with db.connect() as conn:  # an extraction stored before phrases existed
        conn.execute("UPDATE graph_extractions SET payload = ?", ('{"entities": [], "relations": []}',))
    assert sources.extractions("a")[0][1].phrases == []
