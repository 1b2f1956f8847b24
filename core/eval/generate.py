"""Question sets written by the LLM from the workspace's own papers, for the user to review before a run.

Two schemes:
- from chunks: one factual question per sampled passage, with a short reference answer and the passage as
  evidence, so every metric (answer and retrieval) applies;
- personas (LightRAG's scheme): potential users of the collection, their tasks, and high-level questions
  that need the whole collection; no reference answer, for the pairwise judge.

Both return a `GeneratedQuestions`: a list of EvalQuestion that also says what was dropped and why, and
where each question came from.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Any

from core.library import Library
from core.models.llm.base import ChatModel, LLMError
from core.prompts import PROMPTS
from core.schema.eval import EvalQuestion
from core.schema.records import Chunk
from core.text.json_reply import excerpt, key_lookup, read_json_object

NEEDS_LLM = "generating questions needs an LLM: set one on the Settings page"
MIN_PASSAGE_WORDS = 25  # shorter chunks (a heading, a caption line) rarely hold a fact worth a question
MAX_PASSAGE_CHARS = 6000  # a chunk is at most ~1,200 tokens; this only guards odd chunks
MAX_COLLECTION_CHARS = 3500  # the collection description sent in the persona prompts
MAX_PER_LEVEL = 10  # users, tasks and questions per task
STOP_AFTER_FAILED_CALLS = 3  # calls failing in a row (the LLM is down): stop instead of waiting on each timeout

ProgressFn = Callable[[int, int], None]  # (calls done, calls planned)


class GeneratedQuestions(list):
    """The generated EvalQuestions (it is a list of them), with `dropped`: one reason per reply that gave no
    question, `origins`: question id -> where it came from (paper and section, or user and task), and
    `stopped`: why generation ended early ("" when it did not)."""

    def __init__(self, questions: Iterable[EvalQuestion] = ()):
        super().__init__(questions)
        self.dropped: list[str] = []
        self.origins: dict[str, str] = {}
        self.stopped = ""


# --- from chunks --------------------------------------------------------------------------------------------

def generate_from_chunks(lib: Library, llm: ChatModel | None, n: int, doc_ids: list[str] | None = None,
                         seed: int = 0, on_progress: ProgressFn | None = None) -> GeneratedQuestions:
    """Up to n questions, one per sampled text chunk, the chunks spread over the papers (round-robin over the
    papers in a seeded order). The same seed and papers give the same sample."""
    if llm is None:
        raise ValueError(NEEDS_LLM)
    if n < 1:
        raise ValueError(f"the number of questions must be at least 1 (got {n})")
    papers = _ready_papers(lib, doc_ids)
    titles = {doc_id: title for doc_id, title in papers}
    chunks = sample_chunks(lib, [doc_id for doc_id, _ in papers], n, seed)
    if not chunks:
        raise ValueError(f"the chosen papers have no text passage of at least {MIN_PASSAGE_WORDS} words to ask about")
    out = GeneratedQuestions()
    failed_in_a_row = 0
    seen: set[str] = set()
    for done, chunk in enumerate(chunks):
        where = f"{titles[chunk.doc_id]}, section {chunk.section!r}" if chunk.section else titles[chunk.doc_id]
        try:
            reply = llm.chat([{"role": "user", "content": PROMPTS["eval_question_from_passage"].format(
                title=titles[chunk.doc_id], section=chunk.section or "-", passage=chunk.text[:MAX_PASSAGE_CHARS])}],
                purpose="eval_question", response_format={"type": "json_object"}, max_tokens=300, temperature=0.0)
        except LLMError as exc:
            failed_in_a_row += 1
            out.dropped.append(f"{chunk.id}: the call failed: {exc}")
            if failed_in_a_row >= STOP_AFTER_FAILED_CALLS and done + 1 < len(chunks):
                out.stopped = (f"stopped after {done + 1} of {len(chunks)} passages: the LLM failed "
                               f"{failed_in_a_row} times in a row")
                break
            continue
        finally:
            if on_progress:
                on_progress(done + 1, len(chunks))
        failed_in_a_row = 0
        question, answer, problem = _read_question(reply.text)
        if problem:
            out.dropped.append(f"{chunk.id}: {problem}")
            continue
        if question.casefold() in seen:
            out.dropped.append(f"{chunk.id}: the same question as another passage: {question!r}")
            continue
        seen.add(question.casefold())
        qid = f"gen-{chunk.doc_id[:10]}-{chunk.index}"
        out.append(EvalQuestion(id=qid, question=question, answers=[answer], evidence=[chunk.text],
                                doc_id=chunk.doc_id))
        out.origins[qid] = where
    return out


def sample_chunks(lib: Library, doc_ids: list[str], n: int, seed: int = 0) -> list[Chunk]:
    """n text chunks of at least MIN_PASSAGE_WORDS words, taken in turn from each paper (papers and each
    paper's chunks in a seeded random order), so a long paper does not crowd out the others."""
    rng = random.Random(seed)
    pools: list[list[Chunk]] = []
    for doc_id in sorted(doc_ids):
        usable = [c for c in lib.chunks.by_doc(doc_id) if c.kind == "text" and len(c.text.split()) >= MIN_PASSAGE_WORDS]
        rng.shuffle(usable)
        if usable:
            pools.append(usable)
    rng.shuffle(pools)
    picked: list[Chunk] = []
    while len(picked) < n and any(pools):
        for pool in pools:
            if pool and len(picked) < n:
                picked.append(pool.pop())
    return picked


def _read_question(text: str) -> tuple[str, str, str]:
    """(question, answer, "") or ("", "", why the reply gives no question)."""
    data = read_json_object(text)
    if data is None:
        return "", "", f"the reply is not JSON: {excerpt(text)!r}"
    question = " ".join(str(key_lookup(data, "question") or "").split())
    answer = key_lookup(data, "answer", "reference_answer", "short_answer")
    if isinstance(answer, list):
        answer = answer[0] if answer else ""
    answer = " ".join(str(answer or "").split())
    if not question:
        return "", "", "the model found no question in the passage"
    if not answer:
        return "", "", f"the question has no answer: {question!r}"
    return question, answer, ""


# --- personas -----------------------------------------------------------------------------------------------

def generate_personas(lib: Library, llm: ChatModel | None, users: int = 3, tasks: int = 3, questions: int = 3,
                      on_progress: ProgressFn | None = None) -> GeneratedQuestions:
    """users × tasks × questions high-level questions (fewer when the model gives fewer): one call for the
    users and their tasks, then one call per user for their questions."""
    if llm is None:
        raise ValueError(NEEDS_LLM)
    for name, value in (("users", users), ("tasks", tasks), ("questions", questions)):
        if not 1 <= value <= MAX_PER_LEVEL:
            raise ValueError(f"{name} must be between 1 and {MAX_PER_LEVEL} (got {value})")
    collection = describe_collection(lib)
    out = GeneratedQuestions()
    total = 1 + users
    try:
        reply = llm.chat([{"role": "user", "content": PROMPTS["eval_personas_users"].format(
            collection=collection, users=users, tasks=tasks)}], purpose="eval_personas",
            response_format={"type": "json_object"}, max_tokens=200 + 60 * users * (tasks + 1), temperature=0.0)
    except LLMError as exc:
        out.stopped = f"the call for the users failed: {exc}"
        return out
    finally:
        if on_progress:
            on_progress(1, total)
    personas = _read_personas(reply.text, users, tasks)
    if not personas:
        out.stopped = f"the reply names no user with a task: {excerpt(reply.text)!r}"
        return out
    total = 1 + len(personas)
    for u, (user, user_tasks) in enumerate(personas, start=1):
        try:
            per_task, problem = _questions_for(llm, collection, user, user_tasks, questions)
        finally:
            if on_progress:
                on_progress(1 + u, total)
        if problem:
            out.dropped.append(f"user {u} ({user}): {problem}")
        for t, (task, asked) in enumerate(zip(user_tasks, per_task), start=1):
            if not asked and not problem:
                out.dropped.append(f"user {u} ({user}), task {t}: no question")
            for q, question in enumerate(asked, start=1):
                qid = f"persona-u{u}-t{t}-q{q}"
                out.append(EvalQuestion(id=qid, question=question, answers=[], evidence=[]))
                out.origins[qid] = f"User: {user} / Task: {task}"
    return out


def _questions_for(llm: ChatModel, collection: str, user: str, user_tasks: list[str], questions: int
                   ) -> tuple[list[list[str]], str]:
    """Questions per task of one user: one call for all the tasks, then one call for each task the reply left
    without questions (small models often answer the first task only). The problem, if any, is returned."""
    per_task: list[list[str]] = [[] for _ in user_tasks]
    problem = ""
    pending = list(range(len(user_tasks)))
    for attempt in ("all", "each"):
        groups = [pending] if attempt == "all" else [[t] for t in pending]
        for group in groups:
            task_list = "\n".join(f"{i}. {user_tasks[t]}" for i, t in enumerate(group, start=1))
            try:
                reply = llm.chat([{"role": "user", "content": PROMPTS["eval_personas_questions"].format(
                    collection=collection, user=user, task_list=task_list, questions=questions)}],
                    purpose="eval_personas", response_format={"type": "json_object"},
                    max_tokens=200 + 60 * len(group) * questions, temperature=0.0)
            except LLMError as exc:
                return per_task, f"the call failed: {exc}"
            read = _read_task_questions(reply.text, len(group), questions)
            if read is None:
                problem = f"the reply is not readable: {excerpt(reply.text)!r}"
                continue
            for t, asked in zip(group, read):
                per_task[t] = per_task[t] or asked
        pending = [t for t in pending if not per_task[t]]
        if not pending or len(user_tasks) == 1:
            break
    return per_task, problem if not any(per_task) else ""


def describe_collection(lib: Library, max_chars: int = MAX_COLLECTION_CHARS) -> str:
    """The ready papers' titles, each followed by the start of its first real passage (most often the abstract)
    when there is room, within about max_chars: enough for a model to guess who would read the collection,
    small enough for any model. Past max_chars // 40 papers, only that many titles are listed."""
    papers = _ready_papers(lib, None)
    shown = papers[:max(1, max_chars // 40)]
    per_paper = max_chars // len(shown) - 3
    lines = [f"{len(papers)} papers:"]
    for doc_id, title in shown:
        line = f"- {_cut(title, per_paper)}"
        room = per_paper - len(line) - 2
        if room > 40:
            opening = _opening(lib, doc_id)
            line += f": {_cut(opening, room)}" if opening else ""
        lines.append(line)
    if len(shown) < len(papers):
        lines.append(f"- and {len(papers) - len(shown)} more papers")
    return "\n".join(lines)


def _opening(lib: Library, doc_id: str) -> str:
    """The first text passage long enough to say something, without its section heading."""
    for chunk in lib.chunks.by_doc(doc_id):
        if chunk.kind == "text" and len(chunk.text.split()) >= MIN_PASSAGE_WORDS:
            head, _, rest = chunk.text.partition("\n")
            text = rest if chunk.section and head.strip() == chunk.section.strip() else chunk.text
            return " ".join(text.split())
    return ""


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:max(1, limit - 1)].rsplit(" ", 1)[0] + "…"


def _read_personas(text: str, users: int, tasks: int) -> list[tuple[str, list[str]]]:
    data = read_json_object(text)
    if data is None:
        return []
    entries = key_lookup(data, "users", "personas")
    personas: list[tuple[str, list[str]]] = []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict):
            user = _one_line(key_lookup(entry, "user", "description", "name", "persona"))
            raw_tasks = key_lookup(entry, "tasks")
            user_tasks = [_one_line(t.get("task") if isinstance(t, dict) else t)
                          for t in (raw_tasks if isinstance(raw_tasks, list) else [])]
            user_tasks = [t for t in user_tasks if t][:tasks]
            if user and user_tasks:
                personas.append((user, user_tasks))
    return personas[:users]


def _read_task_questions(text: str, task_count: int, questions: int) -> list[list[str]] | None:
    """Questions per task, in the tasks' order (by the "task" number when the model gives one)."""
    data = read_json_object(text)
    entries = key_lookup(data, "tasks") if data is not None else None
    if not isinstance(entries, list):
        return None
    per_task: list[list[str]] = [[] for _ in range(task_count)]
    for position, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        index = _task_index(key_lookup(entry, "task"), position, task_count)
        raw = key_lookup(entry, "questions")
        asked = [_one_line(q.get("question") if isinstance(q, dict) else q)
                 for q in (raw if isinstance(raw, list) else [])]
        if index is not None and not per_task[index]:
            per_task[index] = list(dict.fromkeys(q for q in asked if q))[:questions]
    return per_task


def _task_index(value: Any, position: int, task_count: int) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= task_count:
        return value - 1
    if isinstance(value, str) and value.strip().isdigit() and 1 <= int(value) <= task_count:
        return int(value) - 1
    return position if position < task_count else None


def _one_line(value: Any) -> str:
    return " ".join(str(value or "").split())


def _ready_papers(lib: Library, doc_ids: list[str] | None) -> list[tuple[str, str]]:
    """(doc id, title) of the ready papers, narrowed to doc_ids when given; a clear error when none is left."""
    ready = {d.id for d in lib.documents.ready_papers()}
    if doc_ids is not None:
        if not doc_ids:
            raise ValueError("choose at least one paper (or none, for all of them)")
        unknown = [d for d in doc_ids if d not in ready]
        if unknown:
            raise ValueError(f"{len(unknown)} of the chosen papers are not in the library or not ready: "
                             f"{', '.join(d[:12] for d in unknown[:5])}")
        ready = set(doc_ids)
    if not ready:
        raise ValueError("no paper is ready: add papers on the Library page and wait for them to be indexed")
    papers = []
    for doc_id in sorted(ready):
        doc = lib.documents.get(doc_id)
        papers.append((doc_id, doc.display_title if doc else doc_id[:12]))
    return papers
