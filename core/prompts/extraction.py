"""The prompts of entity and relation extraction (core/graph/extract/llm/extract.py): LightRAG's record format and
its JSON variant, the field's types (issue 38: a biology paper is asked for genes, diseases and chemicals, not
datasets and metrics) and their definitions."""
from __future__ import annotations

EXTRACTION_PROMPTS: dict = {}

# --- entity and relation extraction (core/graph/extract/llm/extract.py) ---
# LightRAG's record format: one record per line, fields split by the tuple delimiter, records by the record
# delimiter, the reply closed by the completion marker. Kept here so the prompts and the parser agree.
EXTRACTION_PROMPTS["extraction_tuple_delimiter"] = "<|>"
EXTRACTION_PROMPTS["extraction_record_delimiter"] = "##"
EXTRACTION_PROMPTS["extraction_completion_delimiter"] = "<|COMPLETE|>"

EXTRACTION_PROMPTS["entity_extraction_system"] = """---Role---
You build a knowledge graph of scientific papers. From a passage of a paper you extract the entities it
names and the relationships the passage states between them.

---Steps---
1. Identify every entity of one of these types: [{entity_types}].
   Good entities are named things a researcher would look up: methods, models and architectures, tasks,
   datasets and benchmarks, metrics, software, people, organisations, fields, and well-defined concepts.
   Skip generic words ("approach", "results", "this paper"), numbers on their own, and citation markers.
   For each entity write:
   - entity_name: the name the passage uses most, with its usual capitalisation ("BERT" rather than
     "Bidirectional Encoder Representations from Transformers"); the same name every time you write it.
   - entity_type: one of the types above; use "concept" when none fits.
   - entity_description: one or two sentences, from the passage only, saying what the entity is and what
     the passage says about it (scores, sizes, years when the passage gives them).
   Format: ("entity"{tuple_delimiter}<entity_name>{tuple_delimiter}<entity_type>{tuple_delimiter}<entity_description>)
2. Among those entities, identify every pair that the passage clearly relates: a method evaluated on a
   dataset, a model reaching a score on a metric, a method that extends or outperforms another, a dataset
   built for a task, a tool used to implement a method, an author who proposed a method...
   For each pair write:
   - source_entity and target_entity: names exactly as in step 1;
   - relationship_description: why they are related, with the figures the passage gives;
   - relationship_keywords: a few comma-separated words for the kind of relation ("evaluated on",
     "outperforms", "fine-tuned on", "extends", "measured by", "proposed by");
   - relationship_strength: an integer from 1 (loosely related) to 10 (central claim of the passage).
   Format: ("relationship"{tuple_delimiter}<source_entity>{tuple_delimiter}<target_entity>{tuple_delimiter}<relationship_description>{tuple_delimiter}<relationship_keywords>{tuple_delimiter}<relationship_strength>)
3. Write names and descriptions in {language}; keep names of methods, datasets and metrics as the paper
   spells them. Do not invent facts the passage does not state.
4. Output every record on its own line, separated by {record_delimiter}. No headings, no explanations, no
   markdown. When finished, output {completion_delimiter}

---Examples---
{examples}"""

EXTRACTION_PROMPTS["entity_extraction_examples"] = """Example 1

Entity types: [method, task, dataset, metric, model, concept, software, person, organization, field]
Text:
We introduce BERT, which stands for Bidirectional Encoder Representations from Transformers. BERT is
pre-trained on unlabeled text with a masked language model objective and then fine-tuned on downstream
tasks. BERT obtains a GLUE score of 80.5%, a 7.7 point absolute improvement, and improves MultiNLI accuracy
to 86.7%.
Output:
("entity"{tuple_delimiter}BERT{tuple_delimiter}model{tuple_delimiter}BERT (Bidirectional Encoder Representations from Transformers) is a language representation model pre-trained on unlabeled text and fine-tuned on downstream tasks.){record_delimiter}
("entity"{tuple_delimiter}Masked Language Model{tuple_delimiter}method{tuple_delimiter}The masked language model is the pre-training objective of BERT: it predicts words hidden from the input.){record_delimiter}
("entity"{tuple_delimiter}Transformer{tuple_delimiter}model{tuple_delimiter}The Transformer is the encoder architecture whose bidirectional representations BERT learns.){record_delimiter}
("entity"{tuple_delimiter}GLUE{tuple_delimiter}dataset{tuple_delimiter}GLUE is a benchmark of language understanding tasks, summarised by one GLUE score.){record_delimiter}
("entity"{tuple_delimiter}MultiNLI{tuple_delimiter}dataset{tuple_delimiter}MultiNLI is a natural language inference dataset, evaluated by accuracy.){record_delimiter}
("entity"{tuple_delimiter}Accuracy{tuple_delimiter}metric{tuple_delimiter}Accuracy is the share of correct predictions, used to report results on MultiNLI.){record_delimiter}
("relationship"{tuple_delimiter}BERT{tuple_delimiter}Masked Language Model{tuple_delimiter}BERT is pre-trained with the masked language model objective.{tuple_delimiter}pre-training objective, trained with{tuple_delimiter}9){record_delimiter}
("relationship"{tuple_delimiter}BERT{tuple_delimiter}Transformer{tuple_delimiter}BERT learns bidirectional encoder representations from Transformers.{tuple_delimiter}architecture, based on{tuple_delimiter}8){record_delimiter}
("relationship"{tuple_delimiter}BERT{tuple_delimiter}GLUE{tuple_delimiter}BERT reaches a GLUE score of 80.5%, a 7.7 point absolute improvement.{tuple_delimiter}evaluated on, state of the art{tuple_delimiter}9){record_delimiter}
("relationship"{tuple_delimiter}BERT{tuple_delimiter}MultiNLI{tuple_delimiter}BERT improves MultiNLI accuracy to 86.7%.{tuple_delimiter}evaluated on, improves{tuple_delimiter}8){record_delimiter}
("relationship"{tuple_delimiter}MultiNLI{tuple_delimiter}Accuracy{tuple_delimiter}Results on MultiNLI are reported as accuracy.{tuple_delimiter}measured by{tuple_delimiter}6){record_delimiter}
{completion_delimiter}

Example 2

Entity types: [method, task, dataset, metric, model, concept, software, person, organization, field]
Text:
We train ResNet-50 on ImageNet with stochastic gradient descent in PyTorch. Residual connections let the
152-layer network reach 3.57% top-5 error, winning the ILSVRC 2015 classification task.
Output:
("entity"{tuple_delimiter}ResNet-50{tuple_delimiter}model{tuple_delimiter}ResNet-50 is a 50-layer residual network trained on ImageNet.){record_delimiter}
("entity"{tuple_delimiter}ImageNet{tuple_delimiter}dataset{tuple_delimiter}ImageNet is the image dataset the residual networks are trained on.){record_delimiter}
("entity"{tuple_delimiter}Stochastic Gradient Descent{tuple_delimiter}method{tuple_delimiter}Stochastic gradient descent is the optimiser used to train ResNet-50.){record_delimiter}
("entity"{tuple_delimiter}PyTorch{tuple_delimiter}software{tuple_delimiter}PyTorch is the framework the networks are trained in.){record_delimiter}
("entity"{tuple_delimiter}Residual Connections{tuple_delimiter}method{tuple_delimiter}Residual connections let very deep networks, up to 152 layers, be trained.){record_delimiter}
("entity"{tuple_delimiter}Top-5 Error{tuple_delimiter}metric{tuple_delimiter}Top-5 error is the classification metric on which the 152-layer network reaches 3.57%.){record_delimiter}
("entity"{tuple_delimiter}ILSVRC 2015 Classification{tuple_delimiter}task{tuple_delimiter}The ILSVRC 2015 classification task is the competition won by the 152-layer residual network.){record_delimiter}
("relationship"{tuple_delimiter}ResNet-50{tuple_delimiter}ImageNet{tuple_delimiter}ResNet-50 is trained on ImageNet.{tuple_delimiter}trained on{tuple_delimiter}8){record_delimiter}
("relationship"{tuple_delimiter}ResNet-50{tuple_delimiter}Stochastic Gradient Descent{tuple_delimiter}ResNet-50 is trained with stochastic gradient descent.{tuple_delimiter}optimised with{tuple_delimiter}5){record_delimiter}
("relationship"{tuple_delimiter}ResNet-50{tuple_delimiter}PyTorch{tuple_delimiter}ResNet-50 is implemented and trained in PyTorch.{tuple_delimiter}implemented in{tuple_delimiter}4){record_delimiter}
("relationship"{tuple_delimiter}Residual Connections{tuple_delimiter}Top-5 Error{tuple_delimiter}Residual connections let the 152-layer network reach 3.57% top-5 error.{tuple_delimiter}improves, measured by{tuple_delimiter}9){record_delimiter}
("relationship"{tuple_delimiter}Residual Connections{tuple_delimiter}ILSVRC 2015 Classification{tuple_delimiter}The residual network won the ILSVRC 2015 classification task.{tuple_delimiter}wins{tuple_delimiter}8){record_delimiter}
{completion_delimiter}"""

EXTRACTION_PROMPTS["entity_extraction_user"] = """Extract the entities and relationships of this passage.

Entity types: [{entity_types}]
Text:
{input_text}
Output:"""

EXTRACTION_PROMPTS["entity_continue_extraction"] = """Many entities and relationships were missed in the last extraction.
Add only the ones that are missing, in the same format: one record per line separated by {record_delimiter},
entity types from [{entity_types}], names exactly as before for entities already extracted. Do not repeat
records you already wrote. When finished, output {completion_delimiter}"""

# The JSON variant, for models that follow a JSON schema (the embedded llama.cpp model): the schema, with its
# capped list lengths, lives in core/graph/extract/llm/extract.py.
EXTRACTION_PROMPTS["entity_extraction_json_system"] = """---Role---
You build a knowledge graph of scientific papers. From a passage of a paper you extract the entities it
names and the relationships the passage states between them, as one JSON object.

---Rules---
- entities: named things a researcher would look up (methods, models, tasks, datasets, metrics, software,
  people, organisations, fields, well-defined concepts). Skip generic words, bare numbers and citations.
  "type" is one of [{entity_types}], "concept" when none fits. "description" is one sentence from the
  passage only.
- relationships: pairs of those entities that the passage clearly relates. "source" and "target" are entity
  names exactly as in "entities"; "keywords" says the kind of relation ("evaluated on", "outperforms");
  "strength" is an integer from 1 (loose) to 10 (central claim).
- Write descriptions in {language}. At most 12 entities and 12 relationships: keep the most important.
- Output only the JSON object.

---Example---
Text:
BERT obtains a GLUE score of 80.5% and improves MultiNLI accuracy to 86.7%.
Output:
{{"entities": [
  {{"name": "BERT", "type": "model", "description": "BERT is a pre-trained language representation model."}},
  {{"name": "GLUE", "type": "dataset", "description": "GLUE is a language understanding benchmark."}},
  {{"name": "MultiNLI", "type": "dataset", "description": "MultiNLI is a natural language inference dataset."}},
  {{"name": "Accuracy", "type": "metric", "description": "Accuracy is the metric reported on MultiNLI."}}],
 "relationships": [
  {{"source": "BERT", "target": "GLUE", "description": "BERT reaches a GLUE score of 80.5%.", "keywords": "evaluated on", "strength": 9}},
  {{"source": "BERT", "target": "MultiNLI", "description": "BERT improves MultiNLI accuracy to 86.7%.", "keywords": "evaluated on, improves", "strength": 8}},
  {{"source": "MultiNLI", "target": "Accuracy", "description": "MultiNLI results are reported as accuracy.", "keywords": "measured by", "strength": 6}}]}}"""

EXTRACTION_PROMPTS["entity_extraction_json_user"] = """Entity types: [{entity_types}]
Text:
{input_text}
Output:"""

EXTRACTION_PROMPTS["entity_continue_extraction_json"] = """Many entities and relationships were missed in the last extraction.
Answer with the same JSON object holding only the missing ones (entity types from [{entity_types}]); use
empty lists if nothing is missing."""

# --- community reports (core/graph/communities/detect.py) ---
# GraphRAG's community report, for a graph of papers: the reply is one JSON object.
# Appended to the extraction's system prompt for a paper outside computer science (core/graph/fields.py): the types
# follow the paper's field, and the field's own types come with what they mean.
EXTRACTION_PROMPTS["entity_extraction_field"] = """
---Field---
This passage is from a paper in {field}. Use its types where they fit: {definitions}. A person studied (a patient, a
participant) is no method."""

EXTRACTION_PROMPTS["entity_type_definitions"] = {
    "gene_or_protein": "gene_or_protein (a gene, protein, enzyme or receptor: TP53, IL-6, Dps)",
    "disease": "disease (a disease, disorder or syndrome: asthma, AMD)",
    "chemical": "chemical (a compound, drug, ion or element: NaCl, H2O2, cisplatin)",
    "organism": "organism (a species, strain or virus: Escherichia coli, mice, SARS-CoV-2)",
    "cell_or_tissue": "cell_or_tissue (a cell type, cell line, tissue or organ: fibroblasts, HeLa, liver)",
    "assay": "assay (a laboratory or clinical measurement technique: qPCR, ELISA, Western blot, RNA-seq)",
    "material": "material (a solid, alloy, glass, film or crystal: SiO2, GaAs, silica glass)",
    "property": "property (a measured physical quantity: band gap, resistivity, Curie temperature)",
    "instrument": "instrument (an apparatus: SQUID magnetometer, XRD, TEM, spectrometer)",
}
