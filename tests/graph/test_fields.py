"""The field-aware schema (core/graph/fields.py, core/graph/data/fields/): a paper's field from its venue and words,
each field's cues (name shapes, heads, suffixes, lexicons), and the LLM-free extractor with real spaCy typing a
biology abstract with the life-science types while a computer-science paper keeps its own ("patient" is never a
method; "BERT" is never a gene)."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from core.graph.extract.spacy.extract import SpacyExtractor
from core.graph.fields import CS, FIELDS, LIFE, PHYSICAL, detect_field, venue_field
from core.schema.graph import EntityType
from core.schema.records import Chunk
from core.settings.config import GraphConfig

BIO_ABSTRACT = """BACKGROUND: Age-related macular degeneration (AMD) is the leading cause of blindness in older \
patients. Sickle cell disease (SCD) and chronic kidney disease also affect the retina, and the estimated glomerular \
filtration rate (eGFR) of each patient was recorded.
METHODS: We enrolled 120 patients and 40 healthy controls. Expression of TP53 and BRCA1 was measured by qPCR and \
Western blot in retinal pigment epithelial cells and fibroblasts; serum IL-6 levels were measured by ELISA. \
Escherichia coli and Deinococcus radiodurans strains were grown with NaCl and H2O2, and the E. coli Dps protein was \
purified. Patients received ranibizumab or aflibercept.
RESULTS: TP53 expression was higher in patients with AMD than in controls, and IL-6 correlated with eGFR. Patients \
with SCD had lower eGFR. The Dps protein protected DNA from H2O2.
CONCLUSIONS: Retinal TP53 expression and serum IL-6 are markers of AMD in patients with chronic kidney disease."""

NLP_ABSTRACT = """We introduce a new language representation model called Bidirectional Encoder Representations \
from Transformers (BERT). We fine-tune BERT on the MultiNLI dataset and report an accuracy of 84.6%. Compared with \
OpenAI GPT, BERT improves the F1 score on SQuAD question answering. The GLUE benchmark is a collection of natural \
language understanding tasks, and BERT outperforms every baseline model on it. Our model is trained with the Adam \
optimizer on a GPU, and its tokens are embedded by a Transformer encoder."""

PHYSICS_ABSTRACT = """We report the magnetic properties of thin films of yttrium iron garnet grown on SiO2 \
substrates. The magnetization and the coercivity were measured with a SQUID magnetometer between 5 K and 300 K, and \
the crystal structure was checked by XRD and TEM. The thermal conductivity of the films decreases with temperature, \
and the Curie temperature of the GaAs heterostructure is 110 K. Ferromagnetic resonance linewidth and the Gilbert \
damping were obtained from the spectra of the films; the band gap was measured by optical absorption."""


def chunk(text: str, doc_id: str, index: int = 0) -> Chunk:
    return Chunk(id=f"{doc_id}:{index}", doc_id=doc_id, index=index, kind="text", text=text, pages=[0],
                 item_indices=[0], section="Abstract")


def entities(text: str, doc_id: str, venue: str = "") -> dict[str, str]:
    extractor = SpacyExtractor(GraphConfig(), venue_of=lambda _: venue)
    found = {e.name: e.type for ex in extractor.extract([chunk(text, doc_id)]) for e in ex.entities}
    return found


# --- which field


def test_a_paper_field_comes_from_its_words_and_its_venue():
    assert detect_field(BIO_ABSTRACT) == LIFE
    assert detect_field(NLP_ABSTRACT) == CS
    assert detect_field(PHYSICS_ABSTRACT) == PHYSICAL
    # The venue counts: a short text with few signal words follows its journal.
    assert venue_field("Nucleic Acids Research") == LIFE
    assert venue_field("Applied Physics Letters 98, 082505") == PHYSICAL
    assert venue_field("Proceedings of the 58th Annual Meeting of the ACL") == CS
    assert detect_field("We measured the samples twice.", "Applied Physics Letters") == PHYSICAL
    assert detect_field("", "") == CS  # nothing said: the schema the graph was first tuned on


def test_every_field_type_is_an_entity_type_and_computer_science_has_no_cues_of_the_others():
    values = {t.value for t in EntityType}
    for field in FIELDS.values():
        assert set(field.types) <= values, field.name
        assert set(field.cues) <= values, field.name
    assert FIELDS[CS].cue_type(["kidney", "disease"]) == "" and FIELDS[CS].name_type("TP53") == ""


# --- the rules of each field


@pytest.mark.parametrize("name, expected", [
    ("TP53", "gene_or_protein"), ("BRCA1", "gene_or_protein"), ("IL-6", "gene_or_protein"),
    ("p53", "gene_or_protein"), ("TNF-alpha", "gene_or_protein"), ("NaCl", "chemical"), ("H2O2", "chemical"),
    ("Escherichia coli", "organism"), ("E. coli", "organism"), ("Deinococcus radiodurans", "organism"),
    ("BERT", ""), ("AMD", ""), ("OS", ""), ("Table shows", "")])
def test_life_science_name_shapes(name, expected):
    assert FIELDS[LIFE].name_type(name) == expected


@pytest.mark.parametrize("words, expected", [
    ("sickle cell disease", "disease"), ("hepatitis", "disease"), ("glaucoma", "disease"), ("gout", "disease"),
    ("lymphoma", "disease"), ("kinase", "gene_or_protein"), ("dna polymerase", "gene_or_protein"),
    ("creatinine", "chemical"), ("ranibizumab", "chemical"), ("fibroblast", "cell_or_tissue"),
    ("retinal pigment epithelial cell", "cell_or_tissue"), ("western blot", "assay"), ("rna-seq", "assay"),
    ("qpcr", "assay"), ("mouse", "organism"), ("glomerular filtration rate", "metric"),
    ("patient", ""), ("healthy control", ""), ("covariate", ""), ("routine", ""), ("complication", "")])
def test_life_science_cues(words, expected):
    assert FIELDS[LIFE].cue_type(words.split()) == expected


@pytest.mark.parametrize("words, expected", [
    ("silica glass", "material"), ("aluminium alloy", "material"), ("thin film", "material"),
    ("thermal conductivity", "property"), ("curie temperature", "property"), ("resistivity", "property"),
    ("squid magnetometer", "instrument"), ("xrd", "instrument"), ("electron microscope", "instrument"),
    ("spectrometer", "instrument"), ("sample", "")])
def test_physical_science_cues(words, expected):
    assert FIELDS[PHYSICAL].cue_type(words.split()) == expected


def test_formulas_are_materials_in_the_physical_sciences_and_small_molecules_chemicals():
    physical = FIELDS[PHYSICAL]
    assert physical.name_type("SiO2") == "material" and physical.name_type("GaAs") == "material"
    assert physical.name_type("H2O2") == "chemical" and physical.name_type("CO2") == "chemical"


# --- the extractor with real spaCy


def test_a_biology_abstract_gets_life_science_types_and_patients_are_never_methods():
    found = entities(BIO_ABSTRACT, "bio")
    lower = {name.lower(): kind for name, kind in found.items()}
    assert all(kind != "method" for name, kind in lower.items() if "patient" in name), found
    assert lower.get("amd") == "disease" and lower.get("scd") == "disease", found
    assert lower.get("egfr") == "metric", found
    assert lower.get("tp53") == "gene_or_protein" and lower.get("il-6") == "gene_or_protein", found
    assert lower.get("escherichia coli") == "organism" or lower.get("e. coli") == "organism", found
    assert lower.get("qpcr") == "assay" and lower.get("elisa") == "assay", found
    assert lower.get("h2o2") == "chemical", found
    kinds = set(found.values())
    assert {"disease", "gene_or_protein", "assay", "organism"} <= kinds, found
    assert not kinds & {"model", "task"}, found


def test_a_computer_science_abstract_keeps_its_types():
    found = entities(NLP_ABSTRACT, "nlp")
    assert found.get("BERT") == "model", found
    assert found.get("MultiNLI") == "dataset", found
    assert not set(found.values()) & {"gene_or_protein", "disease", "chemical", "organism", "cell_or_tissue"}, found


def test_a_physics_abstract_gets_materials_properties_and_instruments():
    found = entities(PHYSICS_ABSTRACT, "phys", venue="Applied Physics Letters")
    lower = {name.lower(): kind for name, kind in found.items()}
    kinds = set(found.values())
    assert {"material", "property", "instrument"} <= kinds, found
    assert lower.get("xrd") == "instrument" or lower.get("squid magnetometer") == "instrument", found
    assert not kinds & {"gene_or_protein", "disease", "model", "task"}, found


def test_the_field_types_pass_the_configured_types_of_an_older_workspace():
    """A workspace whose settings list only the computer-science types still gets a field's own types."""
    config = GraphConfig(entity_types=["method", "dataset", "metric", "model", "concept"])
    extractor = SpacyExtractor(config)
    found = {e.name.lower(): e.type for ex in extractor.extract([chunk(BIO_ABSTRACT, "bio")]) for e in ex.entities}
    assert found.get("amd") == "disease", found
    assert extractor.fields == {"bio": LIFE}


# --- with an LLM: the prompt and its types follow the field


class _RecordingChat:
    """A chat model that answers every extraction with the same records and keeps the prompts it was sent."""

    name = "recording"

    def __init__(self, reply: str):
        self.reply, self.systems, self.users, self.formats = reply, [], [], []

    def chat(self, messages, purpose="", response_format=None, temperature=0.0):
        self.systems.append(messages[0]["content"])
        self.users.append(messages[1]["content"])
        self.formats.append(response_format)
        return SimpleNamespace(text=self.reply, cached=True)


def test_the_llm_extraction_prompt_and_types_follow_the_paper_field():
    from core.graph.extract.llm.extract import LLMExtractor

    reply = ('("entity"<|>AMD<|>disease<|>Age-related macular degeneration.)##\n'
             '("entity"<|>BERT<|>model<|>A language model.)##\n<|COMPLETE|>')
    chat = _RecordingChat(reply)
    extractor = LLMExtractor(chat, GraphConfig(gleaning_rounds=0), concurrency=1,
                             venue_of=lambda doc_id: "Ophthalmology" if doc_id == "bio" else "")
    bio, nlp = [chunk(BIO_ABSTRACT, "bio")], [chunk(NLP_ABSTRACT, "nlp")]
    assert extractor.field_of_paper(bio) == LIFE and extractor.field_of_paper(nlp) == CS
    (bio_result,) = extractor.extract(bio)
    (nlp_result,) = extractor.extract(nlp)
    bio_prompt, nlp_prompt = chat.systems
    assert "gene_or_protein" in bio_prompt and "life sciences and medicine" in bio_prompt
    assert "gene_or_protein" not in nlp_prompt and "model" in nlp_prompt
    bio_user, nlp_user = chat.users
    assert "gene_or_protein" in bio_user and "model" not in bio_user and "model" in nlp_user
    assert {e.name: e.type for e in bio_result.entities}["AMD"] == "disease"
    assert {e.name: e.type for e in nlp_result.entities}["BERT"] == "model"
    # JSON mode constrains the types to the field's.
    json_extractor = LLMExtractor(chat, GraphConfig(), json_mode=True)
    enum = json_extractor.prompts(LIFE).response_format["json_schema"]["schema"]
    assert "disease" in json.dumps(enum) and "disease" not in json.dumps(
        json_extractor.prompts(CS).response_format["json_schema"]["schema"])


# --- the Graph page


def test_each_field_type_has_a_colour_of_its_own():
    from core.presentation.graph.render import OTHER_COLOR, PALETTE, TYPE_COLORS, RenderOptions, color_of

    field_types = {t for f in FIELDS.values() if not f.is_cs for t in f.types}
    assert field_types <= set(TYPE_COLORS)
    colours = list(TYPE_COLORS.values())
    assert len(set(colours)) == len(colours) and not set(colours) & (set(PALETTE) | {OTHER_COLOR})
    order = ["method", "disease", "model", "gene_or_protein"]
    options = RenderOptions(type_order=order)
    node = lambda kind: SimpleNamespace(is_paper=False, type=kind, community=None)  # noqa: E731
    assert color_of(node("disease"), options) == TYPE_COLORS["disease"]
    # The computer-science types keep the palette's colours, as if the field types were not there.
    assert color_of(node("model"), options) == PALETTE[1]


def test_patients_are_never_methods_even_in_a_computer_science_paper():
    text = ("We propose PatientNet, a neural model trained on a dataset of clinical notes. Each patient is encoded by "
            "a Transformer encoder, and the patient representation method is evaluated with F1 on the benchmark. "
            "Patients and participants were recruited by the hospital.")
    found = entities(text, "cs-clinical")
    assert all(kind != "method" for name, kind in found.items() if "patient" in name.lower()
               or "participant" in name.lower()), found
