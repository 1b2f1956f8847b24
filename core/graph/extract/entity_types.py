"""Entity types for the LLM-free extractor from what a name looks like, a lexicon of well-known names, and the
words around a mention. The phrase-head rules ("… dataset", "… accuracy", "… classification") are in
core/graph/extract/spacy/words.py; votes from all of them are counted over the whole paper."""
from __future__ import annotations

import re

from core.schema.graph import EntityType as T

# Well-known names of the field, lower case. A lexicon, not a list of the shared papers' terms: names any NLP/ML
# reader knows, whose type the text around them often does not say ("we compare with RoBERTa").
_LEXICON: dict[str, str] = {}
for _type, _names in {
    T.MODEL: """bert roberta scibert biobert specter specter2 gpt gpt-2 gpt-3 gpt-3.5 gpt-4 gpt-4o chatgpt t5 bart
        elmo xlnet albert electra deberta longformer bigbird llama llama-2 llama-3 alpaca vicuna mistral mixtral qwen
        claude gemini palm word2vec glove fasttext doc2vec sbert sentence-bert tapas tabert pegasus bloom flan-t5
        longt5 distilbert resnet vgg lstm bilstm cnn rnn gru crf transformer seq2seq led unilm ernie xlm xlm-r
        mbert minilm e5 contriever dpr colbert splade bm25 tf-idf lda""",
    T.DATASET: """glue superglue squad squad2.0 multinli mnli snli qnli qqp sst-2 sst mrpc cola rte wnli sts-b imagenet
        coco ms-marco msmarco hotpotqa triviaqa pubmed s2orc scidocs wikipedia bookcorpus xsum squality pubmedqa
        wikitables wtq tabfact wikisql spider feverous fever conll ontonotes mag dblp acl-arc aminer arxiv c4
        pile cord-19 beir mteb pubmed-central pmc citeseerx dbpedia wikidata openwebtext webtext commoncrawl
        common_crawl the_pile redpajama refinedweb""",
    T.SOFTWARE: """grobid spacy pytorch tensorflow keras scikit-learn sklearn huggingface nltk stanza allennlp
        pdfplumber pdfminer pymupdf elasticsearch lucene faiss numpy pandas docker github mturk cermine latex
        mineru langchain jupyter matlab weka openie gensim
        crowdflower label-studio python java pdfalto scienceparse science-parse parscit layoutparser""",
    T.FIELD: """ai nlp ml cv ir hci xai cs""",
    T.METHOD: """adam sgd adamw lora rlhf dpo ppo beam-search t-sne umap pca svm language_model_pre-training
        language_model_pretraining masked_language_modeling dropout word_embedding contrastive_learning
        transfer_learning knowledge_distillation""",
    # Tasks of the field written with common words only, which the frequency test alone would drop.
    T.TASK: """natural_language_inference question_answering machine_translation named_entity_recognition
        sentiment_analysis text_classification language_modeling next_sentence_prediction dependency_parsing
        relation_extraction entity_linking coreference_resolution semantic_parsing reading_comprehension
        paraphrase_detection textual_entailment information_extraction document_classification
        citation_recommendation fact_verification""",
    T.METRIC: """bleu rouge rouge-l rouge-1 rouge-2 meteor cider bertscore ndcg mrr map auc auroc f1 perplexity
        accuracy precision recall""",
    # Venues are events, named like organisations: the type the graph has for them.
    T.ORGANIZATION: """ai2 google microsoft openai deepmind ibm amazon nvidia anthropic acl naacl emnlp eacl coling
        neurips nips icml iclr aaai ijcai cvpr iccv eccv sigir kdd wsdm cikm jcdl""",
}.items():
    for _name in _names.split():
        _name = _name.replace("_", " ")
        _LEXICON[_name] = _LEXICON[re.sub(r"(?<=\w)-(?=\w)", "", _name)] = _type.value  # as entity keys write it

# A model's name often says so: a size (BERT-base, T5-large, Llama-2-7B) or a family inside it (SciBERT, TableFormer).
_MODEL_PARTS = re.compile(r"(bert|gpt|former|net\b|lm\b|llama|t5|bart|xl\b|former)", re.I)
_MODEL_SIZE = re.compile(r"(-|^)(base|large|small|xl|xxl|tiny|mini|medium|\d+(\.\d+)?[bmk])$|-\d+(\.\d+)?[a-z]?$", re.I)
_SOFTWARE_PARTS = re.compile(r"(^Py[A-Z]|py$|\.js$|[Kk]it$|[Ll]ib$|DB$|(Parser|Predictor|Rasterizer|Extractor|"
                             r"Tokenizer|Loader|Client|API|SDK|Box|Viewer)$)")
_DATASET_PARTS = re.compile(r"(QA|Bench|pedia|Bank|Corpus|Set|Net|SeerX|Scholar)$")
_METRIC_PARTS = re.compile(r"(^|-)(F1|BLEU|ROUGE|nDCG|MRR|MAP|AUC|R@\d+|P@\d+)(-|$)", re.I)
# A person's name as prose writes it: two or three capitalised words or initials ("Oren Etzioni", "Daniel S. Weld").
_PERSON = re.compile(r"[A-Z][a-z]+(-[A-Z][a-z]+)?( [A-Z]\.)*( [A-Z][a-z']+(-[A-Z][a-z]+)?){1,2}")
_CITED_PERSON = re.compile(r"([A-Z][a-z']+(?:-[A-Z]?[a-z']+)?)(?: [A-Z]\.){1,3}")
# Words just before or after a name that say what it is: "we propose X", "X outperforms", "evaluated on X".
_CUES_BEFORE = {"propose": T.METHOD, "introduce": T.METHOD, "present": T.METHOD, "use": "", "using": "",
                "dataset": T.DATASET, "corpus": T.DATASET, "benchmark": T.DATASET, "library": T.SOFTWARE,
                "toolkit": T.SOFTWARE, "tool": T.SOFTWARE, "model": T.MODEL, "models": T.MODEL}
_CUES_AFTER = {"outperform": T.MODEL, "outperforms": T.MODEL, "achieve": T.MODEL, "achieves": T.MODEL,
               "model": T.MODEL, "models": T.MODEL, "encoder": T.MODEL, "embeddings": T.MODEL,
               "dataset": T.DATASET, "corpus": T.DATASET, "benchmark": T.DATASET, "score": T.METRIC,
               "library": T.SOFTWARE, "toolkit": T.SOFTWARE, "api": T.SOFTWARE, "parser": T.SOFTWARE,
               "algorithm": T.METHOD, "method": T.METHOD, "approach": T.METHOD, "framework": T.METHOD}


def known_type(key: str) -> str:
    """The lexicon's type of a name (its entity key, lower case), or ""."""
    return _LEXICON.get(key, "") or _LEXICON.get(key.replace(" ", "-"), "")


def name_type(name: str) -> str:
    """The type a name's shape implies: model (a size or a model family inside it), software, or ""."""
    if " " in name:
        return ""
    if re.search(r"-(19|20)\d\d$", name) or _DATASET_PARTS.search(name):
        return T.DATASET.value  # CoNLL-2003, SemEval-2017: a shared task's data; HotpotQA, WordNet, DBpedia
    if _METRIC_PARTS.search(name):
        return T.METRIC.value  # micro-F1, ROUGE-L
    if _MODEL_SIZE.search(name) and any(c.isalpha() for c in name) or _MODEL_PARTS.search(name) and name != "BERTScore":
        return T.MODEL.value
    if _SOFTWARE_PARTS.search(name) and not name.isupper():
        return T.SOFTWARE.value
    return ""


def looks_like_person(name: str, zipf) -> bool:
    """Capitalised words whose last is no common word: "Oren Etzioni", not "Label Studio" or "Nobel Prizes"; or a
    surname and initials as a reference list writes them ("Bohmer C. G.")."""
    cited = _CITED_PERSON.fullmatch(name)
    if cited:
        return zipf(cited.group(1).lower()) < 3.0
    if not _PERSON.fullmatch(name):
        return False
    last = name.split()[-1].split("-")[0].lower()
    return zipf(last) < 3.0 and zipf(name.split()[0].lower()) < 5.5


def context_type(before: list[str], after: list[str]) -> str:
    """The type the words next to a name give it: up to two words before it, one after (lower case)."""
    for word in after[:1]:
        if word in _CUES_AFTER:
            return _CUES_AFTER[word].value
    for word in reversed(before[-2:]):
        cue = _CUES_BEFORE.get(word)
        if cue:
            return cue.value
    return ""


def default_type(named: bool, name_shaped: bool) -> str:
    """When nothing says what it is: a name written like an acronym or CamelCase is most often a method or system
    of the field; anything else stays a concept."""
    return T.METHOD.value if named and name_shaped else T.CONCEPT.value
