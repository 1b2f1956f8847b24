"""Graph edits from the explorer, on a copy of a real workspace (tests/presentation/conftest.py): renames, type
changes and deletions that persist through new papers and rebuilds (graph and vectors) and can be undone, and
edits that are refused and change nothing."""
from __future__ import annotations

import pytest

from core.library import open_library
from core.pipeline.documents import delete_document
from core.pipeline.graph import edits
from core.pipeline.graph.build import clear_graph, entity_vector_id, relation_vector_id
from core.pipeline.graph.stage import process_graph_queue
from core.presentation.graph.graph_index import load_index
from core.schema.graph import PAPER_PREFIX, RELATED
from core.settings.workspace import Workspace
from tests import pdfs
from tests.presentation.explorer_helpers import ingest, key

GLUE_TITLE = "Benchmarks Revisited for Sentence Understanding"
GLUE_SECTIONS: list[pdfs.Section] = [
    ("Abstract", ["Published at ACL 2021. BERT obtains new state-of-the-art results on the GLUE benchmark. "
                  "We fine-tune BERT on SQuAD for question answering and report the F1 score."]),
    ("1 Results", ["SQuAD and GLUE remain the benchmarks of choice. We compare ELECTRA with BERT on the GLUE "
                   "benchmark."]),
]


def _vector_names(lib) -> dict[str, str]:
    """Entity key → name, as the entity vectors' metadata has it."""
    return {m.metadata["key"]: m.metadata["name"] for m, _ in lib.entity_vectors.fetch(lib.entity_vectors.all_ids())}


@pytest.mark.slow
def test_edits_persist_update_vectors_and_survive_new_papers_and_rebuilds(ws_copy, tmp_path):
    root, bert, roberta = ws_copy
    lib = open_library(Workspace(root))
    glue, squad, roberta_key = key("GLUE"), key("SQuAD"), key("RoBERTa")
    bert_key = key("BERT")
    assert lib.graph.get_edge(*sorted((bert_key, glue))) is not None

    edits.rename_entity(lib, glue, "GLUE benchmark suite")
    edits.retype_entity(lib, roberta_key, "Model")
    edits.delete_entity(lib, squad)
    edits.delete_relation(lib, glue, bert_key)

    def check(lib) -> None:
        assert lib.graph.get_node(glue).name == "GLUE benchmark suite"
        assert lib.graph.get_node(roberta_key).type == "model"
        assert lib.graph.get_node(squad) is None
        assert not any(squad in e.pair for e in lib.graph.all_edges())
        assert lib.graph.get_edge(*sorted((bert_key, glue))) is None
        names = _vector_names(lib)
        assert names[glue] == "GLUE benchmark suite" and squad not in names
        assert lib.entity_vectors.get_documents([entity_vector_id(glue)])[entity_vector_id(glue)].startswith(
            "GLUE benchmark suite (")
        assert not lib.relation_vectors.get_documents([relation_vector_id(*sorted((bert_key, glue)))])
        index = load_index(lib)
        assert squad not in index.nodes and glue not in index.related.get(bert_key, {})
        assert index.nodes[glue].name == "GLUE benchmark suite"

    check(lib)
    # A new paper that mentions SQuAD and states BERT — GLUE again: the edits still hold.
    third = pdfs.make_paper_pdf(tmp_path / "glue.pdf", title=GLUE_TITLE, sections=GLUE_SECTIONS, pages=1,
                                with_table=False, with_figure=False, authors="Ada Lovelace")
    (third_id,) = ingest(lib, third)
    check(lib)
    assert third_id in lib.graph.get_node(glue).doc_ids  # the renamed entity still grows with new papers
    # A full rebuild from the stored extractions applies them too.
    clear_graph(lib, keep_extractions=True)
    process_graph_queue(lib)
    check(lib)
    # Deleting a paper and adding it back changes nothing either.
    delete_document(lib, third_id)
    ingest(lib, third)
    check(lib)

    # The edits are listed and each can be undone: the papers' version comes back.
    made = {r.override.field + ":" + r.override.a: r for r in edits.list_edits(lib)}
    assert len(made) == 4
    assert edits.undo_edit(lib, made["deleted:" + squad].override)
    assert lib.graph.get_node(squad) is not None and squad in _vector_names(lib)
    assert any(e.relation == RELATED for e in lib.graph.node_edges(squad))
    edits.undo_edit(lib, made["name:" + glue].override)
    assert lib.graph.get_node(glue).name == "GLUE"
    edits.undo_edit(lib, made[f"deleted:{min(bert_key, glue)}"].override)
    assert lib.graph.get_edge(*sorted((bert_key, glue))) is not None
    assert relation_vector_id(*sorted((bert_key, glue))) in lib.relation_vectors.get_documents(
        [relation_vector_id(*sorted((bert_key, glue)))])


def test_bad_edits_are_refused_and_change_nothing(ws_copy):
    root, bert, _ = ws_copy
    lib = open_library(Workspace(root))
    before = (sorted(n.key for n in lib.graph.all_nodes()), lib.graph.counts())
    bad = [lambda: edits.rename_entity(lib, key("GLUE"), "   "),
           lambda: edits.rename_entity(lib, key("GLUE"), "RoBERTa"),  # another entity's name: merge instead
           lambda: edits.rename_entity(lib, key("GLUE"), "!!!"),
           lambda: edits.rename_entity(lib, PAPER_PREFIX + bert, "A title"),
           lambda: edits.retype_entity(lib, key("GLUE"), "paper"),
           lambda: edits.retype_entity(lib, "no such entity", "method"),
           lambda: edits.delete_entity(lib, PAPER_PREFIX + bert),
           lambda: edits.delete_relation(lib, key("GLUE"), PAPER_PREFIX + bert),
           lambda: edits.delete_relation(lib, key("GLUE"), "no such entity")]
    for edit in bad:
        with pytest.raises(edits.EditError):
            edit()
    assert (sorted(n.key for n in lib.graph.all_nodes()), lib.graph.counts()) == before
    assert edits.list_edits(lib) == [] and not lib.graph_sources.dirty()[0]


@pytest.mark.slow
def test_a_renamed_entity_collects_later_mentions_of_its_new_name(ws_copy, tmp_path):
    root, _, _ = ws_copy
    lib = open_library(Workspace(root))
    target = key("XLNet")  # only in the RoBERTa paper; ELECTRA is in no paper yet
    assert lib.graph.get_node(target) is not None and lib.graph.get_node(key("ELECTRA")) is None
    edits.rename_entity(lib, target, "ELECTRA")
    third = pdfs.make_paper_pdf(tmp_path / "glue.pdf", title=GLUE_TITLE, sections=GLUE_SECTIONS, pages=1,
                                with_table=False, with_figure=False, authors="Ada Lovelace")
    (third_id,) = ingest(lib, third)
    assert third_id in lib.graph.get_node(target).doc_ids and lib.graph.get_node(key("ELECTRA")) is None
    assert lib.graph.get_node(target).name == "ELECTRA"
