"""What the Evaluate page explains: an example question set to download (JSONL and CSV, read by the same parser as an
upload, core.eval.questions), what each of its fields means, and what each metric measures. Data, no Streamlit."""
from __future__ import annotations

import csv
import io

from core.eval.questions import questions_to_jsonl, questions_to_table
from core.schema.eval import EvalQuestion

# Three kinds of row: a short factual answer with its evidence passage, several accepted answers and two passages
# (a multi-hop question), and a question without a reference answer (only the reference-free metrics apply).
EXAMPLE_QUESTIONS = [
    EvalQuestion(id="q1", question="How many papers does the S2ORC corpus contain?", answers=["81.1M", "81.1 million"],
                 evidence=["We introduce S2ORC, a large corpus of 81.1M English-language academic papers spanning "
                           "many academic disciplines."]),
    EvalQuestion(id="q2", question="Which pretrained model does SPECTER start from, and what signal does it learn "
                                   "from?",
                 answers=["SciBERT, fine-tuned on the citation graph", "SciBERT and citations"],
                 evidence=["Specifically, we use SciBERT which is an adaptation of the original BERT architecture "
                           "to the scientific domain.",
                           "We propose SPECTER, a new method to generate document-level embedding of scientific "
                           "documents based on pretraining a Transformer language model on a powerful signal of "
                           "document-level relatedness: the citation graph."]),
    EvalQuestion(id="q3", question="What are the limitations of citation-based document embeddings?", answers=[]),
]

# (column, needed?, what it holds): the order of the example files' columns.
FIELDS = [
    ("id", "optional", "A name for the question, unique in the set (q1, q2 …); numbered for you when left out."),
    ("question", "required", "The question, as a researcher would ask it on the Ask page."),
    ("answers", "optional", "One or more reference answers; any of them counts as right. Short answers (a number, "
                            "a name, a phrase) suit EM and F1. JSONL: a list of strings; CSV: several answers "
                            "separated by ' | ' (or a JSON list in the cell). Without one, only the reference-free "
                            "metrics are computed for the question."),
    ("evidence", "optional", "Passages of the papers that hold the answer, copied as printed (a sentence is "
                             "enough): the retrieval metrics look for them among the passages a mode retrieved. Same "
                             "list format as answers."),
    ("doc_id", "optional", "The paper the question is about (its id on the Document page, or the first 12 "
                           "characters of it); several separated by ' | '. Only recorded with the results."),
]


def example_jsonl() -> str:
    return questions_to_jsonl(EXAMPLE_QUESTIONS)


def example_csv() -> str:
    """The same questions as CSV: list cells joined with ' | ', as the upload reads them."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[name for name, _, _ in FIELDS], lineterminator="\n")
    writer.writeheader()
    writer.writerows(questions_to_table(EXAMPLE_QUESTIONS))
    return out.getvalue()


# One line per metric (the summary table's column help), and a longer explanation for the metrics' glossary.
METRIC_HELP = {
    "contains_reference": "the reference answer inside the answer or its short answer (normalised, whole words): "
                          "the fair accuracy of long and extractive answers",
    "em": "exact match with a reference answer (SQuAD normalisation), of the short answer when there is one",
    "f1": "token F1 against the best reference answer, of the short answer when there is one",
    "mrr": "1 / rank of the first passage holding reference evidence",
    "evidence_in_context": "share of reference passages inside the context the mode assembled (token budget)",
    "faithfulness": "RAGAS: share of the answer's claims supported by the context (LLM judge)",
    "answer_relevancy": "RAGAS: how well the answer addresses the question (LLM judge + embeddings)",
    "context_precision": "RAGAS: are the useful passages ranked first (LLM judge)",
    "context_recall": "RAGAS: share of the reference answer supported by the context (LLM judge)",
    "non_llm_context_precision": "RAGAS non-LLM: are the passages holding the evidence ranked first (string "
                                 "similarity ≥ 0.5 to those passages)",
    "non_llm_context_recall": "RAGAS non-LLM: share of evidence sentences whose passage is in the context",
    "string_similarity": "RAGAS non-LLM: string similarity of answer and reference",
    "bleu": "RAGAS non-LLM: BLEU of answer against reference",
    "rouge": "RAGAS non-LLM: ROUGE of answer against reference",
    "seconds": "seconds per question (retrieval + answer)",
}

METRIC_EXPLAINED = {
    "em": "Exact match: 1 when the answer (its short answer when it has one), lower-cased and without punctuation "
          "or articles, equals one of the reference answers, else 0. Strict: a right answer written as a sentence "
          "scores 0. Needs reference answers.",
    "f1": "Token F1: the words the answer shares with the closest reference answer, as the harmonic mean of "
          "precision (shared / answer words) and recall (shared / reference words), 0–1. Partial credit where EM "
          "gives none. Needs reference answers.",
    "contains_reference": "1 when a reference answer appears, as whole words, inside the answer or its short "
                          "answer: the fair accuracy of paragraph and extractive answers, which EM and F1 punish "
                          "for their length.",
    "recall": "Recall@K: the share of the question's evidence passages found among the first K passages the mode "
              "retrieved, 0–1. Needs evidence.",
    "complete": "complete@K: 1 when every evidence passage is among the first K retrieved, else 0 — what a "
                "multi-hop question needs, where one passage of two is not enough. Needs evidence.",
    "mrr": "MRR (mean reciprocal rank): 1 / the rank of the first retrieved passage holding evidence (1 at the "
           "top, 0.5 second …, 0 if none), averaged over the questions. Needs evidence.",
    "ndcg": "NDCG@K: how high the evidence passages rank in the first K, each discounted by the log of its rank "
            "and divided by the best possible order, 0–1. Needs evidence.",
    "evidence_in_context": "The share of evidence passages inside the context the mode actually handed to the "
                           "reader (after its token budget): evidence retrieved but cut from the context cannot "
                           "be cited. Needs evidence.",
    "faithfulness": "RAGAS, judged by the LLM: the share of the answer's claims that the context supports. Low "
                    "means the answer says things the passages do not.",
    "answer_relevancy": "RAGAS, judged by the LLM with the embedding model: how directly the answer addresses "
                        "the question (questions generated back from the answer, compared with the real one).",
    "context_precision": "RAGAS, judged by the LLM: whether the passages useful for the reference answer are "
                         "ranked above the others.",
    "context_recall": "RAGAS, judged by the LLM: the share of the reference answer's statements the context "
                      "supports.",
    "non_llm_context_precision": "RAGAS without an LLM: context precision with usefulness decided by string "
                                 "similarity (≥ 0.5) to the evidence passages.",
    "non_llm_context_recall": "RAGAS without an LLM: the share of evidence sentences whose passage the context "
                              "holds.",
    "string_similarity": "RAGAS without an LLM: the string similarity of answer and reference (normalised edit "
                         "distance), 0–1.",
    "bleu": "RAGAS without an LLM: BLEU-4, the answer's 1- to 4-word sequences found in the reference, 0–1.",
    "rouge": "RAGAS without an LLM: ROUGE-L F-measure, from the longest common word sequence of answer and "
             "reference, 0–1.",
    "seconds": "Seconds per question: retrieval and answer, as the researcher waits for them.",
}


def _family(name: str) -> tuple[str, str]:
    family, _, k = name.partition("@")
    return family, k


def metric_help(name: str) -> str:
    """The one-line help of a metric column ("recall@10" → "share of reference passages in the top 10")."""
    family, k = _family(name)
    at_k = {"recall": f"share of reference passages in the top {k}",
            "complete": f"1 when every reference passage is in the top {k} (multi-hop)",
            "ndcg": f"NDCG of the reference passages in the top {k}"}
    return METRIC_HELP.get(family) or (at_k.get(family, "") if k else "")


def metric_glossary(names: list[str]) -> list[tuple[str, str]]:
    """(metric, explanation) for the metrics shown, in their order, each family once ("recall@5" and "recall@10"
    share one line, named "recall@K"); a metric without an explanation keeps its one-line help."""
    out, seen = [], set()
    for name in names:
        family, k = _family(name)
        if family in seen:
            continue
        seen.add(family)
        text = METRIC_EXPLAINED.get(family) or metric_help(name)
        if text:
            out.append((f"{family}@K" if k else family, text))
    return out
