"""Question sets: read from JSONL, JSON or CSV, checked row by row, so a bad file is refused with a message for
each bad row instead of half-loaded.

Accepted columns: `question` (required), `answers` (a list or one string; `answer` also works), `evidence`
(reference passages: a list or one string), `doc_id` (a string or a list) and `id`. In CSV a cell holding
several answers or passages is a JSON list (`["a", "b"]`) or values separated by ` | `.
"""
from __future__ import annotations

import csv
import io
import json
import unicodedata
from dataclasses import dataclass
from typing import Any

from core.schema.eval import EvalQuestion
from core.text.questions import question_too_long
from core.text.safe_json import JsonLimitError, load_untrusted_json
from core.text.unicode import valid_unicode

MAX_QUESTIONS = 5000  # a run asks each question in every mode: beyond this a set is a mistake, not a benchmark
MAX_ROW_ERRORS = 50  # a file that is wrong everywhere: the first ones say enough
MAX_SET_CHARS = 50 * 2**20  # 5,000 questions with long reference passages fit in a few MB


@dataclass
class RowError:
    row: int  # 1-based line (JSONL, CSV counting the header as line 1) or item number (JSON)
    message: str

    def __str__(self) -> str:
        return f"row {self.row}: {self.message}"


class QuestionSetError(ValueError):
    """The file cannot be used as a question set; `errors` holds one message per bad row."""

    def __init__(self, message: str, errors: list[RowError] | None = None):
        self.errors = errors or []
        details = "; ".join(str(e) for e in self.errors[:5])
        more = f" (and {len(self.errors) - 5} more)" if len(self.errors) > 5 else ""
        super().__init__(f"{message}: {details}{more}" if details else message)


def parse_question_set(data: bytes | str, filename: str = "questions.jsonl") -> list[EvalQuestion]:
    """The questions of a JSONL, JSON or CSV file; raises QuestionSetError listing every bad row."""
    text = data.decode("utf-8-sig", errors="replace") if isinstance(data, bytes) else valid_unicode(data)
    if not text.strip():
        raise QuestionSetError("the file is empty")
    if len(text) > MAX_SET_CHARS:
        raise QuestionSetError(f"the file is {len(text):,} characters long; a question set may be at most "
                               f"{MAX_SET_CHARS:,}")
    name = filename.lower()
    if name.endswith(".csv"):
        rows = _csv_rows(text)
    elif name.endswith(".json") or (not name.endswith(".jsonl") and text.lstrip().startswith("[")):
        rows = _json_rows(text)
    else:
        rows = _jsonl_rows(text)
    return _validated(rows, filename)


def _validated(rows, filename: str) -> list[EvalQuestion]:
    questions: list[EvalQuestion] = []
    errors: list[RowError] = []
    seen: dict[str, int] = {}
    for number, row in rows:
        if len(errors) >= MAX_ROW_ERRORS:
            break
        if isinstance(row, RowError):
            errors.append(row)
            continue
        try:
            question = _question(row, default_id="")  # rows without an id get one below, clear of given ids
        except ValueError as exc:
            errors.append(RowError(number, str(exc)))
            continue
        if question.id and question.id in seen:
            errors.append(RowError(number, f"id {question.id!r} is already used by row {seen[question.id]}"))
            continue
        if question.id:
            seen[question.id] = number
        questions.append(question)
    if errors:
        raise QuestionSetError(f"{len(errors)} row(s) of {filename} cannot be used", errors)
    _number_unnamed(questions, set(seen))
    if not questions:
        raise QuestionSetError(f"{filename} holds no question")
    if len(questions) > MAX_QUESTIONS:
        raise QuestionSetError(f"{filename} holds {len(questions)} questions; the limit is {MAX_QUESTIONS}")
    return questions


def _number_unnamed(questions: list[EvalQuestion], taken: set[str]) -> None:
    """Rows without an id become q<position>, or the next free q<n> when the file already uses that one."""
    for position, question in enumerate(questions, start=1):
        if question.id:
            continue
        n = position
        while f"q{n}" in taken:
            n += 1
        question.id = f"q{n}"
        taken.add(question.id)


def _jsonl_rows(text: str):
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = load_untrusted_json(line, max_chars=MAX_SET_CHARS)
        except json.JSONDecodeError as exc:
            yield number, RowError(number, f"not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        except JsonLimitError as exc:
            yield number, RowError(number, f"cannot be read: {exc}")
            continue
        yield number, row


def _json_rows(text: str):
    try:
        rows = load_untrusted_json(text, max_chars=MAX_SET_CHARS)
    except json.JSONDecodeError as exc:
        raise QuestionSetError(f"the file is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except JsonLimitError as exc:
        raise QuestionSetError(f"the file cannot be read: {exc}") from None
    if isinstance(rows, dict) and isinstance(rows.get("questions"), list):
        rows = rows["questions"]
    if not isinstance(rows, list):
        raise QuestionSetError("a JSON question set is a list of objects (or {\"questions\": [...]})")
    yield from enumerate(rows, start=1)


def _csv_rows(text: str):
    # strict: an unterminated quote is an error, not one giant cell swallowing the rest of the file
    reader = csv.DictReader(io.StringIO(text), strict=True)
    try:
        columns = [c.strip().lower() for c in reader.fieldnames or []]
    except csv.Error as exc:
        raise QuestionSetError(f"the header row is not valid CSV ({exc})") from None
    if "question" not in columns:
        raise QuestionSetError(f"a CSV question set needs a 'question' column; found {', '.join(columns) or 'none'}")
    while True:
        start = reader.line_num + 1  # where the next row begins: a bad quote is reported where it opened
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield start, RowError(start, f"not valid CSV ({_csv_reason(exc)})")
            return  # the reader cannot find where the next row starts
        cleaned = {(k or "").strip().lower(): v for k, v in row.items() if k is not None}
        for column in ("answers", "answer", "evidence", "doc_id"):
            if cleaned.get(column):
                cleaned[column] = _split_cell(cleaned[column])
        yield reader.line_num, cleaned


def _csv_reason(exc: csv.Error) -> str:
    reason = str(exc)
    if "unexpected end of data" in reason or "EOF" in reason:
        return "a quoted cell opened on this row is never closed"
    return reason


def _split_cell(cell: str) -> list[str] | str:
    cell = cell.strip()
    if cell.startswith("["):
        try:
            value = json.loads(cell)
            if isinstance(value, list):
                return value
        except json.JSONDecodeError:
            pass
    return [part.strip() for part in cell.split(" | ")] if " | " in cell else cell


def _question(row: Any, default_id: str) -> EvalQuestion:
    if not isinstance(row, dict):
        raise ValueError(f"expected an object with a 'question', got {type(row).__name__}")
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("'question' is missing or empty")
    if not _visible(question):
        raise ValueError("'question' holds only invisible characters (zero-width spaces, joiners, marks)")
    if reason := question_too_long(" ".join(question.split())):
        raise ValueError(reason)
    answers = _strings(row.get("answers", row.get("answer")), "answers")
    evidence = _strings(row.get("evidence"), "evidence")
    doc_ids = _strings(row.get("doc_id"), "doc_id")
    qid = row.get("id")
    if qid is not None and not isinstance(qid, (str, int, float)):
        raise ValueError("'id' must be a string or a number")
    qid = str(qid).strip() if qid not in (None, "") else default_id
    return EvalQuestion(id=qid, question=" ".join(question.split()), answers=answers, evidence=evidence,
                        doc_id=" | ".join(doc_ids))


def _strings(value: Any, name: str) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
        raise ValueError(f"'{name}' must be a string or a list of strings")
    return [str(v).strip() for v in value if _visible(str(v))]  # a zero-width-only answer is no answer


def _visible(text: str) -> bool:
    """True when `text` holds a character that shows: not only spaces and format characters (category Cf:
    zero-width space and joiners, word joiner, BOM, soft hyphen), which str.strip() keeps."""
    return any(not ch.isspace() and unicodedata.category(ch) not in ("Cf", "Cc") for ch in text)


REFERENCE_FREE = ("no reference answer: only the reference-free metrics apply (retrieval against its evidence, "
                  "faithfulness, answer relevancy); EM, F1, contains_reference and the answer metrics are "
                  "reported missing for it, not 0")


def reference_free(questions: list[EvalQuestion]) -> list[RowError]:
    """The questions with no reference answer, one note each (numbered by position, named by id): accepted, but
    a reader must know their answer metrics will be missing."""
    return [RowError(n, f"{q.id}: {REFERENCE_FREE}") for n, q in enumerate(questions, start=1) if not q.answers]


def questions_from_table(rows: list[dict[str, Any]], source: str = "the table") -> list[EvalQuestion]:
    """Questions edited in a table (the page's editor): list cells hold values separated by ` | `. Checked like
    a file, so an edit cannot save a set a file could not."""
    cleaned = []
    for number, row in enumerate(rows, start=1):
        if not any(str(v or "").strip() for v in row.values()):
            continue  # the editor's empty new row
        row = {k: v for k, v in row.items() if v is not None}
        for column in ("answers", "evidence", "doc_id"):
            if isinstance(row.get(column), str):
                row[column] = _split_cell(row[column])
        cleaned.append((number, row))
    return _validated(cleaned, source)


def questions_to_table(questions: list[EvalQuestion]) -> list[dict[str, str]]:
    return [{"id": q.id, "question": q.question, "answers": " | ".join(q.answers),
             "evidence": " | ".join(q.evidence), "doc_id": q.doc_id} for q in questions]


def questions_to_jsonl(questions: list[EvalQuestion]) -> str:
    return "".join(json.dumps(q.to_dict(), ensure_ascii=False) + "\n" for q in questions)
