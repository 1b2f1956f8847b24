"""A Zotero data folder in (core/pipeline/metadata/zotero_import.py): a folder built here with Zotero's own schema
gives the same library as the .bib a Better BibTeX export of it is; every skip has its reason; a hostile database
(huge fields, LaTeX, paths outside the folder, links, a lock held while writing, a damaged file) is said clearly and
imports nothing by half; Zotero's database is never changed."""
from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3

import pytest

from core.cli import main as cli_main
from core.library import open_library, read_zotero_database
from core.pipeline.ingest import process_queue
from core.pipeline.metadata.bib_import import import_bibtex
from core.pipeline.metadata.zotero_import import ZoteroUnreadable, import_zotero
from core.presentation.bibtex import to_bibtex
from core.presentation.citations import papers_metadata
from core.schema.metadata import FIELDS
from core.schema.records import DocStatus
from tests import pdfs
from tests.graph_papers import fast_workspace
from tests.zotero_folder import ZoteroFolder

LINKED_FILE, LINKED_URL = 2, 3
SPECTER = "SPECTER: Document-level Representation Learning using Citation-informed Transformers"
ACL = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics"

# What Better BibTeX writes for the library the fixture builds (its `file` paths relative to the data folder).
BIB = r"""
@inproceedings{cohan2020specter,
  title = {{SPECTER}: Document-level Representation Learning using Citation-informed Transformers},
  author = {Cohan, Arman and Feldman, Sergey and Beltagy, Iz and Downey, Doug and Weld, Daniel S.},
  year = {2020}, booktitle = {Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics},
  doi = {10.18653/v1/2020.acl-main.207},
  abstract = {We propose SPECTER, trained on 100\% of the citation graph \& more.},
  file = {Full Text PDF:storage/AAAA0001/specter.pdf:application/pdf;Snapshot:storage/AAAA0002/snap.html:text/html}
}
@article{lo2020s2orc,
  title = {S2ORC: The Semantic Scholar Open Research Corpus}, author = {Lo, Kyle and Wang, Lucy Lu}, year = {2020},
  journal = {Journal of Open Corpora}, eprint = {2004.12345}, archiveprefix = {arXiv},
  abstract = {A corpus of 81.1M papers.}, file = {papers/s2orc.pdf}
}
@misc{gyongyi2004trustrank,
  title = {Combating Web Spam with {TrustRank}}, author = {Gy{\"o}ngyi, Zolt{\'a}n and Garcia-Molina, Hector},
  year = {2004}, abstract = {No PDF: a metadata-only entry.}
}
@techreport{openai2023report, title = {A Report by an Institution}, author = {{Imaginary Institute of Studies}},
  year = {2023}}
@article{linked, title = {A Linked Paper}, author = {Link, Ann}, year = {2019},
  file = {Full Text PDF:storage/AAAA0004/link.pdf:application/pdf}}
@article{outside, title = {Outside Paper}, author = {Side, Out}, year = {2018},
  file = {PDF:../../etc/passwd:application/pdf;PDF:storage/AAAA0005/../../../secret.pdf:application/pdf}}
"""


def build_library(root, tmp_path) -> ZoteroFolder:
    z = ZoteroFolder(root)
    reading = z.add_collection("Reading", "COLL0001")
    spam = z.add_collection("Spam", "COLL0002", parent=reading)
    specter = z.add_item("conferencePaper", "ITEM0001", {
        "title": SPECTER, "date": "2020-07-00 July 2020", "proceedingsTitle": ACL,
        "DOI": "10.18653/v1/2020.acl-main.207", "extra": "Citation Key: cohan2020specter",
        "abstractNote": "We propose SPECTER, trained on 100% of the citation graph & more."},
        [("Arman", "Cohan"), ("Sergey", "Feldman"), ("Iz", "Beltagy"), ("Doug", "Downey"), ("Daniel S.", "Weld")],
        collection=reading)
    z.add_attachment(specter, "AAAA0001", "storage:specter.pdf")
    z.add_attachment(specter, "AAAA0002", "storage:snap.html", content_type="text/html", title="Snapshot")
    pdfs.make_paper_pdf(z.storage("AAAA0001") / "specter.pdf", title="A Title The Import Overrides", pages=1,
                        with_table=False, with_figure=False)
    (z.storage("AAAA0002") / "snap.html").write_text("<html>snapshot</html>")
    s2orc = z.add_item("journalArticle", "ITEM0002", {
        "title": "S2ORC: The Semantic Scholar Open Research Corpus", "date": "2020",
        "publicationTitle": "Journal of Open Corpora", "extra": "Citation Key: lo2020s2orc\narXiv: 2004.12345",
        "abstractNote": "A corpus of 81.1M papers."}, [("Kyle", "Lo"), ("Lucy Lu", "Wang")])
    (root / "papers").mkdir()
    pdfs.make_paper_pdf(root / "papers" / "s2orc.pdf", title="Another Title The Import Overrides", pages=1,
                        with_table=False, with_figure=False, authors="Someone Else, Nowhere University")
    z.add_attachment(s2orc, "AAAA0003", str(root / "papers" / "s2orc.pdf"), link_mode=LINKED_FILE)  # inside: read
    z.add_item("journalArticle", "ITEM0003", {
        "title": "Combating Web Spam with TrustRank", "date": "2004-00-00 2004",
        "extra": "Citation Key: gyongyi2004trustrank", "abstractNote": "No PDF: a metadata-only entry."},
        [("Zoltán", "Gyöngyi"), ("Hector", "Garcia-Molina")], collection=spam)
    z.add_item("report", "ITEM0007", {"title": "A Report by an Institution", "date": "2023",
                                      "extra": "Citation Key: openai2023report"}, ["Imaginary Institute of Studies"])
    linked = z.add_item("journalArticle", "ITEM0004", {"title": "A Linked Paper", "date": "2019",
                                                       "extra": "Citation Key: linked"}, [("Ann", "Link")])
    z.add_attachment(linked, "AAAA0004", "storage:link.pdf")
    pdfs.make_text_pdf(tmp_path / "secret.pdf", text_per_page="outside the folder")
    os.symlink(tmp_path / "secret.pdf", z.storage("AAAA0004") / "link.pdf")
    outside = z.add_item("journalArticle", "ITEM0005", {"title": "Outside Paper", "date": "2018",
                                                        "extra": "Citation Key: outside"}, [("Out", "Side")])
    z.add_attachment(outside, "AAAA0005", "../../etc/passwd", link_mode=LINKED_FILE)
    z.add_attachment(outside, "AAAA0006", "storage:../../../secret.pdf")
    z.add_attachment(outside, "AAAA0007", str(tmp_path / "secret.pdf"), link_mode=LINKED_FILE)
    z.add_attachment(outside, "AAAA0008", "attachments:Papers/elsewhere.pdf", link_mode=LINKED_FILE)
    z.add_attachment(outside, "AAAA0009", "", link_mode=LINKED_URL, content_type="text/html")
    z.add_item("journalArticle", "ITEM0006", {"title": "Thrown Away", "date": "2001"}, [("Tr", "Ash")], deleted=True)
    z.add_note(specter, "NOTE0001", "<p>my notes</p>")
    z.conn.execute("INSERT INTO libraries VALUES (2, 'feed', 0, 0, 0, 0, 0, 0)")  # an RSS feed Zotero follows
    z.conn.execute("INSERT INTO items (itemTypeID, libraryID, key) SELECT itemTypeID, 2, 'FEED0001' FROM itemTypes "
                   "WHERE typeName = 'journalArticle'")
    z.close()
    (root / "library.bib").write_text(BIB, encoding="utf-8")
    return z


@pytest.fixture
def zotero(tmp_path):
    return build_library(tmp_path / "Zotero", tmp_path)


def library_state(lib) -> dict[str, tuple]:
    """Every paper and entry: id → (every metadata field, the document's title), the sources apart."""
    titles = {d.id: d.display_title for d in lib.documents.list()}
    return {m.doc_id: (tuple((f, tuple(v) if isinstance(v := m.get(f), list) else v) for f in FIELDS),
                       titles.get(m.doc_id)) for m in papers_metadata(lib)}


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_zotero_folder_gives_the_same_library_as_its_bib_export(tmp_path, zotero):
    before = digest(zotero.db)
    by_zotero = open_library(fast_workspace(tmp_path / "ws-zotero"))
    report = import_zotero(by_zotero, zotero.root)
    by_bib = open_library(fast_workspace(tmp_path / "ws-bib"))
    bib_report = import_bibtex(by_bib, zotero.root / "library.bib")

    assert library_state(by_zotero) == library_state(by_bib)
    assert len(library_state(by_zotero)) == 6
    assert [k for k, _, _ in report.added] == [k for k, _, _ in bib_report.added] == ["cohan2020specter", "lo2020s2orc"]
    assert [k for k, _ in report.entries] == [k for k, _ in bib_report.entries]
    assert {m.sources["title"] for m in papers_metadata(by_zotero)} == {"zotero"}
    assert {m.sources["title"] for m in papers_metadata(by_bib)} == {"bibtex"}
    specter = by_zotero.metadata.get(report.added[0][1])
    assert specter.authors[-1] == "Daniel S. Weld" and specter.year == 2020 and specter.venue == ACL
    assert by_zotero.metadata.get(report.added[1][1]).arxiv == "2004.12345"

    reasons = dict(report.skipped)
    assert reasons["linked: storage/AAAA0004/link.pdf"] == "a symbolic link: links are not followed"
    assert reasons["outside: ../../etc/passwd"].startswith("outside the folder")
    assert reasons["outside: storage/AAAA0006/../../../secret.pdf"].startswith("outside the folder")
    assert reasons[f"outside: {tmp_path / 'secret.pdf'}"].startswith("outside the folder")
    assert reasons["outside: attachments:Papers/elsewhere.pdf"].startswith("a linked file relative to Zotero's base")
    assert reasons["outside: AAAA0009"] == "a link to a web page, not a file"
    assert reasons["ITEM0006 (Thrown Away)"] == "in Zotero's trash"
    assert reasons["1 note"].startswith("not papers") and reasons["1 feed item"].startswith("not papers")
    assert digest(zotero.db) == before  # read from a copy; Zotero's file untouched
    assert not any("locked" in n for n in report.notes)
    assert not (zotero.root / "zotero.sqlite-journal").exists()


def test_a_collection_brings_its_items_and_those_of_the_collections_under_it(tmp_path, zotero):
    lib = open_library(fast_workspace(tmp_path / "ws"))
    report = import_zotero(lib, zotero.root, collection="reading")
    assert [k for k, _, _ in report.added] == ["cohan2020specter"]
    assert [k for k, _ in report.entries] == ["gyongyi2004trustrank"]  # from Spam, under Reading
    assert any("outside the collection 'reading'" in n for n in report.notes)
    with pytest.raises(ValueError, match="no collection named 'Nope'.*Reading, Spam"):
        import_zotero(lib, zotero.root, collection="Nope")


def test_a_standalone_pdf_is_ingested_without_its_file_name_as_title(tmp_path):
    z = ZoteroFolder(tmp_path / "Zotero")
    z.add_attachment(None, "SOLO0001", "storage:scan-2021.pdf", title="scan-2021.pdf")
    pdfs.make_text_pdf(z.storage("SOLO0001") / "scan-2021.pdf", text_per_page="a standalone paper")
    z.add_attachment(None, "SOLO0002", "storage:gone.pdf", title="gone.pdf")
    z.conn.execute("UPDATE itemDataValues SET value = CAST('blob title' AS BLOB) WHERE value = 'gone.pdf'")
    z.close()
    lib = open_library(fast_workspace(tmp_path / "ws"))
    report = import_zotero(lib, z.root)
    ((key, doc_id, _),) = report.added
    assert key == "SOLO0001" and lib.metadata.get(doc_id) is None  # the page's own title comes at the parse
    assert dict(report.skipped)["SOLO0002: storage/SOLO0002/gone.pdf"] == "no such file"
    assert ("SOLO0002", "nothing to keep: no PDF, title, author or year") in report.skipped
    solo = {i.key: i for i in read_zotero_database(z.db).items}
    assert solo["SOLO0002"].fields["title"] == "blob title"  # a BLOB value read as text


def test_hostile_fields_are_cut_and_stay_text(tmp_path):
    z = ZoteroFolder(tmp_path / "Zotero")
    z.add_item("journalArticle", "EVIL0001", {
        "title": "\\input{/etc/passwd} <script>alert(1)</script> \x1b[2J" + "x" * 1_000_000, "date": "MMXX",
        "publicationTitle": "v" * 10_000}, [("Eve\x00", "Evil\u202e")])
    z.close()
    lib = open_library(fast_workspace(tmp_path / "ws"))
    report = import_zotero(lib, z.root)
    (_, entry), = report.entries
    meta = lib.metadata.get(entry)
    assert meta.title.startswith("\\input{/etc/passwd} <script>") and len(meta.title) == 500  # text, not LaTeX
    assert "\x1b" not in meta.title and meta.authors == ["Eve Evil"] and meta.year is None and len(meta.venue) == 300
    assert any("title cut to 500 characters" in n for n in report.notes)
    assert any("year must be four digits" in n for n in report.notes)
    exported = to_bibtex([meta])
    assert "\\input{" not in exported and "\\textbackslash" in exported  # escaped on the way out


def test_a_database_locked_while_written_is_refused_whole_and_one_merely_locked_is_read(tmp_path, zotero):
    lib = open_library(fast_workspace(tmp_path / "ws"))
    holder = sqlite3.connect(zotero.db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # as Zotero holds it while it runs
    try:
        report = import_zotero(lib, zotero.root)  # the copy reads as the file stands
        assert len(report.added) == 2 and len(report.entries) == 4
        assert any(n.startswith("zotero.sqlite is locked by another program (Zotero is running)") for n in report.notes)
        # A write under way, larger than the cache: pages reach the file, the old ones wait in the journal.
        holder.execute("PRAGMA cache_size = 1")
        holder.executemany("INSERT INTO itemDataValues (value) VALUES (?)",
                           [(f"{n} " + "v" * 500,) for n in range(3000)])
        holder.execute("UPDATE itemDataValues SET value = value || ' (edited)'")
        assert (zotero.root / "zotero.sqlite-journal").exists()
        other = open_library(fast_workspace(tmp_path / "ws-2"))
        with pytest.raises(ZoteroUnreadable, match="was being written.*close Zotero.*nothing was imported"):
            import_zotero(other, zotero.root)
        assert papers_metadata(other) == [] and other.documents.list() == []
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.mark.parametrize("damage", ["garbage", "truncated", "not zotero", "symlink", "missing"])
def test_a_damaged_or_foreign_database_is_said_and_nothing_is_imported(tmp_path, zotero, damage):
    db = zotero.db
    if damage == "garbage":
        db.write_bytes(b"\x00not sqlite\x00" * 1000)
    elif damage == "truncated":
        data = db.read_bytes()
        db.write_bytes(data[:100] + b"\xff" * (len(data) - 100))
    elif damage == "not zotero":
        db.unlink()
        sqlite3.connect(db).executescript("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
    elif damage == "symlink":
        shutil.move(db, tmp_path / "real.sqlite")
        os.symlink(tmp_path / "real.sqlite", db)
    else:
        db.unlink()
    lib = open_library(fast_workspace(tmp_path / "ws"))
    expected = {"garbage": "damaged or not an SQLite database", "truncated": "damaged|cannot be read",
                "not zotero": "not a Zotero database", "symlink": "a symbolic link",
                "missing": "is this a Zotero data folder"}[damage]
    with pytest.raises(ZoteroUnreadable, match=expected):
        import_zotero(lib, zotero.root)
    assert papers_metadata(lib) == [] and lib.documents.list() == []


def test_core_import_zotero_reports_what_it_skipped(tmp_path, zotero, monkeypatch, capsys):
    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(fast_workspace(tmp_path / "ws").root))
    assert cli_main(["import-zotero", str(zotero.root / "zotero.sqlite"), "--no-ingest", "-q"]) == 0  # or its folder
    out = capsys.readouterr()
    assert "2 PDFs, 4 metadata-only entries, 9 skipped" in out.out
    assert "skipped   linked: storage/AAAA0004/link.pdf: a symbolic link" in out.err
    assert "skipped   ITEM0006 (Thrown Away): in Zotero's trash" in out.err
    (zotero.root / "zotero.sqlite").write_bytes(b"junk" * 100)
    assert cli_main(["import-zotero", str(zotero.root), "-q"]) == 2
    assert "damaged or not an SQLite database" in capsys.readouterr().err


@pytest.mark.slow
def test_the_imported_pdfs_are_ingested_and_keep_the_zotero_metadata(tmp_path, zotero):
    lib = open_library(fast_workspace(tmp_path / "ws"))
    report = import_zotero(lib, zotero.root)
    assert all(d.status == DocStatus.READY for d in process_queue(lib))
    specter = lib.metadata.get(report.added[0][1])
    assert specter.title == SPECTER and specter.sources["title"] == "zotero"
    assert lib.documents.get(report.added[0][1]).display_title == SPECTER
