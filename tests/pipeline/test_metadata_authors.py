"""Author lists whole and in order (core/pipeline/metadata: layout.byline_names, names.py): each mechanism on a
generated first page whose byline is drawn as real papers draw theirs (marks raised between names, a name wrapped
over two lines, a grid of authors beside the abstract, a side column of affiliations), plus the three papers of the
shared corpus whose lists were wrong (marker `corpus`: skipped when ../shared is absent)."""
from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from core.pipeline.metadata.extract import extract_metadata
from core.pipeline.metadata.layout import Line, reading_order
from core.pipeline.metadata.names import names_in, vote_with_pdf_field
from core.presentation.bibtex import citation_key
from core.schema.records import ContentItem
from tests.paths import CORPUS

TITLE = "Heliotrope Solvers for Sparse Zebrafish Migration Lattices"
ABSTRACT = ("We present the heliotrope solver, which converges after seventeen iterations on every migration graph "
            "we tried, and a study of the lattices it builds.")


def first_page(path: Path, draw, *, author_field: str = "") -> Path:
    """A one-page PDF: the title in bold 16 pt, then whatever `draw(page)` puts under it, then an abstract."""
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    page.insert_text((90, 90), TITLE, fontname="hebo", fontsize=16)
    draw(page)
    page.insert_text((250, 330), "Abstract", fontname="hebo", fontsize=11)
    y = 350
    for k in range(0, len(ABSTRACT), 80):
        page.insert_text((90, y), ABSTRACT[k:k + 80], fontname="helv", fontsize=10)
        y += 13
    if author_field:
        doc.set_metadata({"author": author_field})
    doc.save(path)
    return path


def spans(page, x: float, y: float, parts: list[tuple[str, float, float]], font: str = "helv") -> None:
    """Text pieces on one baseline, left to right: (text, size, rise). A rise > 0 is a raised mark."""
    for text, size, rise in parts:
        page.insert_text((x, y - rise), text, fontname=font, fontsize=size)
        x += pymupdf.get_text_length(text, fontname=font, fontsize=size) + 1


def authors(pdf: Path) -> list[str]:
    return extract_metadata([], pdf, pdf.name).authors


def test_names_apart_only_by_raised_marks_are_as_many_names(tmp_path):
    def draw(page):  # "Kyle Loα Zejiang Shenα,τ Benjamin Newmanα Joseph Chee Changα" with no comma or gap
        line = []
        for name, mark in (("Ada Lovelace", "1"), ("Alan Turing", "1,2"), ("Grace Brewster Hopper", "2"),
                           ("Mary Somerville", "3")):
            line += [(name, 12, 0), (mark, 7, 4), (" ", 12, 0)]
        spans(page, 80, 130, line)
        spans(page, 150, 160, [("1", 7, 4), ("Institute of Imaginary Studies", 10, 0)])

    assert authors(first_page(tmp_path / "marks.pdf", draw)) == [
        "Ada Lovelace", "Alan Turing", "Grace Brewster Hopper", "Mary Somerville"]


def test_a_name_wrapped_over_two_lines_is_one_name_and_an_initial_is_no_affiliation_word(tmp_path):
    def draw(page):  # "…, Aditi Seshadri,‡ and Andrew" / "D. White∗,‡"
        spans(page, 80, 130, [("Geemi P. Wellawatte,", 13, 0), ("†", 8, 4), ("  Heta A. Gandhi,", 13, 0),
                              ("‡", 8, 4), ("  Aditi Seshadri,", 13, 0), ("‡", 8, 4), (" and", 13, 0)])
        spans(page, 480, 130, [("Andrew", 13, 0)])
        spans(page, 270, 152, [("D. White", 13, 0), ("∗,‡", 8, 4)])
        spans(page, 120, 185, [("†Department of Chemistry, University of Rochester, Rochester, NY", 10, 0)])

    assert authors(first_page(tmp_path / "wrapped.pdf", draw)) == [
        "Geemi P. Wellawatte", "Heta A. Gandhi", "Aditi Seshadri", "Andrew D. White"]


def test_a_raised_mark_on_its_own_line_does_not_put_the_first_author_last():
    """MuPDF often gives a mark raised after the first name a line of its own: its top is higher than the names',
    and rows made by tops put "Jingfeng Yang" after the authors beside him. Rows are made by baselines."""
    mark = Line("∗", 8, 103.3, 110.8, 236.0, True, "∗", 240.2, False, 109.3, "∗")
    first = Line("Jingfeng Yang", 12, 109.7, 120.5, 163.0, True, "Jingfeng Yang", 236.0, True, 118.0)
    second = Line("Aditya Gupta", 12, 107.7, 120.5, 251.4, True, "Aditya Gupta", 325.3, True, 118.0)
    order = [ln.text for ln in reading_order([second, mark, first])]
    assert order.index("Jingfeng Yang") < order.index("Aditya Gupta")


def test_a_grid_of_authors_beside_the_abstract_is_read_past_its_affiliation_lines(tmp_path):
    def draw(page):  # names bold, affiliations regular; the abstract's heading on the first names' row
        for x, rows in ((80, ("Ada Lovelace", "Grace Hopper")), (230, ("Alan Turing", ""))):
            for k, name in enumerate(rows):
                if not name:
                    continue
                y = 130 + 70 * k
                page.insert_text((x, y), name, fontname="hebo", fontsize=9)
                page.insert_text((x, y + 12), "Quality and Usability Lab", fontname="helv", fontsize=9)
                page.insert_text((x, y + 24), "TU Berlin", fontname="helv", fontsize=9)
                page.insert_text((x, y + 36), f"{name.split()[0].lower()}@example.org", fontname="helv", fontsize=9)
        page.insert_text((400, 130), "Abstract", fontname="hebo", fontsize=9)
        page.insert_text((400, 142), "We study lattices of larvae.", fontname="helv", fontsize=9)

    assert authors(first_page(tmp_path / "grid.pdf", draw)) == ["Ada Lovelace", "Alan Turing", "Grace Hopper"]


def test_a_grid_whose_e_mail_lines_are_in_the_names_type_and_a_tex_cedilla(tmp_path):
    def draw(page):  # names and e-mail addresses in one type (12 pt regular), affiliations smaller; TeX's "c¸"
        for k, row in enumerate((("Pierre-Franc\u00b8ois Dutot", "Lionel Eyraud"), ("Grace Hopper", "Alan Turing"))):
            for x, name in zip((120, 360), row):
                y = 130 + 75 * k
                page.insert_text((x, y), name, fontname="helv", fontsize=12)
                page.insert_text((x, y + 11), "51 avenue Jean Kuntzmann", fontname="helv", fontsize=10)
                page.insert_text((x, y + 22), "38330 Montbonnot Saint-Martin, France", fontname="helv", fontsize=10)
                page.insert_text((x, y + 36), f"{name.split()[-1].lower()}@imag.fr", fontname="helv", fontsize=12)

    assert authors(first_page(tmp_path / "emails.pdf", draw)) == [
        "Pierre-François Dutot", "Lionel Eyraud", "Grace Hopper", "Alan Turing"]


def test_a_side_column_of_affiliations_and_an_affiliation_line_name_nobody(tmp_path):
    def draw(page):
        spans(page, 200, 130, [("Ada Lovelace,", 10, 0), ("1,2", 6, 3), (" Alan Turing", 10, 0), ("2", 6, 3)])
        spans(page, 200, 143, [("Grace Hopper", 10, 0), ("1", 6, 3)])
        spans(page, 200, 160, [("Laboratoire de Photonique, CNRS, Route de Nozay, 91460 Marcoussis, France", 8, 0)])
        spans(page, 20, 143, [("1", 6, 3), ("Shanghai No.9 People's", 8, 0)])  # the margin column, same row

    assert authors(first_page(tmp_path / "side.pdf", draw)) == ["Ada Lovelace", "Alan Turing", "Grace Hopper"]


def test_a_table_under_the_title_wraps_no_name(tmp_path):
    def draw(page):  # no byline: a table's head ("Col1  Col2") over its first row ("Val11  Val12")
        for y, cells, font in ((150, ("Col1", "Col2"), "hebo"), (168, ("Val11", "Val12"), "helv")):
            for x, cell in zip((90, 180), cells):
                page.insert_text((x, y), cell, fontname=font, fontsize=12)

    assert authors(first_page(tmp_path / "table.pdf", draw)) == []


def test_the_pdf_author_field_is_a_vote_not_an_override(tmp_path):
    def draw(page):
        spans(page, 90, 130, [("Ada Lovelace, Alan M. Turing and Grace Hopper", 12, 0)])

    # A field naming the first author alone, or shortening a name, loses to the byline the page prints.
    assert authors(first_page(tmp_path / "one.pdf", draw, author_field="Ada Lovelace")) == [
        "Ada Lovelace", "Alan M. Turing", "Grace Hopper"]
    assert authors(first_page(tmp_path / "short.pdf", draw, author_field="Ada Lovelace; Alan Turing; Grace Hopper")
                   ) == ["Ada Lovelace", "Alan M. Turing", "Grace Hopper"]
    # The field wins only when it holds every family name of the byline's and more.
    assert vote_with_pdf_field(["Ada Lovelace"], ["Ada Lovelace", "Alan Turing"]) == (["Ada Lovelace", "Alan Turing"],
                                                                                      True)
    assert vote_with_pdf_field(["Ada Lovelace", "Alan Turing"], ["Md. Shah Alam"])[1] is False


def test_without_a_pdf_page_the_content_list_s_byline_paragraph_gives_its_leading_names():
    """A text document or an import has no first page: the parsed items speak, and a parser's paragraph often holds
    the byline and the affiliations under it."""
    byline = ("Ada Lovelace1, Alan Turing2 and Grace Hopper1 1 University of Oxford, 2 Institute of Imaginary "
              "Studies, Royal Society, London")
    items = [ContentItem(type="text", page_idx=0, text=TITLE, text_level=1),
             ContentItem(type="text", page_idx=0, text=byline),
             ContentItem(type="text", page_idx=0, text="Abstract We present the heliotrope solver.")]
    meta = extract_metadata(items, None, "notes.md")
    assert meta.authors == ["Ada Lovelace", "Alan Turing", "Grace Hopper"] and meta.sources["authors"] == "content list"


@pytest.mark.parametrize(("line", "names"), [
    ("Ross G. DOUGLAS∗1 , Rajni K. SHARMA†1 , Geoffrey MASUYER‡", ["Ross G. Douglas", "Rajni K. Sharma",
                                                                      "Geoffrey Masuyer"]),
    ("AMIR SHEIKHAHMADI1,∗, MOHAMMAD A. NEMATBAKHSH1 , AND ARMAN SHOKROLLAHI2,3,∗",
     ["Amir Sheikhahmadi", "Mohammad A. Nematbakhsh", "Arman Shokrollahi"]),
    ("Muhammad Atif Iqbal     Athar Mohsin Zaidi     Dr. Saeed Murtaza",
     ["Muhammad Atif Iqbal", "Athar Mohsin Zaidi", "Saeed Murtaza"]),
    ("Patrick N.J. Lane, Deborah A. Wallach and Weinan E", ["Patrick N.J. Lane", "Deborah A. Wallach", "Weinan E"]),
    ("Laboratoire de Photonique et de Nanostructures, CNRS, Route de Nozay, 91460 Marcoussis, France", []),
])
def test_byline_lines(line, names):
    assert names_in(line) == names


SHARED = CORPUS / "papers"


@pytest.mark.corpus
@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/corpus is absent")
@pytest.mark.parametrize(("name", "expected", "key"), [
    ("tableformer_demo3.pdf", ["Jingfeng Yang", "Aditya Gupta", "Shyam Upadhyay", "Luheng He", "Rahul Goel",
                               "Shachi Paul"], "yang2022tableformer"),
    ("papermage.pdf", ["Kyle Lo", "Zejiang Shen", "Benjamin Newman", "Joseph Chee Chang", "Russell Authur",
                       "Erin Bransom", "Stefan Candra", "Yoganand Chandrasekhar", "Regan Huff", "Bailey Kuehl",
                       "Amanpreet Singh", "Chris Wilhelm", "Angele Zamarron", "Marti A. Hearst", "Daniel S. Weld",
                       "Doug Downey", "Luca Soldaini"], None),
    ("molecular_explanations_perspective.pdf", ["Geemi P. Wellawatte", "Heta A. Gandhi", "Aditi Seshadri",
                                                "Andrew D. White"], None),
])
def test_the_shared_papers_author_lists(name, expected, key):
    pdf = SHARED / name
    if not pdf.exists():
        pytest.skip(f"{name} is not in ../shared/corpus/papers")
    meta = extract_metadata([], pdf, pdf.name)
    assert meta.authors == expected and meta.sources["authors"] == "first page"
    if key:
        assert citation_key(meta) == key
