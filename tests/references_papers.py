"""Two generated papers that cite each other, for the citation-graph suites: the marigold paper (author-year
references) cites the heliotrope paper, whose title matches its entry; the heliotrope paper (numbered references)
cites the marigold paper back, one paper that is not in the library and a hostile entry (markup, a script link)."""
from __future__ import annotations

from pathlib import Path

from tests import pdfs

MARIGOLD_TITLE = "Marigold Lattices Revisited for Sparse Larvae Graphs"
HELIOTROPE_TITLE = "Heliotrope Solvers for Sparse Zebrafish Migration Lattices"
CITING_SENTENCE = "Heliotrope solvers were introduced by Lovelace et al. (2021) for the sparse lattices we revisit."
CITED_BACK = "Marigold lattices [1] stall on dense graphs, and okapi sampling [2] does not help."
HOSTILE_ENTRY = ("[3] Mallory Evil. 2020. <script>alert('refs')</script> Owning the parser. "
                 "In [XSS](javascript:alert(1)).")

MARIGOLD_SECTIONS: list[pdfs.Section] = [
    ("Abstract", ["Published in the Proceedings of the Imaginary Workshop on Larvae 2022. We revisit marigold "
                  "lattices for the sparse migration graphs of zebrafish larvae."]),
    ("1 Introduction", [CITING_SENTENCE + " Marigold sampling stalls on dense graphs (Turing and Hopper, 2019)."]),
    pdfs.references_section([
        "Ada Lovelace, Alan Turing, and Grace Hopper. 2021. Heliotrope solvers for sparse zebrafish migration "
        "lattices. In Proceedings of the Imaginary Conference on Lattices.",
        "Alan Turing and Grace Hopper. 2019. Marigold sampling of larvae. Journal of Larvae, 4:1–9.",
    ]),
]

HELIOTROPE_SECTIONS: list[pdfs.Section] = [
    ("Abstract", ["Published in the Proceedings of the Imaginary Conference on Lattices 2021. We present the "
                  "heliotrope solver, which converges after seventeen iterations on every migration graph."]),
    ("1 Introduction", [CITED_BACK]),
    pdfs.references_section([
        "[1] Charles Babbage. 2022. Marigold lattices revisited for sparse larvae graphs. In Proceedings of the "
        "Imaginary Workshop on Larvae.",
        "[2] Okapi Team. 2018. Okapi sampling for lattices. Journal of Imaginary Machines, 3(2):10–20.",
        HOSTILE_ENTRY,
    ]),
]


def marigold_pdf(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return pdfs.make_paper_pdf(folder / "marigold.pdf", title=MARIGOLD_TITLE, sections=MARIGOLD_SECTIONS,
                               authors="Charles Babbage, Analytical Society", pages=1, with_table=False,
                               with_figure=False)


def heliotrope_pdf(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return pdfs.make_paper_pdf(folder / "heliotrope.pdf", title=HELIOTROPE_TITLE, sections=HELIOTROPE_SECTIONS,
                               authors="Ada Lovelace, Alan Turing and Grace Hopper, Institute of Imaginary Studies",
                               pages=1, with_table=False, with_figure=False)
