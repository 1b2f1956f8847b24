"""A mode's own order fused with the reranker's (core.query.rerank.with_mode_order), and the mix route that uses it:
the reranker scores each passage alone against the question, so without the route's order it pushes the second
hop of a multi-hop question down."""
from __future__ import annotations

from core.query.records import RetrievedChunk
from core.query.rerank import with_mode_order
from core.query.routes import ROUTES
from core.schema.modes import Mode
from core.schema.records import Chunk, SearchHit


def _chunk(cid: str) -> RetrievedChunk:
    chunk = Chunk(id=cid, doc_id=cid.split(":")[0], index=0, kind="text", text=cid, pages=[0], item_indices=[0])
    return RetrievedChunk(hit=SearchHit(chunk=chunk, score=0.0, window_text=cid, page=0, bbox=None), score=0.0)


def _ids(chunks) -> list[str]:
    return [c.id for c in chunks]


def test_the_mode_order_lifts_a_passage_the_reranker_put_low_in_proportion_to_its_weight():
    reranked = [_chunk(c) for c in ("d:1", "d:2", "d:3", "d:4")]  # the reranker's order
    mode_order = ["d:4", "d:1", "d:2", "d:3"]  # the route put the bridge d:4 first
    assert _ids(with_mode_order(reranked, mode_order, 0.0)) == ["d:1", "d:2", "d:3", "d:4"]
    assert _ids(with_mode_order(reranked, mode_order, 1.0))[:2] == ["d:1", "d:4"]
    assert _ids(with_mode_order(reranked, mode_order, 3.0))[0] == "d:4"


def test_fused_scores_are_set_and_no_passage_is_lost_or_added():
    reranked = [_chunk(c) for c in ("a:1", "a:2", "a:3")]
    out = with_mode_order(reranked, ["a:3", "x:9", "a:2"], 2.0)
    assert sorted(_ids(out)) == ["a:1", "a:2", "a:3"]
    assert [c.score for c in out] == sorted((c.score for c in out), reverse=True)
    assert out[0].id == "a:3"


def test_mix_keeps_its_routes_order_against_the_reranker_and_single_routes_do_not():
    # mix (naive + local + ppr) is the fused route measured better with its order kept (bench/query.py hotpot).
    assert ROUTES[Mode.MIX].order_weight == 2.0
    assert all(ROUTES[m].order_weight == 0.0 for m in (Mode.NAIVE, Mode.LOCAL, Mode.GLOBAL, Mode.HYBRID))
