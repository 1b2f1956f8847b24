"""Reference lists as data, LLM-free: entries split and parsed (numbered, author-year, ACS, IEEE), in-text citation
markers linked to their entries with their sentences, entries resolved to library papers, hostile text kept as
text and bounded. Content lists are built as parsing writes them (a References heading, one item per entry or
per piece of one)."""
from __future__ import annotations

import time

from core.pipeline.references.entries import parse_entry, parse_references
from core.pipeline.references.markers import link_markers
from core.pipeline.references.resolve import LibraryPaper, resolve
from core.schema.records import ContentItem
from core.schema.references import MAX_ENTRY_CHARS, MAX_SENTENCE_CHARS


def content(body: list[str], refs: list[str], ref_page: int = 1) -> list[ContentItem]:
    items = [ContentItem(type="text", page_idx=0, text="A Paper About Lattices", text_level=1),
             ContentItem(type="text", page_idx=0, text="Abstract"),
             ContentItem(type="text", page_idx=0, text="We study lattices of many kinds in this short paper here."),
             ContentItem(type="text", page_idx=0, text="1 Introduction", text_level=2)]
    items += [ContentItem(type="text", page_idx=0, text=t, bbox=[50, 100 + 60 * n, 480, 150 + 60 * n])
              for n, t in enumerate(body)]
    items.append(ContentItem(type="text", page_idx=ref_page, text="References", text_level=2))
    items += [ContentItem(type="text", page_idx=ref_page, text=t, bbox=[50, 80 + 40 * n, 480, 115 + 40 * n])
              for n, t in enumerate(refs)]
    for i, item in enumerate(items):
        item.index = i
    return items


NUMBERED = [
    "[1] Griffin Adams and Noémie Elhadad. 2021. What’s in a Summary? Laying the Groundwork for Advances in "
    "Hospital-Course Summarization. In Proceedings of NAACL. https://doi.org/10.18653/v1/2021.naacl-main.382",
    "[2] Alan Baddeley. 1992. Working memory. Science 255, 5044 (1992), 556–559. [3] Iz Beltagy, Matthew E. "
    "Peters, and Arman Cohan. 2020. Longformer: The long-document transformer. arXiv:2004.05150.",
    "[4] Tom Brown, Benjamin Mann, and Nick Ryder. 2020. Language Models are Few-Shot Learners.",
    "In Advances in Neural Information Processing Systems, Vol. 33. 1877–1901.",
    "[5] A. Vaswani, N. Shazeer, and N. Parmar, “Attention is all you need,” in Advances in Neural Information "
    "Processing Systems, 2017, pp. 5998–6008.",
    "[6] Choudhary, K.; DeCost, B.; Chen, C. Recent advances and applications of deep learning methods in "
    "materials science. npj Computational Materials 2022, 8, 59.",
    "[7] Goh, G. B.; Hodas, N. O. Deep learning for computational chemistry. J. Comput. Chem. 2017, 38, 1291.",
]

AUTHOR_YEAR = [
    "Sanjeev Arora, Yingyu Liang, and Tengyu Ma. 2017.",
    "A simple but tough-to-beat baseline for sentence embeddings. In ICLR.",
    "Waleed Ammar, Dirk Groeneveld, and Oren Etzioni. 2018. [Construction of the literature graph in semantic "
    "scholar](https://doi.org/10.18653/v1/N18-3011). In Proceedings of NAACL, pages 84–91.",
    "Kyle Lo, Lucy Lu Wang, and Daniel Weld. 2020a. S2ORC: The semantic scholar open research corpus. In ACL.",
    "Kyle Lo, Lucy Lu Wang, and Daniel Weld. 2020b. Another corpus of papers for science. arXiv preprint "
    "arXiv:2001.00002.",
    "Madeleine van Zuylen and Oren Etzioni. 2019. Reading papers with lattices. In EMNLP.",
]


def test_numbered_entries_are_split_at_their_labels_and_parsed():
    refs = parse_references("d1", content([], NUMBERED))
    assert [r.label for r in refs] == ["1", "2", "3", "4", "5", "6", "7"]  # [2] and [3] shared one item
    by = {r.label: r for r in refs}
    assert by["1"].title.startswith("What’s in a Summary? Laying the Groundwork")
    assert by["1"].doi == "10.18653/v1/2021.naacl-main.382" and by["1"].authors == ["Adams", "Elhadad"]
    assert (by["2"].title, by["2"].year) == ("Working memory", 1992)
    assert by["3"].arxiv == "2004.05150" and by["3"].authors == ["Beltagy", "Peters", "Cohan"]
    assert by["4"].venue.startswith("Advances in Neural"), "a piece without a label continues the entry"
    assert (by["5"].title, by["5"].year, by["5"].authors) == ("Attention is all you need", 2017,
                                                              ["Vaswani", "Shazeer", "Parmar"])
    assert by["6"].authors == ["Choudhary", "DeCost", "Chen"] and by["6"].year == 2022
    assert by["6"].title.startswith("Recent advances and applications of deep learning")
    assert (by["7"].title, by["7"].year, by["7"].authors) == ("Deep learning for computational chemistry", 2017,
                                                              ["Goh", "Hodas"])
    assert by["1"].page == 1 and by["1"].bbox == [50, 80, 480, 115]


def test_author_year_entries_join_pieces_a_break_cut_and_keep_year_suffixes():
    refs = parse_references("d1", content([], AUTHOR_YEAR))
    assert len(refs) == 5 and all(r.label == "" for r in refs)
    arora, ammar, lo_a, lo_b, zuylen = refs
    assert arora.title == "A simple but tough-to-beat baseline for sentence embeddings" and arora.year == 2017
    assert ammar.title == "Construction of the literature graph in semantic scholar"  # the link unwrapped
    assert ammar.doi == "10.18653/v1/n18-3011" and "](" not in ammar.text
    assert (lo_a.year, lo_a.year_suffix, lo_b.year_suffix, lo_b.arxiv) == (2020, "a", "b", "2001.00002")
    assert zuylen.authors == ["van Zuylen", "Etzioni"]


def test_markers_link_numbered_ranges_superscripts_and_author_year_forms():
    body = ["Summaries help readers [1]. Long documents need sparse attention [2, 3–5] as shown before.",
            "Chemists use deep models.<sup>6,7</sup> Nothing cites entry [99] here."]
    items = content(body, NUMBERED)
    refs = parse_references("d1", items)
    links, seen, linked = link_markers(items, refs)
    got = {(x.marker, refs[x.ref_idx].label) for x in links}
    assert {("[1]", "1"), ("[2, 3–5]", "2"), ("[2, 3–5]", "3"), ("[2, 3–5]", "4"), ("[2, 3–5]", "5"),
            ("[6,7]", "6"), ("[6,7]", "7")} <= got
    assert (seen, linked) == (8, 7), "[99] is a marker without an entry"
    link = next(x for x in links if x.marker == "[1]")
    assert link.sentence == "Summaries help readers [1]." and link.page == 0 and link.bbox == [50, 100, 480, 150]

    body = ["Sentence embeddings are strong baselines (Arora et al., 2017; Lo et al., 2020b). Ammar et al. (2018) "
            "built a literature graph, e.g. from S2ORC (Lo et al. 2020a), as van Zuylen and Etzioni (2019) did."]
    items = content(body, AUTHOR_YEAR)
    refs = parse_references("d1", items)
    links, seen, linked = link_markers(items, refs)
    cited = {(x.marker, refs[x.ref_idx].first_author, refs[x.ref_idx].year_suffix) for x in links}
    assert ("(Arora et al., 2017; Lo et al., 2020b)", "Arora", "") in cited
    assert ("(Arora et al., 2017; Lo et al., 2020b)", "Lo", "b") in cited
    assert ("Ammar et al. (2018)", "Ammar", "") in cited and ("(Lo et al. 2020a)", "Lo", "a") in cited
    assert any(first == "van Zuylen" for _, first, _ in cited)
    assert all(x.sentence.startswith(("Sentence embeddings", "Ammar et al. (2018)")) for x in links)


def test_entries_resolve_by_doi_arxiv_or_title_and_year_never_to_their_own_paper():
    papers = [LibraryPaper("lit", "constructionoftheliteraturegraphinsemanticscholar", 2018, "", ""),
              LibraryPaper("long", "somethingelseentirelydifferenthere", 2020, "", "2004.05150"),
              LibraryPaper("wm", "workingmemory", 1992, "", ""),  # too short a title to trust alone
              LibraryPaper("s2", "s2orcthesemanticscholaropenresearchcorpus", 2016, "", "")]
    refs = {r.first_author + r.year_suffix: r for r in parse_references("d1", content([], AUTHOR_YEAR))}
    refs.update({r.label: r for r in parse_references("d1", content([], NUMBERED))})
    assert resolve(refs["Ammar"], papers) == "lit"  # title + year
    assert resolve(refs["3"], papers) == "long"  # arXiv id, whatever the title
    assert resolve(refs["2"], papers) == "", "a short title alone is not enough"
    assert resolve(refs["Loa"], papers) == "", "the years disagree by more than one"
    assert resolve(refs["Ammar"], [LibraryPaper("d1", papers[0].title_key, 2018, "", "")]) == ""
    doi = LibraryPaper("n18", "", None, "10.18653/v1/n18-3011", "")
    assert resolve(refs["Ammar"], [doi]) == "n18"


def test_hostile_reference_text_stays_text_and_bounded():
    script = "<script>alert('x')</script> Mallory Evil. 2020. <img src=x onerror=alert(1)> Owning parsers. In XSS."
    huge = "Zed Long. 2021. " + "word " * 10_000  # a 50k-character "entry"
    body = ["A " + "very " * 12_000 + "long sentence (Long, 2021) [1]."]
    items = content(body, [script, huge])
    t = time.process_time()
    refs = parse_references("d1", items)
    links, _, _ = link_markers(items, refs)
    assert time.process_time() - t < 20, "no quadratic regex on a 50k-character entry"
    assert refs[0].text.startswith("<script>alert") and "Mallory" in refs[0].authors[0] + refs[0].text
    assert len(refs[1].text) <= MAX_ENTRY_CHARS and len(refs[1].title) <= 500
    assert links and all(len(x.sentence) <= MAX_SENTENCE_CHARS for x in links)
    assert parse_entry("")["title"] == "" and parse_references("d1", []) == []


def test_entries_keep_their_authors_whole_for_the_export_and_family_names_for_the_markers():
    from core.presentation.references import references_bibtex

    refs = parse_references("d1", content([], NUMBERED))
    by = {r.label: r for r in refs}
    assert by["3"].names == ["Iz Beltagy", "Matthew E. Peters", "Arman Cohan"]  # ACL: as printed
    assert by["5"].names == ["A. Vaswani", "N. Shazeer", "N. Parmar"]  # IEEE
    assert by["7"].names == ["G. B. Goh", "N. O. Hodas"]  # ACS: "Goh, G. B.; Hodas, N. O." (its last dot kept)
    apa = parse_entry("Ammar, W., Peters, M. E., & Power, R. (2018). Construction of the literature graph in "
                      "semantic scholar. In Proceedings of NAACL.")
    assert (apa["authors"], apa["names"]) == (["Ammar", "Peters", "Power"], ["W. Ammar", "M. E. Peters", "R. Power"])
    zuylen = parse_references("d1", content([], AUTHOR_YEAR))[-1]
    assert (zuylen.authors, zuylen.names) == (["van Zuylen", "Etzioni"], ["Madeleine van Zuylen", "Oren Etzioni"])
    bib = references_bibtex([by["3"], zuylen])
    assert "author = {Iz Beltagy and Matthew E. Peters and Arman Cohan}" in bib
    assert "author = {Madeleine van Zuylen and Oren Etzioni}" in bib and "beltagy2020longformer" in bib
    by["3"].names = []  # stored before whole names were kept: family names, as before
    assert "author = {Beltagy and Peters and Cohan}" in references_bibtex([by["3"]])
