"""CSL-JSON in (core/pipeline/metadata/csl_import.py, `core import-bib FILE.json`): the library's own CSL export read
back gives the same metadata; every item becomes a metadata-only entry; hostile files are said whole and hostile
fields are cut and stay text."""
from __future__ import annotations

import json

import pytest

from core.cli import main as cli_main
from core.library import open_library
from core.pipeline.metadata.bib_import import import_bibliography, import_bibtex
from core.pipeline.metadata.csl_import import import_csl
from core.presentation.bibtex import to_csl
from core.presentation.citations import papers_metadata
from core.schema.metadata import FIELDS
from tests.graph_papers import fast_workspace
from tests.pipeline.test_zotero_import import BIB


def fields_by_title(lib) -> dict[str, tuple]:
    return {m.title: tuple((f, tuple(v) if isinstance(v := m.get(f), list) else v) for f in FIELDS)
            for m in papers_metadata(lib)}


def test_the_library_csl_export_reads_back_unchanged(tmp_path):
    first = open_library(fast_workspace(tmp_path / "ws-1"))
    (tmp_path / "library.bib").write_text(BIB, encoding="utf-8")
    import_bibtex(first, tmp_path / "library.bib")  # metadata only: no PDF is beside this .bib
    csl = tmp_path / "library.json"
    csl.write_text(to_csl(papers_metadata(first)), encoding="utf-8")
    second = open_library(fast_workspace(tmp_path / "ws-2"))
    report = import_bibliography(second, csl)
    assert len(report.entries) == 6 and report.added == []
    assert fields_by_title(second) == fields_by_title(first)
    assert {m.sources["title"] for m in papers_metadata(second)} == {"csl"}
    s2orc = next(m for m in papers_metadata(second) if m.title.startswith("S2ORC"))
    assert s2orc.arxiv == "2004.12345" and s2orc.authors == ["Kyle Lo", "Lucy Lu Wang"]


def test_csl_items_read_as_zotero_writes_them(tmp_path):
    path = tmp_path / "zotero.json"
    path.write_text(json.dumps([
        {"id": "http://zotero.org/users/1/items/ABCD", "type": "paper-conference", "title": "Paper {One}",
         "author": [{"family": "Beethoven", "given": "Ludwig", "non-dropping-particle": "van"},
                    {"literal": "The Consortium"}],
         "issued": {"date-parts": [["2021", 6, 1]]}, "container-title": ["Proc. of Things"],
         "DOI": "https://doi.org/10.1/ABC", "URL": "https://arxiv.org/abs/2101.00001v2"},
        {"id": 7, "title": "Raw date", "issued": {"raw": "Spring 1999"}},
        "not an item", {}, {"id": "noyear", "title": "Roman", "issued": {"literal": "MMXX"}}]), encoding="utf-8")
    lib = open_library(fast_workspace(tmp_path / "ws"))
    report = import_csl(lib, path)
    metas = {m.title: m for m in papers_metadata(lib)}
    one = metas["Paper {One}"]  # braces stay: CSL is plain text
    assert one.authors == ["Ludwig van Beethoven", "The Consortium"] and one.year == 2021
    assert one.venue == "Proc. of Things" and one.doi == "10.1/abc" and one.arxiv == "2101.00001"
    assert metas["Raw date"].year == 1999 and metas["Roman"].year is None
    assert ("item 3", "not a CSL item (a JSON object)") in report.skipped
    assert ("item4", "nothing to keep: no PDF, title, author or year") in report.skipped
    assert any("year must be four digits" in n for n in report.notes)


def test_hostile_csl_fields_are_cut_and_stay_text(tmp_path):
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps([{"id": "evil", "title": "\\input{/etc/passwd} \u202e<script>" + "x" * 1_000_000,
                                 "author": [{"family": "Evil\x1b[2J", "given": "Eve"}] * 500,
                                 "abstract": "a" * 100_000}]), encoding="utf-8")
    lib = open_library(fast_workspace(tmp_path / "ws"))
    report = import_csl(lib, path)
    (meta,) = papers_metadata(lib)
    assert meta.title.startswith("\\input{/etc/passwd}") and len(meta.title) == 500 and "\u202e" not in meta.title
    assert len(meta.authors) == 100 and "\x1b" not in meta.authors[0] and len(meta.abstract) == 5000
    assert any("title cut to 500" in n for n in report.notes) and any("authors cut" in n for n in report.notes)


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON"),
    ('{"title": "an object"}', "an array of items was expected"),
    ("[" * 100 + "]" * 100, "nested more than"),
    ('[{"title": NaN}]', "not valid JSON"),
])
def test_a_file_that_is_no_csl_is_said_and_nothing_is_imported(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    lib = open_library(fast_workspace(tmp_path / "ws"))
    with pytest.raises(ValueError, match=message):
        import_csl(lib, path)
    assert papers_metadata(lib) == []


def test_core_import_bib_reads_csl_json(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(fast_workspace(tmp_path / "ws").root))
    path = tmp_path / "refs.json"
    path.write_text(json.dumps([{"id": "a", "title": "One"}, 5]), encoding="utf-8")
    assert cli_main(["import-bib", str(path), "-q"]) == 0
    out = capsys.readouterr()
    assert "0 PDFs, 1 metadata-only entries, 1 skipped" in out.out and "item 2: not a CSL item" in out.err
    path.write_text("[", encoding="utf-8")
    assert cli_main(["import-bib", str(path)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
