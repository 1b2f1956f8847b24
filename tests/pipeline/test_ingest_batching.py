"""Per-document fixed costs of ingest: short text documents share a worker's slot so they are committed together,
and a commit costs no fsync. Real SQLite, Chroma, the embedding model and the local worker pool."""
from __future__ import annotations

import pytest

from core.library import open_library
from core.pipeline.compute import compute_backend
from core.pipeline.documents import add_document, add_pdf
from core.pipeline.ingest_writer import SHORT_TEXTS_PER_SLOT, Writer
from core.schema.records import DocStatus
from tests import pdfs
from tests.graph_papers import fast_workspace


@pytest.mark.slow
def test_short_text_documents_share_a_worker_slot_and_are_committed_together(tmp_path):
    lib = open_library(fast_workspace(tmp_path / "ws"))
    texts = [add_document(lib, f"note{n}.txt", f"Note {n}\n\nWalrus colony {n} counted on Svalbard.\n".encode())
             .doc_id for n in range(6)]
    papers = [add_pdf(lib, f"paper{n}.pdf", pdfs.make_text_pdf(tmp_path / f"paper{n}.pdf",
                                                              text_per_page=f"Paper {n} about walruses.")
                      .read_bytes()).doc_id for n in range(2)]
    writer = Writer(lib, compute_backend(lib.settings.compute, "local", 1), None, None, None, None)
    writer._fill()
    # One worker: the six notes wait in its pool together, with the first paper; the second paper would be a
    # second worker's whole slot, so it waits in the queue.
    assert len(texts) < SHORT_TEXTS_PER_SLOT and set(writer.jobs) == {*texts, papers[0]}
    done = writer.run()
    assert {d.id for d in done} == {*texts, *papers} and {d.status for d in done} == {DocStatus.READY}
    assert max(d.timings["commit_batch_docs"] for d in done if d.id in texts) > 1  # committed together
    assert lib.windows.doc_counts().keys() == {*texts, *papers}


def test_sqlite_commits_skip_the_fsync_and_keep_the_write_ahead_log(tmp_path):
    lib = open_library(fast_workspace(tmp_path / "ws"))
    with lib.db.connect() as conn:
        # NORMAL in WAL mode: a killed process loses no commit (tests/pipeline/test_graph_build.py kills one).
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1
    # The library holds one idle connection: closing the others neither checkpoints nor deletes the WAL.
    assert lib.db.path.with_name(lib.db.path.name + "-wal").exists()
