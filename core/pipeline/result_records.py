"""The results stage of ingest: a paper's result records (core.schema.results) read LLM-free from its tables by
core.pipeline.results.read_paper_results. Pure and quick, so it runs in the compute worker beside the offline
descriptions and chunks (core.pipeline.compute.task), and the single writer stores the records in its commit
(core.pipeline.ingest_commit): a paper's records arrive with it, are replaced whole when it is parsed again, and
leave with it (core.pipeline.documents.purge_document; a failed paper has none).

`rebuild_results` reads them again from the stored parses (`python -m core results rebuild`): for workspaces
ingested before results were read, and after the extractor improves."""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence

from core.content.pages import load_items
from core.library import Library
from core.pipeline.results import read_paper_results
from core.schema.records import ContentItem
from core.schema.results import ResultRecord

log = logging.getLogger(__name__)


def compute_results(doc_id: str, items: Sequence[ContentItem]) -> list[ResultRecord]:
    """The paper's records; none (and a log line) when the extractor breaks on it: a table it cannot read never
    fails the paper, whose text, tables and graph are what it is ingested for."""
    try:
        return list(read_paper_results(doc_id, items))
    except Exception:
        log.exception("reading the results of %s failed; `python -m core results rebuild` tries again", doc_id[:12])
        return []


def rebuild_results(lib: Library, doc_ids: Iterable[str] | None = None,
                    on_paper: Callable[[str, int], None] | None = None) -> dict[str, int]:
    """Every ready paper's records (or these papers') read again from its stored content list and stored, each
    paper in one transaction; returns records per paper."""
    ready = {d.id for d in lib.documents.ready_papers()}
    wanted = [i for i in (list(doc_ids) if doc_ids is not None else sorted(ready)) if i in ready]
    done: dict[str, int] = {}
    for doc_id in wanted:
        records = compute_results(doc_id, load_items(lib, doc_id))
        if lib.documents.get(doc_id) is None:  # deleted meanwhile: store nothing under its id
            continue
        lib.results.replace_doc(doc_id, records)
        if lib.documents.get(doc_id) is None:  # deleted while they were written: they go too
            lib.results.delete_doc(doc_id)
            continue
        done[doc_id] = len(records)
        if on_paper is not None:
            on_paper(doc_id, len(records))
    return done
