"""Hand-made result records (core.schema.results) for the tests of the results store, service, faces and page, as
the extractor would read them from two papers' tables. Keys are spelled as core.text.result_names would make them:
lower case, no punctuation."""
from __future__ import annotations

from core.library import Library
from core.schema.metadata import PaperMetadata
from core.schema.records import DocStatus, Document
from core.schema.results import Direction, ResultRecord

SPECTER = "a" * 64
SCIBERT = "b" * 64
HOSTILE = "c" * 64  # a paper whose table cells try formulas, Markdown, LaTeX and terminal escapes


def record(doc_id: str, row: int, col: int, method: str, dataset: str, metric: str, value: float, text: str = "",
           **kw) -> ResultRecord:
    kw.setdefault("direction", Direction.HIGHER)
    kw.setdefault("table_label", "Table 1")
    kw.setdefault("page", 3)
    kw.setdefault("bbox", (100.0, 200.0, 900.0, 500.0))
    return ResultRecord(doc_id=doc_id, item_index=kw.pop("item_index", 12), row=row, col=col, method=method,
                        dataset=dataset, metric=metric, value=value, value_text=text or f"{value:.1f}",
                        method_key=method.lower().replace("-", ""), dataset_key=dataset.lower().replace("-", ""),
                        metric_key=metric.lower().replace("-", ""), **kw)


def specter_records() -> list[ResultRecord]:
    return [record(SPECTER, 3, 5, "SciBERT", "SciDocs", "Avg.", 59.6),
            record(SPECTER, 7, 5, "SPECTER", "SciDocs", "Avg.", 80.0, best=True),
            record(SPECTER, 7, 1, "SPECTER", "SciDocs", "MAP", 83.6, setting="test"),
            record(SPECTER, 3, 1, "SciBERT", "SciDocs", "MAP", 79.5, setting="test"),
            record(SPECTER, 5, 1, "Citeomatic", "SciDocs", "MAP", 86.2, setting="dev")]


def scibert_records() -> list[ResultRecord]:
    return [record(SCIBERT, 2, 1, "SciBERT", "SciDocs", "Avg.", 61.0, page=5, table_label="Table 2"),
            record(SCIBERT, 2, 2, "SciBERT", "ChemProt", "F1", 83.6, page=5, table_label="Table 2"),
            record(SCIBERT, 3, 2, "BioBERT", "ChemProt", "F1", 76.7, page=5, table_label="Table 2"),
            record(SCIBERT, 3, 3, "BioBERT", "ChemProt", "Error", 12.0, page=5, table_label="Table 2",
                   direction=Direction.LOWER),
            record(SCIBERT, 2, 3, "SciBERT", "ChemProt", "Error", 9.5, page=5, table_label="Table 2",
                   direction=Direction.LOWER)]


def hostile_records() -> list[ResultRecord]:
    return [record(HOSTILE, 1, 1, "=HYPERLINK(\"http://x\")|*b*", "SciDocs", "Avg.", 70.0,
                   text="70.0 \x1b]0;pwned\x07", setting="$\\input{/etc/passwd}$ & <b>x</b>", page=0)]


def add_paper(lib: Library, doc_id: str, title: str, year: int | None, records: list[ResultRecord]) -> None:
    """A ready paper with its metadata and its records, as an ingest would leave it."""
    lib.documents.insert(Document(id=doc_id, filename=f"{title[:20]}.pdf", title=title))
    for status in (DocStatus.PARSING, DocStatus.INDEXING, DocStatus.READY):
        lib.documents.set_status(doc_id, status)
    lib.metadata.put_extracted(PaperMetadata(doc_id=doc_id, title=title, year=year, sources={"title": "pdf"}))
    lib.results.replace_doc(doc_id, records)


def add_papers(lib: Library, hostile: bool = False) -> None:
    add_paper(lib, SPECTER, "SPECTER: Document-level Representation Learning", 2020, specter_records())
    add_paper(lib, SCIBERT, "SciBERT: A Pretrained Language Model for Scientific Text", 2019, scibert_records())
    if hostile:
        add_paper(lib, HOSTILE, "Hostile <script>alert(1)</script> paper", 2021, hostile_records())
