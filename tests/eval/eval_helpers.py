"""What the evaluation-run tests (tests/eval/conftest.py, test_eval_runs.py, test_eval_reports.py,
test_eval_cli.py) share: the five modes, the questions asked of the eval workspace, and the chunk texts their
reference passages are checked against."""
from __future__ import annotations

import re

from core.schema.eval import EvalQuestion

FIVE_MODES = ["naive", "local", "global", "hybrid", "mix"]
NO_RAGAS = dict(ragas=False, ragas_judge=False)


def sentence_with(lib, word: str) -> str:
    """The sentence of the workspace's chunks that holds `word`, exactly as the parser wrote it (line breaks
    and all): a reference passage a user could have copied from the paper."""
    for doc in lib.documents.list():
        for chunk in lib.chunks.by_doc(doc.id):
            for sentence in re.split(r"(?<=[.!?])\s+", chunk.text):
                if word in sentence:
                    return sentence
    raise AssertionError(f"no chunk holds {word!r}")


def chunk_texts(lib) -> dict[str, str]:
    return {c.id: c.text for d in lib.documents.list() for c in lib.chunks.by_doc(d.id)}


NOWHERE = "The model was trained on 512 TPU chips for four days in a basement."


def make_questions(lib) -> list[EvalQuestion]:
    return [
        # The passage as a reader copies it from the PDF (one line), while the chunk breaks it in two
        # paragraphs ("BERT is\n\npre-trained"): matching must see through that.
        EvalQuestion("books", "Which dataset is BERT pre-trained on?", ["the BooksCorpus dataset", "BooksCorpus"],
                     ["BERT is pre-trained with a masked language model objective on the BooksCorpus dataset."]),
        EvalQuestion("ccnews", "Which dataset does RoBERTa train on?", ["CC-News"],
                     [sentence_with(lib, "CC-News")]),
        # Two passages from two papers: complete@K needs both.
        EvalQuestion("multinli", "What accuracy do BERT and RoBERTa reach on MultiNLI?", ["86.7 and 90.2"],
                     [sentence_with(lib, "86.7"), sentence_with(lib, "90.2")]),
        EvalQuestion("nowhere", "How many TPU chips trained the model?", ["512"], [NOWHERE]),
        EvalQuestion("noref", "What does dynamic masking replace?", [], []),
    ]
