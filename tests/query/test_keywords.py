"""The LLM-free keywords (entities for local and ppr, the question and its phrases for global), and the reader's
test of a compositional question and of the bridge entity a first-hop sentence gives."""
from __future__ import annotations

from core.query.keywords import spacy_keywords
from core.query.reading.chain import bridges, compositional

QUESTION = "Who directed the film that was shot in or around Leland, North Carolina in 1986?"


def test_low_level_keywords_are_the_names_and_phrases_of_the_question():
    keywords = spacy_keywords(QUESTION)
    assert {"Leland", "North Carolina", "film"} <= set(keywords.low)
    assert not {"Who", "the", QUESTION} & set(keywords.low)


def test_high_level_keywords_are_the_question_and_its_longer_phrases():
    # Relation-like text (a name with the relation words around it) found fewer evidence passages on hotpot than
    # the question's own wording (bench/query.py): global keeps LightRAG's high-level keywords.
    high = spacy_keywords(QUESTION).high
    assert high[0] == QUESTION and "North Carolina" in high


def test_compositional_questions_and_their_bridges():
    assert compositional(QUESTION) and compositional("Where was the inventor of the Zorbatron engine educated?")
    assert not compositional("How many unique paper nodes does the graph contain?")
    found = bridges("The Zorbatron engine was invented by Miriam Castellane in 1987.", "", "Who invented the "
                    "Zorbatron engine?")
    assert found == ["Miriam Castellane"]


def test_a_word_capitalised_only_because_it_starts_the_sentence_is_no_bridge():
    question = "Why is exact recovery impossible in the setting of the Okapi paper?"
    assert bridges("Further, the observed impacts on flows may be exaggerated.", "", question) == []
    assert bridges("However the master fails rarely.", "", question) == []
    assert bridges("For each query paper we construct up to 5 triples.", "", question) == []
    # a name after a capitalised function word, or starting the sentence on its own, still is one
    assert bridges("For SGC, we remove the test citations.", "", question) == ["SGC"]
    assert bridges("Metallica released the album in 1991.", "", question) == ["Metallica"]
    assert bridges("New York hosts the archive.", "", question) == ["New York"]
