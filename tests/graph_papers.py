"""Two small generated papers that share entities, and an OpenAI-protocol replay reply that extracts from any
passage deterministically: what the graph suites build their workspaces from."""
from __future__ import annotations

import json
import re
from pathlib import Path

from core.settings.config import Settings
from core.settings.workspace import Workspace
from tests import pdfs
from tests.openai_server import Reply, last_user_message

BERT_TITLE = "Pre-training Deep Bidirectional Transformers for Language Understanding"
ROBERTA_TITLE = "A Robustly Optimized Pretraining Approach Revisited"

BERT_SECTIONS: list[pdfs.Section] = [
    ("Abstract", [
        "Preprint arXiv:1810.04805, October 2018. We introduce BERT, a language representation model built on "
        "the Transformer encoder. BERT obtains new state-of-the-art results on the GLUE benchmark.",
    ]),
    ("1 Introduction", [
        "Language model pre-training has been shown to improve natural language inference on MultiNLI. "
        "BERT is pre-trained with a masked language model objective on the BooksCorpus dataset.",
    ]),
    ("2 Experiments", [
        "BERT reaches an accuracy of 86.7 on MultiNLI and improves the GLUE score by seven points. "
        "We fine-tune BERT on SQuAD for question answering and report the F1 score.",
    ]),
]

ROBERTA_SECTIONS: list[pdfs.Section] = [
    ("Abstract", [
        "Published as a conference paper at ICLR 2020. We present RoBERTa, a replication study of BERT "
        "pre-training that measures the impact of key hyperparameters and training data size.",
    ]),
    ("1 Method", [
        "RoBERTa removes the next sentence prediction objective of BERT and trains on the CC-News dataset. "
        "Dynamic masking replaces the static masking used by BERT.",
    ]),
    ("2 Results", [
        "RoBERTa matches or exceeds XLNet on the GLUE benchmark and reaches 90.2 accuracy on MultiNLI. "
        "On SQuAD RoBERTa improves the F1 score over BERT.",
    ]),
]


# A third paper that competes with the other two for their questions: it names BERT in every section, says which
# datasets other models are pre-trained on and reports GLUE and MultiNLI results, but never BooksCorpus, CC-News,
# 86.7 or 90.2. Retrieval tests ingest it so that a mode must rank the one chunk holding an answer above near
# misses, instead of returning every chunk of a small workspace.
ELECTRA_TITLE = "Pre-training Text Encoders as Discriminators Rather Than Generators"

ELECTRA_SECTIONS: list[pdfs.Section] = [
    ("Abstract", [
        "Published as a conference paper at ICLR 2020. We present ELECTRA, a pre-training task that replaces the "
        "masked language model of BERT with the detection of replaced tokens, at a quarter of the compute.",
    ]),
    ("1 Introduction", [
        "Masked language model pre-training as in BERT learns from only fifteen percent of the tokens of each "
        "example. ELECTRA learns from every input token, which makes pre-training far more sample efficient.",
    ]),
    ("2 Pre-training Data", [
        "ELECTRA is pre-trained on the OpenWebText dataset, a public replication of the WebText dataset. "
        "The larger ELECTRA models add the ClueWeb and Gigaword datasets to the pre-training data.",
    ]),
    ("3 Experiments", [
        "ELECTRA outperforms BERT on the GLUE benchmark at the same model size and reaches 88.8 accuracy on "
        "MultiNLI. On SQuAD ELECTRA improves the exact match score over XLNet.",
    ]),
    ("4 Related Work", [
        "XLNet is pre-trained on the Giga5 dataset with a permutation language model objective. GPT is "
        "pre-trained on a dataset of web pages and predicts each token from the tokens before it.",
    ]),
    ("5 Conclusion", [
        "Replaced token detection is a compute-efficient alternative to the masked language model objective of "
        "BERT, and its benefits grow as models get smaller.",
    ]),
]


def make_bert_pdf(folder: Path) -> Path:
    return pdfs.make_paper_pdf(folder / "bert.pdf", title=BERT_TITLE, sections=BERT_SECTIONS, pages=1,
                               with_table=False, with_figure=False, authors="Jacob Devlin, Google AI Language")


def make_roberta_pdf(folder: Path) -> Path:
    return pdfs.make_paper_pdf(folder / "roberta.pdf", title=ROBERTA_TITLE, sections=ROBERTA_SECTIONS, pages=1,
                               with_table=False, with_figure=False, authors="Yinhan Liu, Facebook AI")


def make_electra_pdf(folder: Path) -> Path:
    return pdfs.make_paper_pdf(folder / "electra.pdf", title=ELECTRA_TITLE, sections=ELECTRA_SECTIONS, pages=1,
                               with_table=False, with_figure=False, authors="Kevin Clark, Stanford University")


def fast_workspace(root: Path, reader: str = "", **llm) -> Workspace:
    """A workspace parsing with the builtin parser (a second per paper instead of MinerU's few) and, when
    given, an LLM: fast_workspace(root, provider="openai", base_url=..., model=...). With an LLM the reader is
    `write` unless `reader` names another: the tests of written answers predate the readers."""
    ws = Workspace(root).ensure()
    settings = Settings()
    settings.parsing.backend = "builtin"
    if reader or llm.get("provider", "none") != "none":
        settings.query.reader = reader or "write"
    for key, value in llm.items():
        setattr(settings.llm, key, value)
    ws.save_settings(settings)
    return ws


_NAME = re.compile(r"\b(?:[A-Z]{2,}[A-Za-z]*|[A-Z][a-z]+[A-Z][A-Za-z]*)\b")


def is_extraction_request(body: dict) -> bool:
    text = last_user_message(body)
    return text.startswith("Many entities") or "\nOutput:" in text


def extraction_reply(body: dict) -> Reply:
    """What a well-behaved LLM would answer, deterministically: acronyms and CamelCase names of the passage as
    entities, each linked to the next one. Gleaning requests get the completion marker (nothing missed);
    community reports a small JSON report naming the community's first entities."""
    text = last_user_message(body)
    if text.startswith("Many entities"):
        return Reply(content="<|COMPLETE|>")
    if text.rstrip().endswith("Description:"):  # a summary of descriptions past the token budget
        name = text.split('"', 2)[1] if text.count('"') >= 2 else "it"
        return Reply(content=f"Summary of {name}: what every passage says about it, in one description.")
    if "JSON report:" in text:  # a community report
        names = _NAME.findall(text.split("Entities:", 1)[-1])[:3]
        return Reply(content=json.dumps({
            "title": " and ".join(dict.fromkeys(names)) or "community", "rating": 5,
            "summary": f"This community groups {', '.join(dict.fromkeys(names))}.",
            "findings": [{"summary": "They appear together.", "explanation": "The passages mention them together."}]}))
    passage = text.split("Text:\n", 1)[-1].rsplit("\nOutput:", 1)[0]
    names = list(dict.fromkeys(_NAME.findall(passage)))
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(passage.split()))
    first = {n: next((x for x in sentences if n in x), n)[:200] for n in names}
    records = [f'("entity"<|>{n}<|>method<|>{first[n]})' for n in names]
    records += [f'("relationship"<|>{a}<|>{b}<|>{a} and {b} are discussed together.<|>co-occurrence<|>5)'
                for a, b in zip(names, names[1:])]
    return Reply(content="##\n".join(records) + "\n<|COMPLETE|>")
