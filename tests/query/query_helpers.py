"""What the query tests share: the question with its one answer chunk, and the three papers they ask about."""
from __future__ import annotations

from core.pipeline.documents import add_document, add_pdf
from core.pipeline.graph.stage import process_graph_queue
from core.pipeline.ingest import process_queue
from core.schema.records import DocStatus
from tests import graph_papers

QUESTION = "Which dataset is BERT pre-trained on?"
# Its answer sits in one chunk, BERT's introduction ("BERT is pre-trained with a masked language model objective on
# the BooksCorpus dataset."). The graph modes reach chunks through entities and relations, so their question names
# the entity: in the LLM-free graph BooksCorpus is linked to "language model objective", not to BERT.
GRAPH_QUESTION = "Which model is pre-trained on BooksCorpus?"
QUESTION_OF = {"naive": QUESTION, "mix": QUESTION, "local": GRAPH_QUESTION, "global": GRAPH_QUESTION,
               "hybrid": GRAPH_QUESTION}
TOP = 3  # chunks kept: far fewer than the three papers have, so a mode must rank rather than return everything


def ingest(lib, folder):
    """BERT and RoBERTa, and ELECTRA as a distractor: a paper that names BERT and pre-training datasets all
    through but holds none of the answers, so that a mode has to rank the answer's chunk above near misses."""
    for pdf in (graph_papers.make_bert_pdf(folder), graph_papers.make_roberta_pdf(folder),
                graph_papers.make_electra_pdf(folder)):
        add_pdf(lib, pdf.name, pdf.read_bytes())
    return {d.filename: d.id for d in index_and_graph(lib)}


def add_texts(lib, docs: list[tuple[str, str]]) -> None:
    """(title, paragraph) pairs as one-paragraph text documents, as bench/query.py indexes HotpotQA."""
    for title, text in docs:
        add_document(lib, f"{title}.txt", f"{title}\n\n{text}\n".encode())


def index_and_graph(lib) -> list:
    """Ingest the queue and build the graph, every paper ready and graphed; the documents ingested."""
    docs = process_queue(lib)
    assert all(d.status == DocStatus.READY for d in docs), [d.message for d in docs]
    graphed = process_graph_queue(lib)
    assert all(d.graph_status == "done" for d in graphed), [d.graph_message for d in graphed]
    return docs
