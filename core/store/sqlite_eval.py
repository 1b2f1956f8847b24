"""Question sets, runs and per-question results, kept in the workspace's SQLite file.

A run's results are written one question at a time, each in its own transaction, so a run cut short (crash,
cancel, app restart) keeps every question it finished and can be resumed; its row says how far it got.
"""
from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from core.schema.eval import RUNNING, EvalQuestion, QuestionResult, QuestionSet, RunRecord
from core.store.sqlite_db import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS eval_sets (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    questions TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS eval_runs (
    id TEXT PRIMARY KEY,
    set_id TEXT NOT NULL,
    set_name TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    status TEXT NOT NULL,
    modes TEXT NOT NULL,
    options TEXT NOT NULL,
    done INTEGER NOT NULL DEFAULT 0,
    total INTEGER NOT NULL DEFAULT 0,
    message TEXT NOT NULL DEFAULT '',
    cancel_requested INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS eval_results (
    run_id TEXT NOT NULL,
    question_id TEXT NOT NULL,
    mode TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (run_id, question_id, mode)
);
CREATE TABLE IF NOT EXISTS eval_pairwise (
    run_id TEXT NOT NULL,
    mode_a TEXT NOT NULL,
    mode_b TEXT NOT NULL,
    created_at REAL NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (run_id, mode_a, mode_b)
);
"""

@dataclass
class SQLiteEvalStore:
    db: Database
    _ready: bool = field(default=False, repr=False)

    def _ensure(self) -> None:
        if not self._ready:
            with self.db.connect() as conn:
                conn.executescript(SCHEMA)
            self._ready = True

    # ---- question sets
    def save_set(self, name: str, questions: list[EvalQuestion], source: str = "") -> QuestionSet:
        """Saves a set; the same name with the same questions again is the set already saved (uploading a file
        twice, or `core eval` on the same file, adds runs to one set's leaderboard instead of new sets)."""
        self._ensure()
        name = name.strip() or "questions"
        payload = json.dumps([q.to_dict() for q in questions], ensure_ascii=False)
        with self.db.transaction() as conn:
            row = conn.execute("SELECT * FROM eval_sets WHERE name = ? AND questions = ? ORDER BY created_at LIMIT 1",
                               (name, payload)).fetchone()
            if row:
                return self._set(row)
            record = QuestionSet(uuid.uuid4().hex[:12], name, source, time.time(), questions)
            conn.execute("INSERT INTO eval_sets VALUES (?, ?, ?, ?, ?)",
                         (record.id, record.name, source, record.created_at, payload))
        return record

    def update_set(self, set_id: str, questions: list[EvalQuestion], name: str | None = None) -> None:
        self._ensure()
        with self.db.transaction() as conn:
            conn.execute("UPDATE eval_sets SET questions = ?, name = COALESCE(?, name) WHERE id = ?",
                         (json.dumps([q.to_dict() for q in questions], ensure_ascii=False), name, set_id))

    def sets(self) -> list[QuestionSet]:
        self._ensure()
        with self.db.connect() as conn:
            rows = conn.execute("SELECT * FROM eval_sets ORDER BY created_at DESC").fetchall()
        return [self._set(r) for r in rows]

    def get_set(self, set_id: str) -> QuestionSet | None:
        self._ensure()
        with self.db.connect() as conn:
            row = conn.execute("SELECT * FROM eval_sets WHERE id = ?", (set_id,)).fetchone()
        return self._set(row) if row else None

    def delete_set(self, set_id: str) -> None:
        """The set goes; its runs stay, since their results carry the questions they asked."""
        self._ensure()
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM eval_sets WHERE id = ?", (set_id,))

    @staticmethod
    def _set(row) -> QuestionSet:
        return QuestionSet(row["id"], row["name"], row["source"], row["created_at"],
                           [EvalQuestion.from_dict(q) for q in json.loads(row["questions"])])

    # ---- runs
    def create_run(self, qset: QuestionSet, modes: list[str], options: dict[str, Any], total: int,
                   label: str = "") -> RunRecord:
        self._ensure()
        now = time.time()
        run = RunRecord(uuid.uuid4().hex[:12], qset.id, qset.name, label, now, now, RUNNING, list(modes),
                        options, 0, total)
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO eval_runs (id, set_id, set_name, label, created_at, updated_at, status, modes,"
                         " options, done, total) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (run.id, run.set_id, run.set_name, label, now, now, RUNNING, json.dumps(run.modes),
                          json.dumps(options), 0, total))
        return run

    def save_result(self, run_id: str, result: QuestionResult, done: int) -> None:
        """One question's result and the run's progress, together: the count never runs ahead of the rows."""
        self._ensure()
        with self.db.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO eval_results VALUES (?, ?, ?, ?)",
                         (run_id, result.question_id, result.mode, json.dumps(result.to_dict(), ensure_ascii=False)))
            conn.execute("UPDATE eval_runs SET done = ?, updated_at = ? WHERE id = ?", (done, time.time(), run_id))

    def set_status(self, run_id: str, status: str, message: str = "") -> None:
        self._ensure()
        with self.db.transaction() as conn:
            conn.execute("UPDATE eval_runs SET status = ?, message = ?, updated_at = ?, cancel_requested = 0 "
                         "WHERE id = ?", (status, message, time.time(), run_id))

    def touch(self, run_id: str, message: str = "") -> None:
        self._ensure()
        with self.db.transaction() as conn:
            conn.execute("UPDATE eval_runs SET updated_at = ?, message = ? WHERE id = ?",
                         (time.time(), message, run_id))

    def request_cancel(self, run_id: str) -> None:
        """Asks the run to stop after the question in hand; works across processes (app and CLI)."""
        self._ensure()
        with self.db.transaction() as conn:
            conn.execute("UPDATE eval_runs SET cancel_requested = 1 WHERE id = ? AND status = ?", (run_id, RUNNING))

    def cancel_requested(self, run_id: str) -> bool:
        self._ensure()
        with self.db.connect() as conn:
            row = conn.execute("SELECT cancel_requested FROM eval_runs WHERE id = ?", (run_id,)).fetchone()
        return bool(row and row[0])

    def rename_run(self, run_id: str, label: str) -> None:
        self._ensure()
        with self.db.transaction() as conn:
            conn.execute("UPDATE eval_runs SET label = ? WHERE id = ?", (label.strip(), run_id))

    def runs(self, set_id: str | None = None) -> list[RunRecord]:
        self._ensure()
        with self.db.connect() as conn:
            if set_id:
                rows = conn.execute("SELECT * FROM eval_runs WHERE set_id = ? ORDER BY created_at DESC",
                                    (set_id,)).fetchall()
            else:
                rows = conn.execute("SELECT * FROM eval_runs ORDER BY created_at DESC").fetchall()
        return [self._run(r) for r in rows]

    def get_run(self, run_id: str) -> RunRecord | None:
        self._ensure()
        with self.db.connect() as conn:
            row = conn.execute("SELECT * FROM eval_runs WHERE id = ?", (run_id,)).fetchone()
        return self._run(row) if row else None

    def delete_run(self, run_id: str) -> None:
        self._ensure()
        with self.db.transaction() as conn:
            for table in ("eval_results", "eval_pairwise"):
                conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
            conn.execute("DELETE FROM eval_runs WHERE id = ?", (run_id,))

    @staticmethod
    def _run(row) -> RunRecord:
        return RunRecord(row["id"], row["set_id"], row["set_name"], row["label"], row["created_at"],
                         row["updated_at"], row["status"], json.loads(row["modes"]), json.loads(row["options"]),
                         row["done"], row["total"], row["message"], bool(row["cancel_requested"]))

    def results(self, run_id: str) -> list[QuestionResult]:
        self._ensure()
        with self.db.connect() as conn:
            rows = conn.execute("SELECT payload FROM eval_results WHERE run_id = ? ORDER BY rowid",
                                (run_id,)).fetchall()
        return [QuestionResult.from_dict(json.loads(r[0])) for r in rows]

    def done_pairs(self, run_id: str) -> set[tuple[str, str]]:
        self._ensure()
        with self.db.connect() as conn:
            rows = conn.execute("SELECT question_id, mode FROM eval_results WHERE run_id = ?", (run_id,)).fetchall()
        return {(r[0], r[1]) for r in rows}

    # ---- pairwise verdicts
    def save_pairwise(self, run_id: str, mode_a: str, mode_b: str, payload: dict[str, Any]) -> None:
        self._ensure()
        with self.db.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO eval_pairwise VALUES (?, ?, ?, ?, ?)",
                         (run_id, mode_a, mode_b, time.time(), json.dumps(payload, ensure_ascii=False)))

    def pairwise(self, run_id: str) -> list[dict[str, Any]]:
        self._ensure()
        with self.db.connect() as conn:
            rows = conn.execute("SELECT payload FROM eval_pairwise WHERE run_id = ? ORDER BY created_at DESC",
                                (run_id,)).fetchall()
        return [json.loads(r[0]) for r in rows]

