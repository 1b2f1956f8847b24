"""Each setting is described once, on its dataclass field: the metadata covers every field, and validation of a
single field (choices, bounds) comes from it with a message that names the setting."""
from dataclasses import fields

import pytest

from core.settings.config import Settings, SettingsError, validate
from core.settings.fields import SPEC, field_problem, field_spec, specs


def every_field():
    for section in fields(Settings):
        config = getattr(Settings(), section.name)
        for spec in specs(config):
            yield section.name, config, spec


def test_every_section_has_a_title_and_every_field_a_label():
    for section in fields(Settings):
        assert getattr(section.default_factory, "TITLE", "").strip(), section.name
        for f in fields(section.default_factory):
            # Declared with `setting(...)`, not just given a label made from its name.
            assert SPEC in f.metadata and f.metadata[SPEC]["label"].strip(), (section.name, f.name)


def test_numbers_have_a_lower_bound_and_choices_hold_their_default():
    for section, config, spec in every_field():
        value = getattr(config, spec.name)
        if spec.choices is not None:
            assert value in spec.choices, (section, spec.name)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            # The form's number inputs take their bounds from here: none may go below what the code can run.
            assert spec.min is not None or spec.above is not None, (section, spec.name)
        assert field_problem(section, spec, value) is None, (section, spec.name)


def test_labels_and_help_moved_from_the_form_keep_their_words():
    assert field_spec(Settings().parsing, "mineru_tier").label == "MinerU tier"
    assert "nothing is downloaded here" in field_spec(Settings().parsing, "mineru_tier").help
    assert field_spec(Settings().chunking, "window_tokens").max == 254
    assert field_spec(Settings().query, "reranker").choices == ("auto", "fusion", "cross-encoder", "llm")


@pytest.mark.parametrize("section, name, value, message", [
    ("parsing", "mineru_tier", "turbo", r"MinerU tier \(parsing.mineru_tier\) must be one of flash, basic, "
                                        r"standard, advanced; not 'turbo'"),
    ("parsing", "backend", "pdfminer", r"Parser backend \(parsing.backend\) must be one of mineru, builtin"),
    ("graph", "extractor", "regex", r"Entity extractor \(graph.extractor\) must be one of auto, llm, spacy"),
    ("query", "reranker", "bm42", r"Reranker \(query.reranker\) must be one of"),
    ("query", "mode", "deep", r"Default mode \(query.mode\) must be one of .*not 'deep'"),
    ("graph", "gleaning_rounds", 6, r"Gleaning rounds \(graph.gleaning_rounds\) must be between 0 and 5, not 6"),
    ("chunking", "window_tokens", 300, r"Embedding window \(tokens\) \(chunking.window_tokens\) must be between "
                                       r"1 and 254, not 300"),
    ("query", "top_k", 0, r"Graph top-k \(query.top_k\) must be at least 1, not 0"),
    ("llm", "timeout_s", 0.0, r"Timeout per call \(s\) \(llm.timeout_s\) must be more than 0, not 0"),
    ("llm", "temperature", 3.5, r"Temperature \(llm.temperature\) must be between 0 and 2, not 3.5"),
    ("graph", "duplicate_similarity", 1.5, r"graph.duplicate_similarity\) must be between 0 and 1"),
    ("vlm", "context_tokens", 5000, r"vlm.context_tokens\) must be between 0 and 4,000, not 5,000"),
    ("explorer", "max_nodes_limit", 30000, r"explorer.max_nodes_limit\) must be between 1 and 20,000"),
    ("store", "chroma_port", 70000, r"Chroma server port \(store.chroma_port\) must be between 1 and 65,535"),
])
def test_out_of_range_and_unknown_choices_are_refused_in_words(section, name, value, message):
    settings = Settings()
    setattr(getattr(settings, section), name, value)
    with pytest.raises(SettingsError, match=message):
        validate(settings)


@pytest.mark.parametrize("change, message", [
    ({"chunking": {"chunk_tokens": 100, "overlap_tokens": 100}}, "chunk overlap must be smaller than the chunk size"),
    ({"chunking": {"window_tokens": 16, "window_overlap": 16}}, "embedding windows must be at most 254 tokens"),
    ({"llm": {"provider": "openai", "base_url": "http://localhost:11434/v1"}},
     "an OpenAI-compatible LLM needs a base URL and a model name"),
    ({"vlm": {"provider": "openai", "model": "llava"}}, "an OpenAI-compatible VLM needs a base URL and a model"),
    ({"graph": {"entity_types": ["method", " "]}}, "entity types must be non-empty names"),
    ({"explorer": {"max_nodes": 600, "max_nodes_limit": 500}}, "explorer: the default view size"),
])
def test_rules_across_fields_say_what_is_wrong(change, message):
    settings = Settings()
    for section, values in change.items():
        for name, value in values.items():
            setattr(getattr(settings, section), name, value)
    with pytest.raises(SettingsError, match=message):
        validate(settings)


def test_the_limits_themselves_are_allowed():
    settings = Settings()
    settings.chunking.window_tokens, settings.chunking.window_overlap = 254, 253
    settings.graph.gleaning_rounds = 5
    settings.explorer.max_nodes = settings.explorer.max_nodes_limit = 20000
    settings.llm.timeout_s = 0.5
    settings.vlm.context_tokens = 0
    assert validate(settings) is settings


def test_each_settings_object_gets_its_own_entity_type_list():
    first, second = Settings(), Settings()
    first.graph.entity_types.append("protein")
    assert "protein" not in second.graph.entity_types
