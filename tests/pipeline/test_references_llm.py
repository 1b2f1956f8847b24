"""The LLM pass over reference lists, end to end on real ingests (builtin parser, real SQLite) against the local
OpenAI-protocol server: an entry the rules cannot read gets its title and year from the model and resolves to the
library paper; a reading not printed in the entry is refused; a garbage reply, an HTTP 500 or a timeout leaves the
rules' records and a ready paper; no LLM configured makes no request; a second refresh is served by the cache."""
from __future__ import annotations

import json
import re
from dataclasses import asdict

import pytest

from core.cli import main as cli_main
from core.content.pages import load_items
from core.library import open_library
from core.pipeline.documents import add_pdf
from core.pipeline.ingest import process_queue
from core.pipeline.references.entries import parse_references
from core.pipeline.references.llm_read import grounded_fields
from core.pipeline.references.resolve import refresh_references
from core.settings.workspace import WORKSPACE_ENV
from tests import pdfs
from tests.graph_papers import fast_workspace
from tests.openai_server import OpenAIReplayServer, Reply, last_user_message
from tests.references_papers import heliotrope_pdf

pytestmark = pytest.mark.slow  # a few builtin-parser ingests: ~10 s

# Printed in a shape the rules misread: no title found, and the page numbers taken for the year (1995), so the
# entry does not resolve to the heliotrope paper (2021) by its text.
UNREADABLE = ("[1] Lovelace A, Turing A and Hopper G: Heliotrope solvers for sparse zebrafish migration lattices; "
              "Imaginary Conf on Lattices, pages 1995-2003, 2021")
READABLE = "[2] Okapi Team. 2018. Okapi sampling for lattices. Journal of Imaginary Machines, 3(2):10–20."
PROMPT_START = "Read each numbered reference-list entry"


def citing_pdf(folder):
    folder.mkdir(parents=True, exist_ok=True)
    sections = [("Abstract", ["We study quokka lattices, building on heliotrope solvers [1] and okapi sampling [2]."]),
                ("1 Introduction", ["Heliotrope solvers [1] converge on sparse graphs; okapi sampling [2] does not."]),
                pdfs.references_section([UNREADABLE, READABLE])]
    return pdfs.make_paper_pdf(folder / "quokka.pdf", title="Quokka Lattices Beyond Heliotrope Solvers",
                               sections=sections, authors="Mary Somerville, Royal Institution", pages=1,
                               with_table=False, with_figure=False)


def numbered_entries(body) -> dict[int, str]:
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^(\d+)\. (.*)$", last_user_message(body), re.M)}


def reader(reading):
    """A model answering every entry of the request with reading(text) (a dict of fields, or None: nothing)."""
    def respond(body) -> Reply:
        entries = [{"n": n, "title": "", "authors": [], "year": None, "venue": "", "doi": "", **(reading(t) or {})}
                   for n, t in numbered_entries(body).items()]
        return Reply(json.dumps({"entries": entries}))
    return respond


def honest(text: str) -> dict | None:
    if "Heliotrope solvers" in text:
        return {"title": "Heliotrope solvers for sparse zebrafish migration lattices", "year": 2021,
                "authors": ["A. Lovelace", "A. Turing", "G. Hopper"], "venue": "Imaginary Conf on Lattices"}
    return None


def inventive(text: str) -> dict | None:
    if "Heliotrope solvers" in text:
        return {"title": "Quantum okapi herding in dense hypergraphs", "year": 2017, "doi": "10.1234/made.up",
                "authors": ["Noether"]}
    return None


def reference_calls(server) -> list:
    return [b for b in server.chat_requests if last_user_message(b).startswith(PROMPT_START)]


def workspace(tmp_path, server=None, monkeypatch=None, **llm):
    if server is not None:
        llm = {"provider": "openai", "base_url": server.url, "model": server.model, "max_retries": 0,
               "timeout_s": 5, **llm}
    ws = fast_workspace(tmp_path / "ws", **llm)
    if monkeypatch is not None:
        monkeypatch.setenv(WORKSPACE_ENV, str(ws.root))
    return open_library(ws)


def ingest(lib, server, pdf) -> str:
    """Ingest (the rules alone read the references: no LLM call holds the single writer) and then, as a user with
    an LLM would, `core refs refresh` the paper: the LLM pass."""
    doc_id = add_pdf(lib, pdf.name, pdf.read_bytes()).doc_id
    calls = len(server.chat_requests)
    (doc,) = process_queue(lib)
    assert doc.status == "ready", doc.message
    assert len(server.chat_requests) == calls, "the ingest commit made an LLM call"
    refresh_references(lib, [doc_id])
    return doc_id


def rules_only(lib, doc_id) -> list[dict]:
    return [asdict(r) for r in parse_references(doc_id, load_items(lib, doc_id))]


def stored(lib, doc_id) -> list[dict]:
    return [{**asdict(r), "cited_doc_id": ""} for r in lib.references.references(doc_id)]


def test_the_model_reads_an_entry_the_rules_cannot_and_it_resolves_then_a_refresh_is_served_by_the_cache(
        tmp_path, capsys, monkeypatch):
    with OpenAIReplayServer(default=reader(honest)) as server:
        lib = workspace(tmp_path, server, monkeypatch)
        heliotrope = ingest(lib, server, heliotrope_pdf(tmp_path / "pdfs"))
        quokka = ingest(lib, server, citing_pdf(tmp_path / "pdfs"))
        first, second = lib.references.references(quokka)
        assert first.title == "Heliotrope solvers for sparse zebrafish migration lattices" and first.year == 2021
        assert first.authors == ["Lovelace", "Turing", "Hopper"]
        assert first.llm_fields == ["authors", "title", "venue", "year"] and first.cited_doc_id == heliotrope
        assert second.llm_fields == [] and second.title == "Okapi sampling for lattices"
        sent = [numbered_entries(b) for b in reference_calls(server)]
        assert any(UNREADABLE[4:] in e.values() for e in sent)
        assert not any(READABLE[4:] in e.values() for e in sent), "an entry the rules read fully is not sent"

        assert cli_main(["refs", "show", quokka[:10]]) == 0
        out = capsys.readouterr().out
        assert f"IN LIBRARY {heliotrope[:12]}" in out and "(LLM: authors, title, venue, year)" in out

        calls = len(server.chat_requests)
        refresh_references(lib)
        refresh_references(lib)
        assert len(server.chat_requests) == calls, "the same entries again: every reply from the cache"
        assert lib.references.references(quokka)[0].cited_doc_id == heliotrope
        assert lib.references.references(quokka)[0].llm_fields == first.llm_fields


def test_a_reading_not_printed_in_the_entry_is_refused(tmp_path):
    with OpenAIReplayServer(default=reader(inventive)) as server:
        lib = workspace(tmp_path, server)
        quokka = ingest(lib, server, citing_pdf(tmp_path / "pdfs"))
        assert reference_calls(server), "the entry was sent"
        assert stored(lib, quokka) == rules_only(lib, quokka)
        assert all(r.llm_fields == [] for r in lib.references.references(quokka))


@pytest.mark.parametrize("reply", [Reply("Sure! Here are the entries: {entries: [n=1, title="), Reply(status=500),
                                   Reply(mode="stall")],
                         ids=["garbage", "http-500", "timeout"])
def test_a_failing_model_leaves_the_rules_records_and_the_paper_ready(tmp_path, reply):
    with OpenAIReplayServer(default=reply) as server:
        lib = workspace(tmp_path, server, timeout_s=1)
        quokka = ingest(lib, server, citing_pdf(tmp_path / "pdfs"))  # ready, or ingest() fails
        assert reference_calls(server)
        assert stored(lib, quokka) == rules_only(lib, quokka)
        assert lib.references.references(quokka)[0].title == "" and lib.references.references(quokka)[0].year == 1995
        # A refresh: a garbage reply is replayed from the cache, a failing endpoint is tried once, not per paper.
        calls = len(reference_calls(server))
        refresh_references(lib, [quokka, quokka, quokka])
        assert len(reference_calls(server)) - calls == (0 if reply.content else 1)
        assert stored(lib, quokka) == rules_only(lib, quokka)


def test_no_llm_configured_makes_no_request_and_the_rules_records_stand(tmp_path):
    with OpenAIReplayServer(default=reader(honest)) as server:
        # The endpoint is written in the settings, but the provider says none: nothing may reach it.
        lib = workspace(tmp_path, provider="none", base_url=server.url, model=server.model)
        heliotrope = ingest(lib, server, heliotrope_pdf(tmp_path / "pdfs"))
        quokka = ingest(lib, server, citing_pdf(tmp_path / "pdfs"))
        refresh_references(lib)
        assert server.requests == []
        first = lib.references.references(quokka)[0]
        assert first.title == "" and first.year == 1995 and first.llm_fields == []
        assert first.cited_doc_id != heliotrope, "the rules' reading alone does not find the paper"


def test_each_field_of_a_reply_is_checked_against_the_printed_entry():
    text = ("Lovelace A, Turing A: Heliotrope solvers for sparse lattices; Imaginary Conf, pages 1995-2003, 2021a. "
            "doi:10.5555/helio.2021")
    assert grounded_fields({"title": "Heliotrope\x00 solvers\u202e for sparse lattices", "year": 2021,
                            "authors": ["Ada Lovelace", "Kurt Gödel", 7], "doi": "https://doi.org/10.5555/HELIO.2021",
                            "venue": "Imaginary Conf"}, text) == {
        "title": "Heliotrope solvers for sparse lattices", "year": 2021, "year_suffix": "a",
        "authors": ["Lovelace"], "doi": "10.5555/helio.2021", "venue": "Imaginary Conf"}
    hostile = {"title": "x" * 600, "year": True, "authors": "Lovelace", "doi": "10.9999/other", "venue": ["a"]}
    assert grounded_fields(hostile, text) == {}
    # Printed, but as pages; and a title whose words are mostly not in the entry.
    assert grounded_fields({"year": 2003, "title": "Sparse lattices of dense okapi herds"}, text) == {}
    assert grounded_fields({"year": "2021"}, text) == {"year": 2021, "year_suffix": "a"}
    assert grounded_fields({"title": text}, text) == {}, "the whole entry is no title"


def test_a_table_made_before_the_llm_pass_gains_its_column(tmp_path):
    from core.store.sqlite_db import Database
    from core.store.sqlite_references import SCHEMA, SQLiteReferenceStore

    db = Database(tmp_path / "old.sqlite")
    old_schema = SCHEMA.replace("    llm_fields TEXT NOT NULL DEFAULT '',\n", "")
    assert "llm_fields" not in old_schema
    with db.connect() as conn:
        conn.executescript(old_schema)
        conn.execute("INSERT INTO paper_references (doc_id, idx, label, text, authors, title, year_suffix, venue, doi, "
                     "arxiv, page, title_key, text_key) VALUES ('d', 0, '', 'An entry.', '[]', '', '', '', '', '', 0, "
                     "'', 'anentry')")
    store = SQLiteReferenceStore(db)
    assert [(r.text, r.llm_fields) for r in store.references("d")] == [("An entry.", [])]
