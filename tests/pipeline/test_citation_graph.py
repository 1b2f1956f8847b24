"""The library's citation graph end to end, on real ingests (builtin parser, LLM-free graph): references are read at
ingest, an entry resolves to a paper added after the citing one, CITES edges carry the citing sentence, the CLI
shows both, and a delete removes the edges both ways and leaves nothing of the paper behind."""
from __future__ import annotations

from collections import Counter

import bibtexparser
import pytest

from core.cli import main as cli_main
from core.library import open_library
from core.pipeline.documents import add_pdf, delete_document
from core.pipeline.gc import footprint
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_queue
from core.presentation.graph.explorer import ViewFilters, build_view
from core.presentation.graph.graph_index import build_index
from core.presentation.graph.render import render_html
from core.schema.graph import PAPER_PREFIX
from core.schema.references import CITES
from core.settings.workspace import WORKSPACE_ENV
from tests.graph_papers import fast_workspace
from tests.references_papers import CITED_BACK, CITING_SENTENCE, heliotrope_pdf, marigold_pdf

pytestmark = pytest.mark.slow  # two ingests and their graphs: ~15 s


def ingest(lib, pdf) -> str:
    doc_id = add_pdf(lib, pdf.name, pdf.read_bytes()).doc_id
    (doc,) = process_queue(lib)
    assert doc.status == "ready", doc.message
    process_graph_queue(lib)
    return doc_id


def cites_edges(lib) -> dict[tuple[str, str], str]:
    return {(e.source, e.target): e.description for e in lib.graph.all_edges() if e.relation == CITES}


def test_a_paper_added_later_resolves_older_references_and_deleting_it_removes_every_trace(tmp_path, capsys,
                                                                                           monkeypatch):
    lib = open_library(fast_workspace(tmp_path / "ws"))
    monkeypatch.setenv(WORKSPACE_ENV, str(tmp_path / "ws"))
    marigold = ingest(lib, marigold_pdf(tmp_path / "pdfs"))
    refs = lib.references.references(marigold)
    assert [r.first_author for r in refs] == ["Lovelace", "Turing"] and not any(r.cited_doc_id for r in refs)
    assert {x.sentence for x in lib.references.links(marigold)} >= {CITING_SENTENCE}
    assert cites_edges(lib) == {}, "the cited paper is not in the library yet"

    heliotrope = ingest(lib, heliotrope_pdf(tmp_path / "pdfs"))
    assert lib.references.references(marigold)[0].cited_doc_id == heliotrope, "the older entry found it"
    assert [r.cited_doc_id for r in lib.references.references(heliotrope)] == [marigold, "", ""]
    edges = cites_edges(lib)
    assert set(edges) == {(PAPER_PREFIX + marigold, PAPER_PREFIX + heliotrope),
                          (PAPER_PREFIX + heliotrope, PAPER_PREFIX + marigold)}
    assert CITING_SENTENCE in edges[(PAPER_PREFIX + marigold, PAPER_PREFIX + heliotrope)]
    assert "Marigold lattices [1]" in edges[(PAPER_PREFIX + heliotrope, PAPER_PREFIX + marigold)]

    # The Graph page draws them between the paper nodes, as arrows of their own colour.
    view = build_view(build_index(lib), ViewFilters(include_papers=True))
    assert {(e.source, e.target) for e in view.edges if e.relation == CITES} == set(edges)
    assert '"arrows": "to"' in render_html(view) and "#c0392b" in render_html(view)

    assert cli_main(["refs", "show", heliotrope[:10]]) == 0
    out = capsys.readouterr().out
    assert f"IN LIBRARY {marigold[:12]}" in out and "Okapi sampling for lattices" in out
    assert "not in your library" in out and "3 references, 1 in the library" in out
    # The references leave with their authors whole, as the entries print them, not their family names alone.
    assert cli_main(["refs", "show", marigold[:10], "--bibtex"]) == 0
    exported = bibtexparser.parse_string(capsys.readouterr().out)
    assert [e.fields_dict["author"].value for e in exported.entries] == [
        "Ada Lovelace and Alan Turing and Grace Hopper", "Alan Turing and Grace Hopper"]
    assert cli_main(["refs", "graph"]) == 0
    out = capsys.readouterr().out
    assert "CITES" in out and CITING_SENTENCE in out and CITED_BACK in out
    assert "2 citations between papers of the library" in out

    # A backfill gives the same graph (idempotent), and the collector finds nothing to remove.
    assert cli_main(["refs", "refresh"]) == 0
    assert "2 papers refreshed" in capsys.readouterr().out and cites_edges(lib) == edges

    assert footprint(lib, [heliotrope])["references"] > 0
    delete_document(lib, heliotrope)
    assert +footprint(lib, [heliotrope]) == Counter()
    assert cites_edges(lib) == {} and lib.references.cited_by(heliotrope) == []
    assert not any(r.cited_doc_id for r in lib.references.references(marigold)), "not in your library again"
    assert len(lib.references.references(marigold)) == 2

    delete_document(lib, marigold)
    assert +footprint(lib, [marigold]) == Counter() and lib.references.doc_counts() == {}
