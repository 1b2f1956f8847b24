"""The word lists and typing rules of the spaCy extractor (core/graph/extract/spacy/extract.py), kept apart so
the rules can be read and tuned in one place. Everything here is lower-case."""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from core.schema.graph import EntityType as T

# Words dropped from the start of a phrase: determiners, possessives, quantifiers, and the evaluative or deictic
# adjectives papers put in front of everything ("our novel approach", "such models", "the best results").
LEADING_NOISE = set("""
a an the this that these those our their its his her my your we us they it such each every any some all both
either neither no another other others several various many much more most few fewer less least certain same own
only further additional following above below aforementioned respective corresponding given particular specific
previous prior existing current proposed novel new recent original overall whole entire main first second third
last final next good better best simple simpler strong stronger significant substantial different similar
possible important typical usual individual multiple numerous relevant related extensive comprehensive detailed
promising effective efficient successful interesting useful key major minor vast huge great high higher low lower
empirical experimental extra general total average common naive thorough thus also e.g i.e e.g. i.e. absolute relative
accurate inaccurate poor comparable improved noisy competitive reasonable weak excellent impressive superior
inferior remarkable notable considerable exciting challenging difficult easy hard powerful popular available
publicly-available widely-used widely-adopted well-known famous exceptional satisfactory diverse small potential
actual real true correct incorrect wrong appropriate suitable necessary sufficient critical crucial essential
fundamental basic primary secondary initial preliminary abundant rich limited broad wide narrow high-quality
low-quality state-of-the-art sota
""".split())

# Nouns that name nothing on their own in a paper: a phrase made only of these (and noise words) is dropped, and
# "<name> <one of these>" is the name ("PaSa's performance", "the BERT paper" → PaSa, BERT).
GENERIC = set("""
paper work approach method model result table figure fig section example case way number set part time use fact
problem task data information system study analysis analyses experiment evaluation performance baseline question
answer value step process type kind form level order point effect impact aspect feature property idea issue
challenge contribution goal purpose aim focus need ability advantage limitation improvement gain increase decrease
difference comparison amount size length range setting setup configuration detail discussion conclusion
introduction abstract appendix background overview summary future author reader researcher user people person team
group community area domain application scenario context condition situation state stage phase round iteration
instance item element component unit object term output input function operation procedure version variant option
choice alternative direction trend observation finding insight evidence support help cost effort quality strength
weakness success failure mistake note remark reason cause consequence factor role respect regard basis means manner
fashion sense view perspective light line side end beginning start top bottom left right half majority lot bit one
thing something everything anything nothing rest total average sum max min percent percentage proportion fraction
count scale degree extent variety series list collection pair couple dozen hundred thousand million billion year
day month hour minute second art eq sec page chapter equation id algorithm row column cell theorem proof definition
proposition corollary assumption hypothesis claim response text word sentence document token source target
framework technique strategy mechanism architecture network dataset corpus corpora benchmark metric score measure
tool library package resource implementation code addition contrast hand account practice interest design
structure solution knowledge literature topic field task-specific model-based state-of-the-art sota people
january february march april may june july august september october november december jan feb mar apr jun jul
aug sep sept oct nov dec
""".split())

# Multi-word leftovers that are still boilerplate (compared after the last word is made singular).
STOP_PHRASES = {
    "future work", "related work", "previous work", "prior work", "experimental result", "empirical result",
    "main result", "training set", "test set", "development set", "dev set", "validation set", "training data",
    "test data", "ground truth", "large margin", "wide range", "large number", "small number", "best knowledge",
    "arxiv preprint", "preprint arxiv", "github repository", "source code", "code base", "case study",
    "ablation study", "hyper parameter", "hyper-parameter", "hyperparameter", "et al", "e.g", "i.e",
    "lower bound", "upper bound", "supplementary material", "open source", "open-source", "real world",
    "real-world", "long term", "short term", "step by step", "end to end", "end-to-end", "state of the art",
    "contact author", "corresponding author", "equal contribution", "camera ready", "page limit", "et al.",
}

# Gerunds that name a thing ("machine learning", "a learning rate", "question answering"); other -ing words
# ("using", "including") end a phrase.
GERUND_NOUNS = set("""
learning training processing reasoning modeling modelling computing mining engineering planning understanding
answering writing reading tuning fine-tuning pre-training pretraining labeling labelling tagging parsing ranking
matching sampling decoding encoding embedding prompting clustering pooling scheduling indexing filtering grounding
retraining finetuning captioning forecasting pretrained pre-trained fine-tuned fine-grained
""".split())

# Adjectives written as compounds ("Transformer-based", "task-specific"): never a name, never a phrase's end.
ADJECTIVE_SUFFIX = re.compile(r"-(based|like|style|specific|aware|driven|level|wise|free|oriented|related|"
                              r"dependent|independent|agnostic|centric|friendly|enabled|powered|guided|grained|form"
                              r"|length|scale|quality|sized|range)$", re.I)

# A figure, table or section reference: "Table 1", "Fig. 2a", "Section 3.2", "Eq. (4)", "Appendix B".
REFERENCE = re.compile(
    r"^(tab(le)?|fig(ure)?|figs|sec(tion)?|§|appendix|app|eq(uation)?|eqs|alg(orithm)?|line|page|chapter|ch|step"
    r"|row|col(umn)?|theorem|lemma|definition|def|proposition|prop|corollary|example|exp|experiment|setting"
    r"|footnote|part|stage|phase|round|layer|block|case)s?\.?\s*\(?[\dA-Za-z]{0,3}[\d.)]*[a-z]?$", re.I)

# --- entity types from the phrase's words (the last word singular)

DATASET_HEADS = {"dataset", "data set", "corpus", "corpora", "benchmark", "treebank", "collection", "suite",
                 "testbed", "database", "knowledge base", "leaderboard"}
METRIC_WORDS = {"accuracy", "precision", "recall", "f1", "f-score", "f1-score", "f-measure", "bleu", "rouge",
                "meteor", "cider", "perplexity", "auc", "auroc", "roc-auc", "mrr", "ndcg", "map@k", "wer", "cer",
                "score", "error", "error rate", "word error rate", "success rate", "hit rate", "correlation",
                "latency", "throughput", "ppl", "exact match", "em", "rouge-l", "rouge-1", "rouge-2", "bertscore",
                "recall@k", "hits@k", "top-1 accuracy", "mae", "mse", "rmse", "fid", "spice", "chrf", "kappa"}
# Heads that make a metric only with a modifier ("F1 score", "test error"; not "score" or "error").
WEAK_METRIC_HEADS = {"score", "error", "correlation", "em"}
TASK_HEADS = {"classification", "translation", "detection", "answering", "summarization", "summarisation",
              "segmentation", "retrieval", "recognition", "parsing", "generation", "tagging", "extraction",
              "labeling", "labelling", "prediction", "completion", "captioning", "linking", "resolution",
              "modeling", "modelling", "verification", "matching", "ranking", "recommendation", "clustering",
              "disambiguation", "simplification", "paraphrasing", "entailment", "search", "localization",
              "forecasting", "estimation", "understanding", "inference", "reasoning", "task", "writing"}
# Heads that make a task only with a modifier ("natural language inference", not "inference").
WEAK_TASK_HEADS = {"estimation", "understanding", "inference", "reasoning", "task", "search", "writing",
                   "resolution", "matching", "ranking", "completion", "prediction", "generation", "extraction"}
MODEL_HEADS = {"model", "network", "transformer", "encoder", "decoder", "architecture", "lstm", "rnn", "cnn",
               "llm", "classifier", "autoencoder", "gan", "bert", "gpt", "mlp", "perceptron", "agent", "lm", "vae"}
METHOD_HEADS = {"method", "approach", "algorithm", "technique", "mechanism", "strategy", "procedure", "framework",
                "objective", "loss", "learning", "training", "tuning", "pre-training", "pretraining",
                "fine-tuning", "finetuning", "optimization", "optimisation", "regularization", "normalization",
                "attention", "self-attention", "sampling", "decoding", "descent", "dropout", "distillation",
                "pruning", "quantization", "augmentation", "prompting", "pipeline", "heuristic", "scheme",
                "embedding", "encoding", "representation", "tokenization", "initialization", "regression",
                "beam search", "analysis", "decomposition", "propagation", "kernel", "policy", "ensemble",
                "baseline", "optimizer", "optimiser", "solver"}
SOFTWARE_HEADS = {"library", "toolkit", "package", "software", "tool", "api", "codebase", "platform", "engine",
                  "interface", "app", "application"}
FIELDS = {"natural language processing", "nlp", "computer vision", "machine learning", "deep learning",
          "artificial intelligence", "information retrieval", "data mining", "bioinformatics",
          "computational linguistics", "linguistics", "chemistry", "biology", "physics", "robotics",
          "human-computer interaction", "hci", "cheminformatics", "drug discovery", "statistics", "mathematics",
          "neuroscience", "medicine", "computer science", "data science", "scientometrics", "bibliometrics",
          "materials science", "speech processing", "knowledge representation"}
FIELD_HEADS = {"linguistics", "science", "informatics", "chemistry", "biology", "physics", "mathematics",
               "statistics", "robotics", "vision", "intelligence", "medicine", "neuroscience", "economics"}
# An organisation is named by one of these as its head, or before "of"/"for" (University of Washington).
INSTITUTION_WORDS = {"university", "institute", "institution", "laboratory", "lab", "labs", "inc", "inc.",
                     "corporation", "company", "foundation", "academy", "college", "school", "department", "centre",
                     "center", "council", "association", "society", "ltd", "llc", "gmbh"}
# Words the NER's ORG spans must contain to be believed (it calls GLUE and BERT organisations).
ORG_WORDS = INSTITUTION_WORDS | {"research", "ai2", "google", "microsoft", "meta", "openai", "deepmind", "ibm",
                                 "amazon", "bytedance", "alibaba", "tencent", "baidu", "nvidia", "apple",
                                 "facebook", "anthropic"}
# "<name> <head>" is the name, typed by the head when it says something ("the GLUE benchmark" → GLUE, dataset).
REDUCIBLE_HEADS = {"model": "model", "dataset": "dataset", "data set": "dataset", "corpus": "dataset",
                   "benchmark": "dataset", "collection": "dataset", "suite": "dataset", "architecture": "model",
                   "network": "model", "encoder": "model", "decoder": "model", "classifier": "model",
                   "agent": "model", "variant": "model", "family": "model", "method": "method",
                   "approach": "method", "framework": "method", "algorithm": "method", "technique": "method",
                   "objective": "method", "loss": "method", "embedding": "method", "pipeline": "method",
                   "baseline": "method", "optimizer": "method", "optimiser": "method", "solver": "method",
                   "system": "method", "library": "software", "toolkit": "software", "package": "software",
                   "tool": "software", "platform": "software", "service": "software", "task": "task",
                   "metric": "", "score": "", "paper": "", "project": "", "module": ""}
TYPE_PRIORITY = tuple(t.value for t in (T.DATASET, T.METRIC, T.TASK, T.MODEL, T.METHOD, T.SOFTWARE, T.FIELD,
                                        T.ORGANIZATION, T.PERSON, T.CONCEPT))
# Model names often carry a size: GPT-3, BERT-base, Llama-2-7B, T5-large.
MODEL_NAME = re.compile(r"(-|^)(base|large|small|xl|xxl|tiny|mini|medium|\d+(\.\d+)?[bmk])$|-\d+(\.\d+)?[a-z]?$",
                        re.I)
# Words before "on"/"from" that make the name after it a dataset: "trained on X", "results on X".
DATASET_CUES = ("train", "evaluat", "test", "fine-tun", "finetun", "pretrain", "pre-train", "experiment",
                "result", "perform", "accura", "benchmark", "collect", "sampl", "score", "built", "construct")

# "<dataset> test set", "<dataset> dev": a split of a dataset is the dataset.
SPLIT_WORDS = {"test", "dev", "development", "validation", "training", "train", "evaluation", "held-out"}
SPLIT_NOUNS = {"set", "sets", "split", "splits", "subset", "subsets", "data", "portion", "partition"}

LIGHT_VERBS = {"be", "have", "do", "can", "could", "may", "might", "must", "shall", "should", "will", "would",
               "let", "get"}
ABBREVIATIONS = {"al", "fig", "figs", "eq", "eqs", "sec", "e.g", "i.e", "cf", "vs", "no", "approx", "resp", "ref",
                 "refs", "tab", "et", "dr", "prof", "mr", "ms", "st", "vol", "pp", "ch", "app", "def", "thm", "viz"}


def type_of_phrase(words: Sequence[str]) -> str:
    """The entity type a phrase's lower-case words imply (last word singular), or "" when they say nothing."""
    if not words:
        return ""
    full, head = " ".join(words), words[-1]
    if full in FIELDS:
        return "field"
    if (full in METRIC_WORDS or " ".join(words[-2:]) in METRIC_WORDS
            or head in METRIC_WORDS and (head not in WEAK_METRIC_HEADS or len(words) > 1)):
        return "metric"
    if head in DATASET_HEADS or full in DATASET_HEADS:
        return "dataset"
    if head in TASK_HEADS and (head not in WEAK_TASK_HEADS or len(words) > 1):
        return "task"
    if head in MODEL_HEADS:
        return "model"
    if head in METHOD_HEADS or full in METHOD_HEADS:
        return "method"
    if head in SOFTWARE_HEADS:
        return "software"
    if head in FIELD_HEADS and len(words) > 1:
        return "field"
    return ""


def pick_type(votes: Iterable[str]) -> str:
    """The most voted type other than concept; ties go to the more specific type (TYPE_PRIORITY)."""
    counts = Counter(v for v in votes if v and v != "concept")
    if not counts:
        return "concept"
    best = max(counts.values())
    return next(t for t in TYPE_PRIORITY if counts.get(t) == best)


def singular(word: str) -> str:
    """A plain plural rule for keys and typing ("models" → "model", "corpora" stays); names are left alone."""
    w = word
    if len(w) <= 3 or not w.isalpha() or not w.islower():
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "xes", "ches", "shes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is", "as", "os", "ys", "ics")):
        return w[:-1]
    return w
