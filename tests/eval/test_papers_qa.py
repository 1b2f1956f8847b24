"""bench/papers_qa.jsonl, the question set over the ten shared papers: its shape (offline) and, with the corpus
beside the repository, that every answer and evidence passage is the papers' own text."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from core.eval.metrics import normalize_passage
from core.eval.questions import parse_question_set
from tests.paths import CORPUS, REPO

SET = REPO / "bench" / "papers_qa.jsonl"
TYPES = {"number", "name", "dataset", "definition", "table", "year", "unanswerable"}


def rows() -> list[dict]:
    return [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_set_parses_as_an_evaluate_page_question_set():
    questions = parse_question_set(SET.read_bytes(), SET.name)
    assert [q.id for q in questions] == [r["id"] for r in rows()]
    assert len({q.id for q in questions}) == len(questions)


def test_the_set_has_its_answerable_unanswerable_and_held_out_questions():
    data = rows()
    answerable = [r for r in data if r["answers"]]
    unanswerable = [r for r in data if not r["answers"]]
    assert len(answerable) >= 60
    assert len(unanswerable) >= 10
    assert all(r["type"] == "unanswerable" and not r["evidence"] for r in unanswerable)
    assert all(r["type"] in TYPES - {"unanswerable"} and r["evidence"] for r in answerable)
    assert {r["split"] for r in data} == {"dev", "test"}
    assert sum(r["split"] == "test" for r in answerable) >= 15
    assert sum(r["split"] == "dev" for r in answerable) >= 45
    assert Counter(r["type"] for r in answerable)["table"] >= 5


def test_every_question_names_one_of_the_ten_papers_by_file_and_sha256():
    data = rows()
    assert all(len(r["doc_id"]) == 64 and r["paper"].endswith(".pdf") for r in data)
    by_paper = {}
    for r in data:
        assert by_paper.setdefault(r["paper"], r["doc_id"]) == r["doc_id"], r["id"]
    assert len({r["paper"] for r in data if r["answers"]}) == 10


@pytest.mark.slow
@pytest.mark.corpus
def test_answers_and_evidence_are_spans_of_their_papers():
    import pymupdf

    papers = CORPUS / "papers"
    if not (papers / "manifest.json").exists():
        pytest.skip(f"{papers} is absent")
    manifest = {m["file"]: m for m in json.loads((papers / "manifest.json").read_text())}
    texts: dict[str, str] = {}
    missing = []
    for r in rows():
        assert manifest[r["paper"]]["sha256"] == r["doc_id"], r["id"]
        if r["paper"] not in texts:
            with pymupdf.open(papers / r["paper"]) as doc:
                texts[r["paper"]] = normalize_passage("\n".join(page.get_text() for page in doc))
        text = texts[r["paper"]]
        missing += [(r["id"], s) for s in r["answers"] + r["evidence"] if normalize_passage(s) not in text]
    assert not missing
