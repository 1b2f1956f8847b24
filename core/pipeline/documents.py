"""Adding, retrying and deleting documents. Adding only registers and queues; `core.pipeline.ingest` does the work."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path

from core.content.sources import TEXT_SUFFIXES, stored_source_name, text_format
from core.library import Library
from core.pipeline.graph.build import remove_document
from core.pipeline.parsing.budget import retry_cap
from core.pipeline.parsing.importer import copy_import_folder
from core.pipeline.references.resolve import forget_references
from core.schema.records import DocStatus, Document, GraphStatus
from core.text.filenames import safe_filename

IMPORT_DIRNAME = "import"  # a MinerU output made elsewhere, kept as uploaded, parsed by the import backend
# A document's own parse budget, set by "retry with MinerU and a larger budget": {"memory_gb": N}. It stays with
# the document, so a later re-parse (a retry, a re-index) does not fall back where the retry succeeded.
PARSE_BUDGET_FILE = "parse_budget.json"


@dataclass
class AddResult:
    doc_id: str
    filename: str
    outcome: str  # added | duplicate
    message: str


def _atomic_write(data: bytes, target: Path, staging: Path) -> None:
    staging.mkdir(parents=True, exist_ok=True)
    tmp = staging / f"upload-{uuid.uuid4().hex}"
    tmp.write_bytes(data)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(tmp, target)


def _duplicate(lib: Library, doc: Document, filename: str) -> AddResult:
    note = f" (it failed earlier: {doc.message}; use Retry)" if doc.status == DocStatus.FAILED else ""
    return AddResult(doc.id, filename, "duplicate",
                     f"already in the library as '{doc.display_title}', status {doc.status.value}{note}")


# What add_document accepts, by file name suffix: PDFs and the text documents of parsing/text_documents.py.
DOCUMENT_SUFFIXES = (".pdf", *TEXT_SUFFIXES)


def add_pdf(lib: Library, filename: str, data: bytes) -> AddResult:
    """Register an uploaded PDF. The same bytes uploaded again are a no-op that says so."""
    return _add_source(lib, filename, data, lambda doc_id: lib.workspace.source_pdf(doc_id))


def add_document(lib: Library, filename: str, data: bytes) -> AddResult:
    """Register an uploaded PDF, Markdown, plain-text or HTML file (chosen by its name's suffix; anything else is
    taken for a PDF, whose parse then says what the file really is). Text is checked when it is parsed, like a
    PDF: a binary or undecodable file ends `failed` with the reason and keeps its source for Retry."""
    fmt = text_format(safe_filename(filename))
    if fmt is None:
        return add_pdf(lib, filename, data)
    return _add_source(lib, filename, data, lambda doc_id: lib.workspace.doc_dir(doc_id) / stored_source_name(fmt))


def _add_source(lib: Library, filename: str, data: bytes, target) -> AddResult:
    lib.check_vector_space()  # its vectors must be comparable with the workspace's (VectorSpaceMismatch)
    name = safe_filename(filename)
    doc_id = hashlib.sha256(data).hexdigest()
    existing = lib.documents.get(doc_id)
    if existing:
        return _duplicate(lib, existing, name)
    # The file is in place before the row exists, so a queued document always has its source.
    _atomic_write(data, target(doc_id), lib.workspace.staging_dir)
    if not lib.documents.insert(Document(id=doc_id, filename=name, size_bytes=len(data))):
        return _duplicate(lib, lib.documents.get(doc_id), name)  # another process registered it meanwhile
    return AddResult(doc_id, name, "added", "queued")


def add_mineru_output(lib: Library, src: Path) -> AddResult:
    """Register a MinerU output folder or zip made elsewhere (e.g. on a GPU machine with the full models)."""
    lib.check_vector_space()
    src = Path(src)
    name = safe_filename(src.name, default="mineru-output")
    staging = lib.workspace.staging_dir / f"import-{uuid.uuid4().hex}"
    if src.is_dir():
        copy_import_folder(src, staging)  # regular files only: a symlink refuses the import (UnsafeImport)
    elif zipfile.is_zipfile(src):
        staging.mkdir(parents=True)
        shutil.copy2(src, staging / "output.zip")
    else:
        raise ValueError(f"{src.name} is neither a folder nor a zip of a MinerU output")
    doc_id = _tree_digest(staging)
    existing = lib.documents.get(doc_id)
    if existing:
        shutil.rmtree(staging, ignore_errors=True)
        return _duplicate(lib, existing, name)
    target = lib.workspace.doc_dir(doc_id) / IMPORT_DIRNAME
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(staging, target)
    if not lib.documents.insert(Document(id=doc_id, filename=name, size_bytes=_tree_size(target))):
        return _duplicate(lib, lib.documents.get(doc_id), name)
    return AddResult(doc_id, name, "added", "queued")


def add_mineru_upload(lib: Library, filename: str, data: bytes) -> AddResult:
    """An uploaded MinerU output zip: saved under staging with its (sanitised) name, then registered."""
    folder = lib.workspace.staging_dir / f"upload-{uuid.uuid4().hex}"
    folder.mkdir(parents=True)
    try:
        path = folder / safe_filename(filename, default="mineru-output.zip")
        path.write_bytes(data)
        return add_mineru_output(lib, path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _tree_size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def is_import(lib: Library, doc_id: str) -> bool:
    return (lib.workspace.doc_dir(doc_id) / IMPORT_DIRNAME).exists()


def parse_memory_override(lib: Library, doc_id: str) -> float:
    """The GB a retry gave this document's MinerU child (0: the settings' share)."""
    try:
        value = json.loads((lib.workspace.doc_dir(doc_id) / PARSE_BUDGET_FILE).read_text(encoding="utf-8"))
        return max(0.0, float(value.get("memory_gb", 0.0)))
    except (OSError, ValueError, TypeError, AttributeError):
        return 0.0


def mineru_stop(doc: Document) -> str:
    """Why MinerU did not parse (all of) this document, when a limit of ours stopped it or kept pages from it
    (core.pipeline.parsing.pipeline words these); '' otherwise. Such a document can be retried with a larger
    budget."""
    return next((w for w in doc.warnings if w.startswith("MinerU ") or "vector marks" in w), "")


def retry_document(lib: Library, doc_id: str, memory_gb: float = 0.0) -> str:
    """Queue the document again. memory_gb > 0: parse it with MinerU again, every page, its child allowed this
    much memory (at most what the other workers leave of the machine: core.pipeline.parsing.budget). Returns what
    the child will get, as the document's message says it ("" without memory_gb, or when nothing was queued)."""
    doc = lib.documents.get(doc_id)
    if doc is None:
        raise KeyError(doc_id)
    if doc.status.in_progress:
        return ""
    lib.check_vector_space()
    cap = ""
    if memory_gb > 0:
        (lib.workspace.doc_dir(doc_id) / PARSE_BUDGET_FILE).write_text(json.dumps({"memory_gb": memory_gb}),
                                                                        encoding="utf-8")
        # With the workers Settings give; the cap is computed again for the backend that runs it (make_task), whose
        # note, if any, ends in the message the document gets once parsed.
        workers = lib.settings.compute.workers or os.cpu_count() or 1
        cap = retry_cap(lib.settings.parsing, workers, memory_gb).describe()
    lib.documents.set_status(doc_id, DocStatus.QUEUED, f"queued again; {cap}" if cap else "queued again")
    return cap


def delete_document(lib: Library, doc_id: str) -> None:
    """Remove a document and everything derived from it, whatever stage it is in. The row goes first: search
    stops showing the paper at once, and a worker parsing, indexing or extracting it sees it gone at its next
    step, stops, and purges what it wrote meanwhile (core.pipeline.ingest, core.pipeline.graph.stage). A crash
    half-way leaves orphans of an unregistered id, which `python -m core gc` (also run at start-up) removes."""
    lib.documents.delete(doc_id)
    purge_document(lib, doc_id)


def busy_stage(doc: Document) -> str:
    """What a worker may be doing with the document right now ('' if nothing): a delete of it stops that work."""
    if doc.status.in_progress:
        return "queued" if doc.status == DocStatus.QUEUED else f"being {doc.status.value.replace('ing', 'ed')}"
    if doc.status == DocStatus.READY and doc.graph_status == GraphStatus.EXTRACTING:
        return "having its graph extracted"
    return ""


def purge_document(lib: Library, doc_id: str) -> None:
    """Everything stored under a document id, registered or not: graph contributions and extractions (and the
    nodes, edges and vectors they made), chunks with their full-text rows, windows, media descriptions, its
    bibliographic metadata (hand corrections too), its reference list and every resolution of an entry to it, the
    results read from its tables, its folder. Idempotent, and safe in two processes at once (a delete and the
    worker that held the paper)."""
    remove_document(lib, doc_id)
    lib.windows.delete_doc(doc_id)
    lib.chunks.delete_doc(doc_id)
    lib.descriptions.delete_doc(doc_id)
    lib.metadata.delete_doc(doc_id)
    forget_references(lib, doc_id)
    lib.results.delete_doc(doc_id)
    doc_dir = lib.workspace.doc_dir(doc_id)
    if doc_dir.exists():
        lib.workspace.staging_dir.mkdir(parents=True, exist_ok=True)
        trash = lib.workspace.staging_dir / f"deleted-{uuid.uuid4().hex}"
        try:
            os.replace(doc_dir, trash)  # one rename: the folder is either whole or gone
        except FileNotFoundError:  # the other purge renamed it first
            return
        shutil.rmtree(trash, ignore_errors=True)
