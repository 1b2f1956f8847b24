"""The community mode's report vectors (core/query/community_search.py): after a communities refresh that rewrote
one report, the first question embeds that one report, not all of them again; the reports' findings are embedded
with them, once."""
from __future__ import annotations

import numpy as np
import pytest

from core.library import open_library
from core.query import community_search
from core.query.community_search import _ranked_reports, _text_vectors, report_text
from core.settings.config import Settings
from core.settings.workspace import Workspace


def _report(i: int, summary: str) -> dict:
    return {"community": i, "title": f"community {i}", "summary": summary, "rating": 5.0,
            "findings": [f"finding {i} a", f"finding {i} b"], "entities": []}


@pytest.mark.slow  # loads the embedding model
def test_a_refresh_embeds_only_the_reports_it_changed(tmp_path, monkeypatch):
    ws = Workspace(tmp_path / "ws").ensure()
    ws.save_settings(Settings())
    lib = open_library(ws)
    embedder = lib.embedder()
    embedded: list[str] = []
    real = embedder.embed

    def counting(texts, *args, **kwargs):  # the real model, counted
        embedded.extend(texts)
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(embedder, "embed", counting)
    reports = [_report(i, f"graph neural networks for topic {i}") for i in range(6)]
    lib.graph_sources.put_community_reports(reports, version="1")
    qvec = embedder.embed_query("graph neural networks for topic 3")
    first = _ranked_reports(lib, qvec)
    # The six reports and their twelve findings, in one load: the extractive map reads the findings per question.
    assert first[0][0]["community"] == 3 and len(embedded) == 6 + 12
    assert set(embedded) >= {f for r in reports for f in r["findings"]}

    embedded.clear()
    reports[2] = _report(2, "protein folding with transformers")
    lib.graph_sources.put_community_reports(reports, version="2")  # one more paper: one report rewritten
    second = _ranked_reports(lib, qvec)
    assert embedded == [report_text(reports[2])], "the five unchanged reports are not embedded again"
    assert [r["community"] for r, _ in second][0] == 3
    assert any(r["summary"].startswith("protein") for r, _ in second), "the new text is what is ranked"
    np.testing.assert_allclose(_text_vectors(lib, [report_text(reports[2])])[0],
                               real([report_text(reports[2])])[0], atol=1e-5)


@pytest.mark.slow  # loads the embedding model
def test_the_text_cache_is_bounded(tmp_path, monkeypatch):
    ws = Workspace(tmp_path / "ws").ensure()
    ws.save_settings(Settings())
    lib = open_library(ws)
    monkeypatch.setattr(community_search, "MAX_CACHED_TEXTS", 3)
    _text_vectors(lib, ["a", "b"])
    _text_vectors(lib, ["c", "d"])  # over the bound: the cache starts again from these
    cached = [texts for key, texts in community_search._TEXT_VECTORS.items() if key[0] == str(ws.root)][0]
    assert set(cached) == {"c", "d"}
