"""Uploads: a file a face has already written to disk (streamed, bounded) is registered and queued as the Library
page does, then parsed and indexed by the app's background workers (core.pipeline.worker); a client polls the
paper's status. The bounds are the page's: the same suffixes, the same largest file."""
from __future__ import annotations

import threading
from pathlib import Path

from core.library import Library
from core.pipeline.documents import DOCUMENT_SUFFIXES, add_document
from core.pipeline.worker import BackgroundIngestor, work_to_resume
from core.service.errors import CONFLICT, TOO_LARGE, ServiceError, invalid
from core.service.records import UploadResult
from core.text.filenames import safe_filename

# The Library page's bound: Streamlit's server.maxUploadSize in .streamlit/config.toml (MB).
MAX_UPLOAD_MB = 500
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024


def check_upload_name(filename: str) -> str:
    """The name as it will be stored (no folders, no control characters: core.text.filenames), refused when its
    suffix is not one the Library page accepts."""
    name = safe_filename(filename if isinstance(filename, str) else "", default="")
    if not name or not name.lower().endswith(DOCUMENT_SUFFIXES):
        raise invalid(f"a paper is a file ending in {', '.join(DOCUMENT_SUFFIXES)}")
    return name


class Ingest:
    """One per served workspace: the background workers are started on the first upload (or by `resume`)."""

    def __init__(self, lib: Library):
        self.lib = lib
        self._worker: BackgroundIngestor | None = None
        self._lock = threading.Lock()

    def _kick(self) -> None:
        with self._lock:
            if self._worker is None:
                self._worker = BackgroundIngestor(self.lib)
            self._worker.kick()

    def resume(self) -> None:
        """Process what an earlier run left: queued papers, pending graphs, and papers a killed process left parsing,
        indexing or extracting (queued again, their partial output removed, as the workers start)."""
        if work_to_resume(self.lib):
            self._kick()

    @property
    def busy(self) -> bool:
        return self._worker is not None and self._worker.running

    def stop(self) -> None:
        if self._worker is not None:
            self._worker.stop()

    def add_file(self, filename: str, path: Path) -> UploadResult:
        name = check_upload_name(filename)
        size = path.stat().st_size
        if size > MAX_UPLOAD_BYTES:
            raise ServiceError(TOO_LARGE, f"the file is {size:,} bytes; the limit is {MAX_UPLOAD_MB} MB")
        if size == 0:
            raise invalid("the file is empty")
        try:
            added = add_document(self.lib, name, path.read_bytes())
        except ValueError as exc:  # the embedding settings no longer match the stored vectors
            raise ServiceError(CONFLICT, str(exc)) from None
        self._kick()
        doc = self.lib.documents.get(added.doc_id)
        return UploadResult(paper_id=added.doc_id, file=added.filename, outcome=added.outcome,
                            message=added.message, status=str(doc.status) if doc else "queued")
