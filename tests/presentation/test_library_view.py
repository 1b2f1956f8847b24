"""How the Library page orders its table and which upload notices it keeps (core.presentation.display), on real
Document records: the newest document first, and an "added and queued" notice only while its document waits or is
being parsed or indexed."""
from __future__ import annotations

from core.pipeline.documents import AddResult
from core.presentation import display as present
from core.schema.records import DocStatus, Document


def _doc(doc_id: str, created_at: float, status: DocStatus = DocStatus.READY) -> Document:
    return Document(id=doc_id, filename=f"{doc_id}.pdf", status=status, created_at=created_at)


def test_the_newest_document_comes_first_and_the_table_identity_follows_the_rows():
    docs = [_doc("a", 1.0), _doc("c", 3.0), _doc("b", 2.0)]
    ordered = present.newest_first(docs)
    assert [d.id for d in ordered] == ["c", "b", "a"]
    assert present.table_identity(ordered) == present.table_identity(present.newest_first(list(reversed(docs))))
    assert present.table_identity(ordered) != present.table_identity([_doc("d", 4.0), *ordered])
    assert [r["title"] for r in present.document_rows(ordered)] == ["c.pdf", "b.pdf", "a.pdf"]


def test_the_live_progress_sees_no_change_in_the_same_statuses_listed_in_another_order():
    docs = [_doc("a", 1.0, DocStatus.PARSING), _doc("b", 2.0)]
    assert present.status_snapshot(present.newest_first(docs)) == present.status_snapshot(docs)
    assert present.status_snapshot(docs) != present.status_snapshot([_doc("a", 1.0), _doc("b", 2.0)])


def test_an_added_notice_stays_only_while_its_document_is_in_progress():
    def added(doc_id: str) -> tuple:
        return ("pdf", f"{doc_id}.pdf", AddResult(doc_id, f"{doc_id}.pdf", "added", "added"), None)

    duplicate = ("pdf", "d.pdf", AddResult("d", "d.pdf", "duplicate", "already in the library"), None)
    refused = ("zip", "bad.zip", None, "not a MinerU output")
    notices = [added("q"), added("p"), added("r"), added("f"), added("gone"), duplicate, refused]
    docs = [_doc("q", 1, DocStatus.QUEUED), _doc("p", 2, DocStatus.PARSING), _doc("r", 3, DocStatus.READY),
            _doc("f", 4, DocStatus.FAILED), _doc("d", 5)]
    kept = present.upload_notices_to_keep(notices, docs)
    assert [n[1] for n in kept] == ["q.pdf", "p.pdf", "d.pdf", "bad.zip"]


def test_cited_by_counts_each_citing_paper_once_and_the_column_shows_it_for_ready_papers():
    from core.schema.references import ParsedReference

    refs = [ParsedReference("b", 0, "A. 2020. Paper A.", cited_doc_id="a"),
            ParsedReference("b", 7, "A. 2020. Paper A (again).", cited_doc_id="a"),  # one paper citing twice
            ParsedReference("c", 3, "A. 2020. Paper A.", cited_doc_id="a"),
            ParsedReference("c", 4, "Someone. 2019. Not here.", cited_doc_id=""),
            ParsedReference("a", 1, "A. 2020. Itself.", cited_doc_id="a")]  # a self-reference is not a citation
    counts = present.cited_by_counts(refs)
    assert counts == {"a": 2}
    docs = [_doc("a", 1.0), _doc("b", 2.0), _doc("q", 3.0, DocStatus.QUEUED)]
    assert [r["cited by"] for r in present.document_rows(docs, cited_by=counts)] == [2, 0, None]
