"""The Library's filters (core/presentation/library_filters.py): by year, by author typed by a person (any order of
a name's words, accents ignored, several authors with ';'), by venue; together, in the documents' order."""
from __future__ import annotations

from core.presentation.library_filters import (
    LibraryFilter,
    describe,
    filter_documents,
    matches_author,
    venue_options,
    year_range,
)
from core.schema.metadata import PaperMetadata
from core.schema.records import Document

DOCS = [Document(id=i, filename=f"{i}.pdf") for i in ("a", "b", "c", "d")]
METAS = {
    "a": PaperMetadata("a", "SPECTER", ["Arman Cohan", "Iz Beltagy"], 2020, "ACL"),
    "b": PaperMetadata("b", "TrustRank", ["Zoltán Gyöngyi", "Hector Garcia-Molina"], 2004, "VLDB"),
    "c": PaperMetadata("c", "Longformer", ["Iz Beltagy", "Matthew E. Peters", "Arman Cohan"], None, "ACL"),
    # "d": nothing known
}


def ids(chosen: LibraryFilter) -> list[str]:
    return [d.id for d in filter_documents(DOCS, METAS, chosen)]


def test_no_filter_keeps_everything_in_order():
    assert not LibraryFilter().active and ids(LibraryFilter()) == ["a", "b", "c", "d"]


def test_an_author_is_found_by_any_part_of_the_name_in_any_order_without_accents():
    assert ids(LibraryFilter(author="cohan")) == ["a", "c"]
    assert ids(LibraryFilter(author="Cohan Arman")) == ["a", "c"]
    assert ids(LibraryFilter(author="gyongyi")) == ["b"]
    assert ids(LibraryFilter(author="  ")) == ["a", "b", "c", "d"]


def test_several_authors_separated_by_semicolons_must_all_be_there():
    assert ids(LibraryFilter(author="Beltagy; Peters")) == ["c"]
    assert ids(LibraryFilter(author="Cohan and Gyöngyi")) == []
    assert matches_author(METAS["a"], "Cohan, Arman")  # family, given: both parts in one name
    assert not matches_author(None, "anyone")


def test_venues_and_years_narrow_together():
    assert venue_options(DOCS, METAS) == ["ACL", "VLDB"]
    assert ids(LibraryFilter(venues=("ACL",))) == ["a", "c"]
    assert ids(LibraryFilter(venues=("ACL",), years=(2019, 2021))) == ["a", "c"]  # c states no year: kept
    assert ids(LibraryFilter(venues=("ACL",), years=(2019, 2021), keep_unknown_year=False)) == ["a"]
    assert ids(LibraryFilter(years=(2000, 2010), author="garcia")) == ["b"]
    assert year_range(DOCS, METAS) == (2004, 2020) and year_range(DOCS[:1], METAS) is None


def test_the_caption_says_what_is_shown():
    chosen = LibraryFilter(years=(2019, 2021), author="cohan", venues=("ACL",))
    assert describe(chosen, 2, 4) == ("2 of 4 documents published 2019–2021 or of unknown year, by an author "
                                      "matching 'cohan', in ACL")
    assert describe(LibraryFilter(venues=("A", "B")), 1, 4) == "1 of 4 documents in 2 venues"


def test_one_venue_is_one_filter_option_whatever_pages_spacing_or_invisible_characters_it_carries():
    acl = "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics"
    docs = [Document(id=i, filename=f"{i}.pdf") for i in ("s", "t", "u", "v")]
    metas = {
        "s": PaperMetadata("s", "SPECTER", ["Arman Cohan"], 2020, f"{acl}, pages 2270–2282"),
        "t": PaperMetadata("t", "S2ORC", ["Kyle Lo"], 2020, f"{acl}, pages 4969–4983"),
        "u": PaperMetadata("u", "Other", ["Kyle Lo"], 2020, acl.replace(" ", "  ", 1) + "\u200b"),
        "v": PaperMetadata("v", "Hydrology", ["Lu Zhang"], 2005, "Journal of Hydrology 310 (2005) 253–265"),
    }
    assert venue_options(docs, metas) == [acl, "Journal of Hydrology"]
    assert [d.id for d in filter_documents(docs, metas, LibraryFilter(venues=(acl,)))] == ["s", "t", "u"]
