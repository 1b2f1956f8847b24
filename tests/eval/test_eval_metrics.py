"""The evaluation metrics against values worked out by hand, and question sets read row by row."""
from __future__ import annotations

import json
import math

import pytest

from core.eval import metrics as m
from core.eval.questions import (
    MAX_ROW_ERRORS,
    QuestionSetError,
    parse_question_set,
    questions_to_jsonl,
    reference_free,
)

# ============================================================================================ answer metrics

def test_squad_normalisation_drops_case_punctuation_articles_and_extra_spaces():
    assert m.normalize_answer("  The  BooksCorpus, (a dataset)!  ") == "bookscorpus dataset"
    # "an" and "the" go only as whole words: "another" and "theory" keep their letters.
    assert m.normalize_answer("An other theory; another THE") == "other theory another"
    assert m.normalize_answer("") == "" and m.normalize_answer(None) == ""


def test_exact_match_is_one_when_any_reference_matches_after_normalisation():
    assert m.exact_match("the BooksCorpus.", ["Wikipedia", "BooksCorpus"]) == 1.0
    assert m.exact_match("BooksCorpus dataset", ["BooksCorpus"]) == 0.0  # an extra word is not exact
    assert m.exact_match("86.7", ["867"]) == 1.0  # SQuAD drops the point too: its known quirk, kept on purpose
    assert m.exact_match("anything", []) == 0.0


def test_token_f1_against_hand_computed_values():
    # pred "the masked language model" → [masked, language, model]; ref "a masked LM objective" →
    # [masked, lm, objective]; 1 token shared: P = 1/3, R = 1/3, F1 = 2·(1/9)/(2/3) = 1/3.
    assert m.token_f1("the masked language model", ["a masked LM objective"]) == pytest.approx(1 / 3)
    # A second reference [masked, language, model, objective] shares 3: P = 3/3, R = 3/4,
    # F1 = 2·0.75/1.75 = 6/7 — several references: the best one counts.
    assert m.token_f1("the masked language model", ["a masked LM objective", "Masked language-model objective"]
                      ) == pytest.approx(1 / 3)  # "language-model" loses its hyphen: one token "languagemodel"
    assert m.token_f1("the masked language model", ["a masked LM objective", "masked language model objective"]
                      ) == pytest.approx(6 / 7)
    # Repeated tokens count once per occurrence in both: pred [bert, bert, bert], ref [bert]: shared 1,
    # P = 1/3, R = 1, F1 = 2·(1/3)/(4/3) = 1/2.
    assert m.token_f1("BERT bert Bert", ["BERT"]) == pytest.approx(0.5)
    # Nothing left after normalisation on both sides ("a" vs "the") counts as equal; on one side only, as 0.
    assert m.token_f1("a", ["the"]) == 1.0
    assert m.token_f1("", ["BooksCorpus"]) == 0.0
    assert m.token_f1("BooksCorpus", ["Wikipedia"]) == 0.0


# ========================================================================================= passage matching

def test_a_passage_matches_across_case_whitespace_and_end_of_line_hyphenation():
    ranked = [
        "Introduction. Nothing to see here.",
        "We study RETRIE-\n  val augmented\n\ngeneration   over papers.",  # parser text: broken line, odd spaces
        "Retrieval augmented generation, again.",
    ]
    # Reference copied from a PDF viewer: joined word, single spaces, other case → found at rank 1 (0-based).
    assert m.passage_hits(["retrieval augmented generation over papers"], ranked) == [1]
    # The other way round: the reference carries the line break and hyphen, the chunk does not.
    assert m.passage_hits(["Retrie-\nval augmented generation, again."], ranked) == [2]
    # Soft hyphen (U+00AD) and the "fi" ligature (NFKC) are what PDF text is full of.
    assert m.passage_hits(["ﬁne-tuning with re\u00adtrieval"], ["Fine-tuning with retrieval works."]) == [0]
    # A hyphen inside a line is a real one: "pre-training" is not "pretraining".
    assert m.passage_hits(["pretraining"], ["pre-training objectives"]) == [None]
    # Not there, and an empty reference, match nothing.
    assert m.passage_hits(["retrieval augmented generation over cats", "  "], ranked) == [None, None]
    # The FIRST text holding it gives the rank, even when a later one holds it too.
    assert m.passage_hits(["augmented generation"], ranked) == [1]


def test_typographic_punctuation_and_ligatures_match_their_keyboard_forms_and_the_rule_is_recorded():
    pdf = ["The authors call it the \u201cfast\u201d path \u2014 it is \ufb01ne-tuned, not re\u00ad\ntrained.",
           "BERT\u2019s masked LM objective."]
    # Typed with straight quotes and a plain dash: not verbatim, found once normalised.
    assert m.passage_matches(['the "fast" path - it is fine-tuned, not retrained'], pdf) == [(0, m.MATCH_NORMALISED)]
    assert m.passage_matches(["BERT's masked LM"], pdf) == [(1, m.MATCH_NORMALISED)]
    # Copied from the PDF as it is: exact (whitespace runs aside).
    assert m.passage_matches(["BERT\u2019s  masked\nLM objective."], pdf) == [(1, m.MATCH_EXACT)]
    # The en dash and the minus sign are dashes too; NFKC unfolds the "fl" ligature.
    assert m.match_rule("pre-training \ufb02ow", "Pre\u2013training flow") == m.MATCH_NORMALISED
    assert m.match_rule("x - y", "x \u2212 y") == m.MATCH_NORMALISED


def test_the_90_percent_tokens_in_order_fallback_by_hand():
    # Word tokens (\w+) of the evidence: we pre train the model on a large corpus of books = 11, so a match needs
    # ceil(0.9 × 11) = 10 of them in order. The chunk drops "large" and adds a footnote mark "3": 10 of 11.
    evidence = "we pre-train the model on a large corpus of books"
    chunk = "Intro. We pre-train the model on a corpus 3 of books, then fine-tune it."
    assert m.match_rule(evidence, chunk) == m.MATCH_TOKENS  # 10 of 11 tokens in order
    dropped_two = "We pre-train the model on a corpus of novels, then fine-tune it."  # 9 of 11 < 10
    assert m.match_rule(evidence, dropped_two) == ""
    # In order: the same words shuffled do not match.
    assert m.match_rule(evidence, "books of corpus large a on model the train pre we") == ""
    # Close together: the words spread over a long text are not a match.
    spread = " ".join(f"{w} filler filler filler" for w in m.normalize_passage(evidence).replace("-", " ").split())
    assert m.match_rule(evidence, spread) == ""
    # The fallback only when no text holds it better: an exact hit at rank 2 beats a 90% hit at rank 0.
    assert m.passage_matches([evidence], [chunk, "nothing", f"x {evidence} y"]) == [(2, m.MATCH_EXACT)]
    assert m.passage_matches([evidence], [chunk, "nothing"]) == [(0, m.MATCH_TOKENS)]
    assert m.passage_hits([evidence], [chunk]) == [0]


def test_tokens_in_order_and_lcs_by_hand():
    assert m._lcs(list("abcde"), list("axbyd")) == 3  # a, b, d
    assert m.tokens_in_order(list("abcdefghij"), list("abcdefghiXj"))  # 10 of 10 within the window
    assert m.tokens_in_order(list("abcdefghij"), list("abcdefghi"))  # 9 of 10 = 90%
    assert not m.tokens_in_order(list("abcdefghij"), list("abcdefgh"))  # 8 of 10
    assert not m.tokens_in_order([], list("abc"))


def test_contains_reference_is_normalised_whole_word_containment():
    answer = "BERT is pre-trained on the \u201cBooksCorpus\u201d [1] and English Wikipedia."
    assert m.contains_reference([answer], ["BooksCorpus"]) == 1.0
    assert m.contains_reference([answer], ["the booksCorpus"]) == 1.0  # articles and case are SQuAD-normalised
    assert m.contains_reference([answer], ["Books"]) == 0.0  # a word, not a substring
    assert m.contains_reference(["", "English Wikipedia"], ["english wikipedia"]) == 1.0  # the short answer
    assert m.contains_reference([answer], ["Common Crawl", "Wikipedia"]) == 1.0  # any reference
    assert m.contains_reference([answer], [""]) == 0.0
    # EM and F1 of the same right answer as a paragraph: what contains_reference is there for.
    assert m.exact_match(answer, ["BooksCorpus"]) == 0.0
    assert m.token_f1(answer, ["BooksCorpus"]) == pytest.approx(2 * (1 / 9) * 1 / (1 / 9 + 1))
    assert m.exact_match("the \u2018BooksCorpus\u2019", ["BooksCorpus"]) == 1.0  # curly quotes are punctuation


# ======================================================================================== ranking metrics

def test_recall_and_complete_at_k_by_hand():
    hits = [0, 3, None]  # three reference passages: found at ranks 1 and 4 (1-based), one never
    assert m.recall_at_k(hits, 1) == pytest.approx(1 / 3)  # only rank 0 is < 1
    assert m.recall_at_k(hits, 3) == pytest.approx(1 / 3)  # rank 3 is the 4th: outside the top 3
    assert m.recall_at_k(hits, 4) == pytest.approx(2 / 3)
    assert m.recall_at_k(hits, 10) == pytest.approx(2 / 3)  # the third is never found
    assert m.complete_at_k(hits, 10) == 0.0  # one passage missing: incomplete at any K
    assert m.complete_at_k([0, 3], 4) == 1.0 and m.complete_at_k([0, 3], 3) == 0.0
    assert m.recall_at_k([], 5) is None and m.complete_at_k([], 5) is None


def test_mrr_uses_the_best_ranked_reference_passage():
    assert m.reciprocal_rank([0, 3, None]) == 1.0  # 1/(0+1)
    assert m.reciprocal_rank([None, 2]) == pytest.approx(1 / 3)  # 1/(2+1)
    assert m.reciprocal_rank([4, 1]) == pytest.approx(1 / 2)  # min rank 1 → 1/2
    assert m.reciprocal_rank([None, None]) == 0.0
    assert m.reciprocal_rank([]) is None


def test_ndcg_at_k_by_hand():
    # hits [0, 3, None], k = 5: DCG = 1/log2(0+2) + 1/log2(3+2) = 1 + 0.430677 = 1.430677;
    # ideal: min(3 passages, 5) = 3 ranks → 1/log2(2) + 1/log2(3) + 1/log2(4) = 1 + 0.630930 + 0.5 = 2.130930;
    # NDCG = 1.430677 / 2.130930 = 0.671386.
    assert m.ndcg_at_k([0, 3, None], 5) == pytest.approx(1.430677 / 2.130930, abs=1e-6)
    assert m.ndcg_at_k([0, 3, None], 5) == pytest.approx(0.671386, abs=1e-6)
    # Same hits, k = 2: rank 3 falls out → DCG = 1; ideal over 2 ranks = 1 + 0.630930 → 0.613147.
    assert m.ndcg_at_k([0, 3, None], 2) == pytest.approx(1 / (1 + 1 / math.log2(3)), abs=1e-9)
    assert m.ndcg_at_k([0, 3, None], 2) == pytest.approx(0.613147, abs=1e-6)
    # One passage at rank 2: DCG = 1/log2(4) = 0.5, ideal = 1 → 0.5.
    assert m.ndcg_at_k([2], 10) == pytest.approx(0.5)
    # Two passages at ranks 1 and 2 (0-based), k = 10: DCG = 1/log2(3) + 1/log2(4) = 1.130930;
    # ideal = 1 + 1/log2(3) = 1.630930 → 0.693426.
    assert m.ndcg_at_k([1, 2], 10) == pytest.approx(0.693426, abs=1e-6)
    # Both passages in the first chunk: DCG = 2 > ideal 1.630930 → capped at 1.
    assert m.ndcg_at_k([0, 0], 10) == 1.0
    assert m.ndcg_at_k([None], 10) == 0.0
    assert m.ndcg_at_k([], 10) is None


def test_evidence_in_context_is_the_share_of_passages_inside_the_assembled_context():
    context = ["BERT is pre-trained on the Books-\nCorpus dataset.", "RoBERTa trains on CC-News."]
    # "bookscorpus dataset" (hyphen at a line end joined) and "cc-news" are in; "wikipedia" is not → 2/3.
    assert m.evidence_in_context(["BooksCorpus dataset", "trains on CC-News", "Wikipedia"], context) \
        == pytest.approx(2 / 3)
    assert m.evidence_in_context(["GLUE"], []) == 0.0
    assert m.evidence_in_context([], context) is None


# ============================================================================================ question sets

def test_jsonl_rows_become_questions_with_defaults_and_hotpotqa_style_doc_ids():
    text = "\n".join([
        json.dumps({"id": "q-books", "question": "Which  dataset is\tBERT pre-trained on?",
                    "answers": ["BooksCorpus", " the BooksCorpus dataset "], "evidence": "BERT is pre-trained …"}),
        "",  # blank lines are skipped, not errors
        json.dumps({"question": "What does RoBERTa remove?", "answer": "next sentence prediction"}),
        json.dumps({"id": 7, "question": "Which two papers mention MultiNLI?", "answers": [86.7, "90.2"],
                    "doc_id": ["bert-id", "roberta-id"], "evidence": ["86.7 on MultiNLI", "90.2 accuracy"]}),
    ])
    questions = parse_question_set(text.encode(), "set.jsonl")
    assert [q.id for q in questions] == ["q-books", "q2", "7"]
    books, nsp, multi = questions
    assert books.question == "Which dataset is BERT pre-trained on?"  # whitespace collapsed
    assert books.answers == ["BooksCorpus", "the BooksCorpus dataset"] and books.evidence == ["BERT is pre-trained …"]
    assert nsp.answers == ["next sentence prediction"] and nsp.evidence == [] and nsp.doc_id == ""
    assert multi.answers == ["86.7", "90.2"] and multi.doc_id == "bert-id | roberta-id"
    # A byte-order mark (Excel, Notepad) is not part of the first row.
    assert parse_question_set(b"\xef\xbb\xbf" + text.encode(), "set.jsonl") == questions
    # Written back and read again: the same questions.
    assert parse_question_set(questions_to_jsonl(questions), "again.jsonl") == questions


def test_a_file_with_bad_rows_is_refused_with_every_row_number():
    lines = [
        json.dumps({"id": "a", "question": "Fine?", "answers": ["yes"]}),  # 1: good
        '{"id": "b", "question": "broken",',  # 2: not JSON
        json.dumps({"id": "c", "answers": ["no question"]}),  # 3: no question
        json.dumps({"id": "d", "question": "Dict answers?", "answers": {"text": "x"}}),  # 4: answers not str/list
        json.dumps({"id": "e", "question": "Null inside?", "answers": ["x", None]}),  # 5: a list of not-strings
        json.dumps({"id": "a", "question": "Same id again?", "answers": ["x"]}),  # 6: duplicate id
        json.dumps(["not", "an", "object"]),  # 7: not an object
        json.dumps({"id": "f", "question": "   ", "answers": ["x"]}),  # 8: empty question
        json.dumps({"id": "g", "question": "Good too", "evidence": ["p"]}),  # 9: good
    ]
    with pytest.raises(QuestionSetError) as caught:
        parse_question_set("\n".join(lines), "bad.jsonl")
    errors = caught.value.errors
    assert [e.row for e in errors] == [2, 3, 4, 5, 6, 7, 8]
    by_row = {e.row: e.message for e in errors}
    assert "not valid JSON" in by_row[2]
    assert "'question' is missing" in by_row[3] and "'question' is missing" in by_row[8]
    assert "'answers' must be a string or a list" in by_row[4] and "'answers'" in by_row[5]
    assert "'a' is already used by row 1" in by_row[6]
    assert "got list" in by_row[7]
    message = str(caught.value)
    assert message.startswith("7 row(s) of bad.jsonl cannot be used")
    assert "row 2:" in message and "(and 2 more)" in message  # five shown, the count of the rest


def test_a_file_wrong_everywhere_reports_only_its_first_bad_rows():
    with pytest.raises(QuestionSetError) as caught:
        parse_question_set("\n".join(["{not json"] * (MAX_ROW_ERRORS + 10)), "broken.jsonl")
    assert [e.row for e in caught.value.errors] == list(range(1, MAX_ROW_ERRORS + 1))


def test_rows_without_an_id_never_take_an_id_another_row_gives():
    # Row 1 names itself "q2"; row 2 has no id. The file is valid: row 2 must get an id of its own, not be
    # refused as a duplicate of a "q2" it never wrote.
    text = "\n".join([json.dumps({"id": "q2", "question": "First?"}), json.dumps({"question": "Second?"})])
    first, second = parse_question_set(text, "set.jsonl")
    assert first.id == "q2" and second.id != "q2" and second.question == "Second?"


def test_a_numeric_id_may_be_any_number():
    # The message for a bad id says "a string or a number": 1.5 is a number (a JSON id, a pandas CSV export).
    (question,) = parse_question_set(json.dumps({"id": 1.5, "question": "Which?"}), "set.jsonl")
    assert question.id == "1.5"


def test_csv_reads_pipe_separated_answers_and_json_list_cells():
    text = (
        "id,question,answers,evidence,doc_id\n"
        "c1,Which dataset is BERT pre-trained on?,BooksCorpus | Books Corpus,BERT is pre-trained,bert-id\n"
        'c2,What accuracy on MultiNLI?,"[""86.7"", ""90.2 accuracy""]","[""86.7 on MultiNLI"", ""a | b""]",'
        '"[""bert-id"", ""roberta-id""]"\n'
        'c3,"A question, with a comma?",single answer,,\n'
    )
    c1, c2, c3 = parse_question_set(text.encode(), "Set.CSV")
    assert c1.answers == ["BooksCorpus", "Books Corpus"] and c1.evidence == ["BERT is pre-trained"]
    assert c1.doc_id == "bert-id"
    # A JSON list cell is read as a list, and a " | " inside one of its items stays in that item.
    assert c2.answers == ["86.7", "90.2 accuracy"] and c2.evidence == ["86.7 on MultiNLI", "a | b"]
    assert c2.doc_id == "bert-id | roberta-id"
    assert c3.question == "A question, with a comma?" and c3.answers == ["single answer"] and c3.evidence == []


def test_csv_errors_count_the_header_as_line_one_and_need_a_question_column():
    text = "question,answers\nGood?,yes\n,missing question\nAlso good?,yes\n"
    with pytest.raises(QuestionSetError) as caught:
        parse_question_set(text, "set.csv")
    assert [(e.row, "'question' is missing" in e.message) for e in caught.value.errors] == [(3, True)]
    with pytest.raises(QuestionSetError, match="needs a 'question' column; found query, answers"):
        parse_question_set("query,answers\nWhat?,x\n", "set.csv")


def test_json_list_and_questions_object_are_read_and_other_json_is_refused():
    rows = [{"question": "First?", "answers": "one"}, {"question": "Second?", "answers": ["two"], "id": "s"}]
    from_list = parse_question_set(json.dumps(rows), "set.json")
    assert [(q.id, q.answers) for q in from_list] == [("q1", ["one"]), ("s", ["two"])]
    assert parse_question_set(json.dumps({"questions": rows}), "set.json") == from_list
    # No extension, but it looks like a JSON list: read as one.
    assert parse_question_set(json.dumps(rows), "pasted") == from_list
    with pytest.raises(QuestionSetError) as caught:  # JSON rows are counted from 1 by item
        parse_question_set(json.dumps([rows[0], {"answers": ["x"]}]), "set.json")
    assert [e.row for e in caught.value.errors] == [2]
    with pytest.raises(QuestionSetError, match="not valid JSON"):
        parse_question_set('[{"question": "cut', "set.json")
    with pytest.raises(QuestionSetError, match="a JSON question set is a list of objects"):
        parse_question_set('{"question": "one object"}', "set.json")
    with pytest.raises(QuestionSetError, match="holds no question"):
        parse_question_set("[]", "set.json")


def test_a_row_without_answers_is_flagged_and_a_zero_width_question_is_refused():
    rows = ('{"id": "a", "question": "Which corpus?", "answers": ["BooksCorpus"]}\n'
            '{"id": "b", "question": "What does the paper study?", "evidence": ["We study X."]}\n'
            '{"id": "c", "question": "Which year?", "answers": ["\u200b\u200d"]}\n')  # an invisible answer
    questions = parse_question_set(rows, "set.jsonl")
    flagged = reference_free(questions)
    assert [(e.row, e.message.split(":")[0]) for e in flagged] == [(2, "b"), (3, "c")]
    assert all("only the reference-free metrics" in e.message for e in flagged)
    assert questions[2].answers == []
    with pytest.raises(QuestionSetError) as caught:
        parse_question_set('{"question": "fine?"}\n{"question": "\u200b\u2060 \ufeff\u200c"}\n', "zw.jsonl")
    assert [(e.row, e.message) for e in caught.value.errors] == [
        (2, "'question' holds only invisible characters (zero-width spaces, joiners, marks)")]


@pytest.mark.parametrize("data", [b"", b"   \n\n  ", b"\xef\xbb\xbf\n", ""])
def test_an_empty_file_is_refused_clearly(data):
    with pytest.raises(QuestionSetError, match="the file is empty") as caught:
        parse_question_set(data, "empty.jsonl")
    assert caught.value.errors == []
