"""Chunk and window ids: the spelling stored in SQLite, Chroma and the graph's provenance lists."""
from core.schema import ids

DOC = "ab" * 32  # a sha256 digest, as add_pdf makes


def test_ids_are_spelled_as_stored():
    assert ids.chunk_id(DOC, 12) == f"{DOC}:12"
    assert ids.window_id(f"{DOC}:12", 0) == f"{DOC}:12:0"
    assert ids.window_ids(f"{DOC}:3", 3) == [f"{DOC}:3:0", f"{DOC}:3:1", f"{DOC}:3:2"]
    assert ids.window_ids(f"{DOC}:3", 0) == []


def test_ids_parse_back():
    chunk = ids.chunk_id(DOC, 7)
    window = ids.window_id(chunk, 4)
    assert ids.doc_id_of(chunk) == ids.doc_id_of(window) == DOC
    assert ids.chunk_id_of(window) == chunk
    assert ids.doc_id_of("synthetic000001:5") == "synthetic000001"


def test_chunks_sort_in_reading_order():
    chunks = [ids.chunk_id("b", 1), ids.chunk_id("a", 10), ids.chunk_id("a", 9), ids.chunk_id("a", 0)]
    assert sorted(chunks, key=ids.chunk_order) == ["a:0", "a:9", "a:10", "b:1"]
    assert ids.chunk_order("odd") == ("odd", 0)
