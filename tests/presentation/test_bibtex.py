"""BibTeX and CSL-JSON export (core/presentation/bibtex.py), the author-year labels (citations.py) and
`python -m core cite`: what a researcher pastes into a manuscript must parse back to the stored metadata."""
from __future__ import annotations

import json

import bibtexparser
import pytest

from core.cli import main as cli_main
from core.library import open_library
from core.pipeline.metadata.fields import clean_field
from core.presentation.bibtex import citation_key, to_bibtex, to_csl, unique_keys
from core.presentation.citations import source_label
from core.schema.metadata import PaperMetadata
from core.schema.records import Document
from core.settings.workspace import Workspace
from core.store.sqlite_metadata import SQLiteMetadataStore
from core.text.latex import latex_to_text, latex_unescape

SPECTER = PaperMetadata(doc_id="a" * 64, title="SPECTER: Document-level Representation Learning",
                        authors=["Arman Cohan", "Sergey Feldman", "Iz Beltagy"], year=2020,
                        venue="Proceedings of the 58th Annual Meeting of the ACL", doi="10.18653/v1/2020.acl-main.207",
                        abstract="We propose SPECTER.")
HOSTILE = PaperMetadata(doc_id="b" * 64,
                        title="100% of $x_i$ & {braces} #1 ~ ^ \\input{/etc/passwd} <script>x</script>",
                        authors=["Zoë O'Brien-Smith", "Jean-Luc van der Berg"], year=2021,
                        venue="Journal of Q&A_Studies", arxiv="2101.00001")


def parsed_fields(text: str) -> dict[str, dict[str, str]]:
    library = bibtexparser.parse_string(text)
    assert not library.failed_blocks
    return {e.key: {f.key: f.value for f in e.fields} | {"_type": e.entry_type} for e in library.entries}


def test_bibtex_round_trips_through_bibtexparser_with_latex_specials_escaped():
    entries = parsed_fields(to_bibtex([SPECTER, HOSTILE]))
    assert set(entries) == {"cohan2020specter", "obriensmith2021100"}
    specter = entries["cohan2020specter"]
    assert specter["_type"] == "inproceedings" and specter["booktitle"] == SPECTER.venue
    assert specter["author"] == "Arman Cohan and Sergey Feldman and Iz Beltagy" and specter["doi"] == SPECTER.doi
    hostile = entries["obriensmith2021100"]
    assert r"100\% of \$x\_i\$ \& \{braces\} \#1" in hostile["title"]
    assert r"\textbackslash{}input\{/etc/passwd\}" in hostile["title"]  # no \input reaches LaTeX
    assert latex_unescape(hostile["title"]) == HOSTILE.title
    assert latex_unescape(hostile["journal"]) == HOSTILE.venue and hostile["eprint"] == "2101.00001"
    assert hostile["author"].split(" and ") == HOSTILE.authors
    assert latex_to_text(hostile["title"]) == HOSTILE.title  # what the BibTeX import reads


def test_bib_fields_from_elsewhere_read_as_text():
    assert latex_to_text(r"Gy{\"o}ngyi and {SPECTER}: {D}ocument-level \emph{models} --- 100\% of \$x\_i\$") == \
        "Gyöngyi and SPECTER: Document-level models — 100% of $x_i$"


def test_keys_are_family_year_word_and_stay_unique():
    assert citation_key(SPECTER) == "cohan2020specter"
    assert citation_key(PaperMetadata(title="The Art of Sampling")) == "anonndart"
    assert unique_keys([SPECTER, SPECTER, SPECTER]) == ["cohan2020specter", "cohan2020spectera", "cohan2020specterb"]


def test_csl_json_names_types_and_dates():
    (item, other) = json.loads(to_csl([SPECTER, HOSTILE]))
    assert item["id"] == "cohan2020specter" and item["type"] == "paper-conference"
    assert item["author"][0] == {"family": "Cohan", "given": "Arman"} and item["issued"] == {"date-parts": [[2020]]}
    assert other["URL"] == "https://arxiv.org/abs/2101.00001" and other["title"] == HOSTILE.title


def test_answer_sources_read_as_author_year_and_page():
    assert source_label(SPECTER, "SPECTER", 3) == "Cohan et al. 2020, p. 3"
    two = PaperMetadata(authors=["Jeffrey Dean", "Sanjay Ghemawat"], year=2004)
    assert source_label(two, "MapReduce") == "Dean and Ghemawat 2004"
    assert source_label(None, "A paper without authors", 2) == "A paper without authors, p. 2"


def test_hostile_values_are_cleaned_and_cut_with_a_reason():
    value, notes = clean_field("title", "x" * 100_000)
    assert len(value) == 500 and notes == ["title cut to 500 characters (it had 100,000)"]
    value, notes = clean_field("title", "Bad\x1b[2J\x00 title\u202e")
    assert value == "Bad title" and "control characters" in notes[0]  # the escape sequence goes whole
    value, notes = clean_field("authors", ";".join(f"Author Number{i}" for i in range(150)))
    assert len(value) == 100 and "authors cut to the first 100" in notes[0]
    assert clean_field("doi", "https://doi.org/10.1000/ABC")[0] == "10.1000/abc"
    with pytest.raises(ValueError, match="unknown metadata field"):
        clean_field("publisher", "x")


def test_core_cite_prints_bibtex_by_default_and_csl_on_request(tmp_path, monkeypatch, capsys):
    ws = Workspace(tmp_path / "ws").ensure()
    lib = open_library(ws)
    for meta in (SPECTER, HOSTILE):
        lib.documents.insert(Document(id=meta.doc_id, filename=f"{meta.doc_id[:4]}.pdf"))
        SQLiteMetadataStore(lib.db).put_extracted(meta)
    monkeypatch.setenv("PAPERGRAPH_WORKSPACE", str(ws.root))
    assert cli_main(["cite"]) == 0
    assert set(parsed_fields(capsys.readouterr().out)) == {"cohan2020specter", "obriensmith2021100"}
    assert cli_main(["cite", "aaaa", "--format", "csl"]) == 0
    assert [i["id"] for i in json.loads(capsys.readouterr().out)] == ["cohan2020specter"]
    with pytest.raises(SystemExit, match="matches 0 documents"):  # as `core delete` says it
        cli_main(["cite", "cccc"])


def test_an_abstract_leaves_as_plain_text_escaped_for_bibtex_and_plain_in_csl():
    """MinerU writes a paper's text as Markdown with inline HTML: none of it belongs in a bibliography."""
    abstract = ("We **propose** *SPECTER*, a <b>new</b> method<sup>1</sup> &amp; more: see [the code]"
                "(https://github.com/allenai/specter) and <a href=\"x\">a demo</a>.\n\n## Results\n"
                "- 100% of $x_i$ with `{braces}` and <script>alert(1)</script>a \\input{/etc/passwd}")
    meta = PaperMetadata(doc_id="c" * 64, title="SPECTER", authors=["Arman Cohan"], year=2020, abstract=abstract)
    plain = ("We propose SPECTER, a new method¹ & more: see the code (https://github.com/allenai/specter) and a demo. "
             "Results 100% of $x_i$ with {braces} and a \\input{/etc/passwd}")
    text = to_bibtex([meta])
    field = parsed_fields(text)["cohan2020specter"]["abstract"]
    assert latex_unescape(field) == plain
    assert "\\&" in field and "\\$x\\_i\\$" in field and "\\textbackslash{}input\\{" in field
    assert not any(mark in text for mark in ("**", "<b>", "</", "##", "&amp;", "](", "`"))
    assert json.loads(to_csl([meta]))[0]["abstract"] == plain
