"""Online metadata enrichment (core.pipeline.metadata.enrich through core.models.scholarly's one client) against a
real local HTTP server speaking Crossref's and OpenAlex's JSON (tests.scholarly_server): off by default and then not
one request; a DOI fills the authors, a close title match the DOI and year, a poor one is refused; timeouts and 429
with Retry-After are retried; the cache answers a repeated request; hostile replies are bounded and stripped; hand
corrections stay."""
from __future__ import annotations

import json

import pytest

from core.cli import main as cli_main
from core.library import open_library
from core.models.scholarly import OnlineDisabled, ScholarlyClient, ServiceError
from core.pipeline.metadata.enrich import enrich
from core.schema.metadata import MAX_CHARS, PaperMetadata
from core.settings.config import Settings
from core.settings.workspace import WORKSPACE_ENV, Workspace
from tests.scholarly_server import ScholarlyServer, crossref_work, openalex_work

DOI = "10.1234/marigold.2022"
TITLE = "Marigold Lattices Revisited for Sparse Larvae Graphs"
ABSTRACT = "We revisit marigold lattices for the sparse migration graphs of zebrafish larvae."
DOC = "d" * 64


@pytest.fixture
def server():
    with ScholarlyServer() as s:
        s.crossref[DOI] = crossref_work(DOI, TITLE, [("Charles", "Babbage"), ("Ada", "Lovelace")], 2022,
                                        "Proceedings of the Imaginary Workshop on Larvae")
        s.openalex[DOI] = openalex_work(DOI, TITLE, ["Charles Babbage", "Ada Lovelace"], 2022, ABSTRACT)
        yield s


def library(tmp_path, server=None, on=True, **config):
    ws = Workspace(tmp_path / "ws").ensure()
    settings = Settings()
    settings.metadata.online_enrichment = on
    if server is not None:
        settings.metadata.crossref_url = server.url + "/crossref"
        settings.metadata.openalex_url = server.url + "/openalex"
    for key, value in {"timeout_s": 0.5, **config}.items():
        setattr(settings.metadata, key, value)
    ws.save_settings(settings)
    return open_library(ws)


def paper(lib, **fields) -> str:
    lib.metadata.put_extracted(PaperMetadata(doc_id=DOC, sources={k: "first page" for k in fields}, **fields))
    return DOC


def client(lib, waits=None):
    sleep = waits.append if waits is not None else (lambda seconds: None)
    return ScholarlyClient(lib.settings.metadata, lib.web_cache, sleep=sleep)


def test_off_by_default_no_request_is_made(tmp_path, server, monkeypatch, capsys):
    assert Settings().metadata.online_enrichment is False
    ws = Workspace(tmp_path / "ws").ensure()
    settings = Settings()  # off, but pointed at the server: a request would show
    settings.metadata.crossref_url, settings.metadata.openalex_url = server.url + "/crossref", server.url + "/openalex"
    ws.save_settings(settings)
    lib = open_library(ws)
    paper(lib, title=TITLE, doi=DOI)
    with pytest.raises(OnlineDisabled):
        enrich(lib, [DOC])
    with pytest.raises(OnlineDisabled):
        ScholarlyClient(lib.settings.metadata, lib.web_cache)
    monkeypatch.setenv(WORKSPACE_ENV, str(tmp_path / "ws"))
    assert cli_main(["meta", "enrich"]) == 2 and "off" in capsys.readouterr().err
    assert server.requests == [] and lib.metadata.get(DOC).authors == []


def test_a_doi_fills_the_authors_and_openalex_the_abstract_hand_corrections_stay(tmp_path, server):
    lib = library(tmp_path, server, contact_email="lab@example.org")
    paper(lib, title=TITLE, doi=DOI)
    lib.metadata.set_field(DOC, "venue", "Workshop on Larvae (typed by hand)", "manual")
    (report,) = enrich(lib, [DOC])
    meta = lib.metadata.get(DOC)
    assert meta.authors == ["Charles Babbage", "Ada Lovelace"] and meta.year == 2022 and meta.abstract == ABSTRACT
    assert report.filled == {"authors": "crossref", "year": "crossref", "abstract": "openalex"}
    assert meta.sources["authors"] == "crossref" and meta.sources["abstract"] == "openalex"
    assert meta.venue == "Workshop on Larvae (typed by hand)" and meta.sources["venue"] == "manual"
    # A re-parse replaces only what extractors wrote: the enriched fields stay.
    lib.metadata.put_extracted(PaperMetadata(doc_id=DOC, title=TITLE, doi=DOI, authors=["C. B."],
                                             sources={"title": "first page", "doi": "doi pattern", "authors": "x"}))
    assert lib.metadata.get(DOC).authors == ["Charles Babbage", "Ada Lovelace"]
    # Polite: the contact e-mail in the User-Agent and as mailto, and nowhere in the cache.
    _, query, headers = server.requests[0]
    assert "mailto:lab@example.org" in headers["User-Agent"] and query["mailto"] == ["lab@example.org"]
    with lib.db.connect() as conn:
        assert "example.org" not in json.dumps([list(r) for r in conn.execute("SELECT * FROM web_cache")])


def test_a_close_title_match_fills_doi_and_year_and_a_poor_one_is_refused(tmp_path, server):
    lib = library(tmp_path, server, services="crossref")
    paper(lib, title="Marigold lattices revisited for sparse larvae graphs.")
    (report,) = enrich(lib, [DOC])
    meta = lib.metadata.get(DOC)
    assert (meta.doi, meta.year, meta.sources["doi"]) == (DOI, 2022, "crossref"), report

    other = library(tmp_path / "b", server, services="crossref")
    other.metadata.put_extracted(PaperMetadata(doc_id=DOC, title="Heliotrope solvers for zebrafish migration",
                                               sources={"title": "first page"}))
    (report,) = enrich(other, [DOC])
    assert report.filled == {} and any("refused" in n for n in report.notes)
    assert other.metadata.get(DOC).doi == ""


def test_timeouts_and_429_with_retry_after_are_retried_and_a_long_wait_gives_up(tmp_path, server):
    lib = library(tmp_path, server, services="crossref", retries=3, max_wait_s=5)
    paper(lib, title=TITLE, doi=DOI)
    server.script.extend([(200, {}, "{}", 1.5), (429, {"Retry-After": "2"}, "{}", 0)])  # a timeout, then a 429
    waits: list[float] = []
    c = client(lib, waits)
    (report,) = enrich(lib, [DOC], client=c)
    assert report.filled.get("authors") == "crossref" and c.calls == 3
    assert waits[1] == 2.0, "the 429's Retry-After is honoured"

    server.script.append((429, {"Retry-After": "3600"}, "{}", 0))
    with pytest.raises(ServiceError, match="wait 3600"):
        client(lib, []).get("crossref", "/works/10.9/other")


def test_the_cache_answers_a_repeated_request_without_a_call(tmp_path, server):
    lib = library(tmp_path, server)
    paper(lib, title=TITLE, doi=DOI)
    enrich(lib, [DOC])
    sent = len(server.requests)
    lib.metadata.put_extracted(PaperMetadata(doc_id=DOC, title=TITLE, doi=DOI, sources={"title": "first page"}))
    c = client(lib)
    enrich(lib, [DOC], client=c)
    assert len(server.requests) == sent and c.calls == 0


def test_hostile_replies_are_bounded_stripped_and_refused(tmp_path, server):
    hostile = crossref_work(DOI, TITLE, [("<script>alert(1)</script>Eve", "Mallory" * 200)], 2022,
                            "<b>Venue</b> &amp; more" + "x" * 10_000, abstract="<jats:p>" + "A" * 50_000 + "</jats:p>")
    hostile["issued"] = {"date-parts": [["2022", "x"]]}  # a year of the wrong type
    server.crossref[DOI] = hostile
    server.openalex[DOI] = {"doi": 12, "authorships": "nobody", "publication_year": True,
                            "abstract_inverted_index": ["not", "a", "dict"]}
    lib = library(tmp_path, server)
    paper(lib, title=TITLE, doi=DOI)
    (report,) = enrich(lib, [DOC])
    meta = lib.metadata.get(DOC)
    assert "<" not in meta.authors[0] and len(meta.authors[0]) <= MAX_CHARS["authors"]
    assert meta.venue.startswith("Venue & more") and len(meta.venue) <= MAX_CHARS["venue"]
    assert len(meta.abstract) <= MAX_CHARS["abstract"] and "jats" not in meta.abstract
    assert meta.year is None, "a string year is not taken"

    lib2 = library(tmp_path / "b", server, services="crossref")
    paper(lib2, title=TITLE, doi=DOI)
    server.script.append((200, {"Content-Type": "text/html"}, "<html><script>x</script></html>", 0))
    server.script.append((200, {}, json.dumps({"message": "x" * 3_000_000}), 0))
    (report,) = enrich(lib2, [DOC], client=client(lib2, []))
    assert report.filled == {} and "other than JSON" in report.notes[0]
    (report,) = enrich(lib2, [DOC], client=client(lib2, []))
    assert report.filled == {} and "over 2,000,000 bytes" in report.notes[0]
