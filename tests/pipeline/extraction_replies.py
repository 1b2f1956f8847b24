"""LLM extraction replies shared by the reply-parser tests (test_llm_reply_parser.py) and the extractor tests
(test_llm_extractor.py): what a model answers for the BERT abstract in the prompt's record format, and a JSON
reply."""
# The replies are text received whole: breaking their lines would change them.
from __future__ import annotations

# What gpt-4o-mini answers for the abstract of the BERT paper, in the prompt's format.
BERT_REPLY = """("entity"<|>BERT<|>model<|>BERT (Bidirectional Encoder Representations from Transformers) is a language representation model pre-trained on unlabeled text.)##
("entity"<|>GLUE<|>dataset<|>GLUE is a benchmark of nine language understanding tasks.)##
("entity"<|>MultiNLI<|>dataset<|>MultiNLI is a natural language inference corpus.)##
("entity"<|>Accuracy<|>metric<|>Accuracy is the metric reported on MultiNLI.)##
("entity"<|>SQuAD v1.1<|>dataset<|>SQuAD v1.1 is a question answering benchmark.)##
("relationship"<|>BERT<|>GLUE<|>BERT obtains a GLUE score of 80.5%, a 7.7 point absolute improvement.<|>evaluated on, state of the art<|>9)##
("relationship"<|>BERT<|>MultiNLI<|>BERT improves MultiNLI accuracy to 86.7%.<|>evaluated on, improves<|>8)##
("relationship"<|>MultiNLI<|>Accuracy<|>MultiNLI results are reported as accuracy.<|>measured by<|>6)##
("relationship"<|>BERT<|>SQuAD v1.1<|>BERT reaches 93.2 Test F1 on SQuAD v1.1.<|>evaluated on<|>8)##
<|COMPLETE|>"""


JSON_REPLY = {
    "entities": [
        {"name": "GPT-3", "type": "model", "description": "GPT-3 is a 175B-parameter autoregressive language model."},
        {"name": "Few-shot learning", "type": "task", "description": "Learning a task from a few demonstrations."},
        {"name": "LAMBADA", "type": "dataset", "description": "LAMBADA tests long-range dependencies."},
    ],
    "relationships": [
        {"source": "GPT-3", "target": "Few-shot learning", "description": "GPT-3 is evaluated in the few-shot "
         "setting.", "keywords": "evaluated in", "strength": 9},
        {"source": "GPT-3", "target": "LAMBADA", "description": "GPT-3 reaches 86.4% accuracy on LAMBADA.",
         "keywords": ["evaluated on", "accuracy"], "strength": "8"},
    ],
}
