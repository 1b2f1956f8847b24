"""Results read from a paper's tables, LLM-free: one ResultRecord per reported number (method × dataset ×
metric, with its setting, unit, direction, whether best, and the cell it came from).

    read_paper_results(doc_id, items) -> list[ResultRecord]

`items` is the paper's whole content list in order (tables and text, so captions and the sentences citing a
table are reachable). Pure and deterministic: no store, no network, no LLM. It never raises on a malformed table:
a table it cannot read gives no records, and the other tables are still read.

The modules, one job each: `values.py` a cell as a number (±, marks, units, bold); `headers.py` the table's
shape (header rows, row labels, roles of header cells, group rows, transposed); `table_kind.py` results or not;
`captions.py` each table's label and caption; `context.py` what the caption and citing sentences say;
`records.py` the records of one table. Names get keys from
core.text.result_names (shared with the read side).
"""
from __future__ import annotations

import logging
from collections.abc import Sequence

from core.pipeline.results.captions import table_captions
from core.pipeline.results.context import citing_sentences, paper_dataset
from core.pipeline.results.records import table_records
from core.schema.records import ContentItem
from core.schema.results import ResultRecord

log = logging.getLogger(__name__)

__all__ = ["read_paper_results"]


def read_paper_results(doc_id: str, items: Sequence[ContentItem]) -> list[ResultRecord]:
    """Every result record of the paper's results tables, in content-list order (see the module doc)."""
    items = list(items)
    try:
        captions = table_captions(items)
    except Exception:  # a label is a nicety; a broken item must not cost the paper its results
        captions = {}
    try:
        own_dataset = paper_dataset(items)
    except Exception:  # a nicety, as the labels are
        own_dataset = ""
    out: list[ResultRecord] = []
    for item in items:
        if item.type != "table" or not item.table_body:
            continue
        label, caption = captions.get(item.index, ("", item.caption))
        try:
            out.extend(table_records(doc_id, item, label, caption, citing_sentences(label, items), own_dataset))
        except Exception:  # never raise on a malformed table: its records are lost, the others are kept
            log.warning("results: table %s of %s could not be read", item.index, doc_id, exc_info=True)
    return out
