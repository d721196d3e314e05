"""tools/ranking/fusion.py: weighted reciprocal ranks and the boosts of named definitions."""

from dataclasses import replace

import pytest

from reactstep.tools.ranking.fusion import RetrievalConfig, boost_definitions, fuse_ranks
from reactstep.tools.ranking.names import query_names
from reactstep.tools.vector_store.store import VectorHit

NO_BOOSTS = RetrievalConfig(code_name_boost=0.0, plain_name_boost=0.0, name_overlap_boost=0.0)


def hit(point_id: str, symbol: str = "") -> VectorHit:
    return VectorHit(point_id, 0.0, {"symbol": symbol})


def test_reciprocal_ranks_are_weighted_and_scaled_to_the_weight() -> None:
    dense = [hit("a"), hit("b")]
    lexical = [hit("b"), hit("c")]
    fused = fuse_ranks([(1.0, dense), (0.5, lexical)])
    scores = {found.id: score for score, found in fused}
    assert [found.id for _, found in fused] == ["b", "a", "c"]
    assert scores["a"] == pytest.approx(1.0)  # first of the dense ranking: its weight
    assert scores["b"] == pytest.approx(61 / 62 + 0.5)
    assert scores["c"] == pytest.approx(0.5 * 61 / 62)


def test_a_chunk_defining_a_code_name_of_the_query_moves_up() -> None:
    fused = [
        (1.0, hit("a", "Client.send")),
        (0.9, hit("b", "Parser.parse_args")),
        (0.8, hit("c", "parse_args")),
    ]
    config = replace(NO_BOOSTS, code_name_boost=0.3)
    boosted = boost(fused, "why does `Parser.parse_args` fail", config)
    assert [(round(score, 6), found.id) for score, found in boosted] == [(1.2, "b"), (1.0, "a"), (0.95, "c")]


def test_plain_words_boost_only_a_whole_symbol_name() -> None:
    fused = [(1.0, hit("a", "get_redirect")), (0.95, hit("b", "redirect"))]
    boosted = boost(fused, "how does redirect work", replace(NO_BOOSTS, plain_name_boost=0.1))
    assert [found.id for _, found in boosted] == ["b", "a"]


def test_without_boosts_the_fused_order_stays() -> None:
    fused = [(1.0, hit("a", "x")), (0.5, hit("b", "redirect"))]
    assert boost(fused, "redirect `x`", NO_BOOSTS) == fused


def test_the_share_of_a_symbol_name_the_query_holds_adds_its_part() -> None:
    fused = [(1.0, hit("a", "delete_cookie")), (0.95, hit("b", "Response.set_cookie"))]
    boosted = boost(fused, "Sets a cookie", replace(NO_BOOSTS, name_overlap_boost=0.2))
    assert [(round(score, 6), found.id) for score, found in boosted] == [(1.15, "b"), (1.1, "a")]


def test_a_prose_query_gets_the_prose_weights_and_a_query_naming_code_the_usual_ones() -> None:
    config = RetrievalConfig()
    assert config.weights(query_names("how do I retry a failed request")) == (0.3, 0.2)
    for naming_code in ("where is `retry` called", "Client.send retries", "retry_request", "sendRequest"):
        assert config.weights(query_names(naming_code)) == (0.7, 0.5), naming_code
    custom = RetrievalConfig(prose_lexical_weight=0.0, prose_name_weight=0.1)
    assert custom.weights(query_names("how do I retry a failed request")) == (0.0, 0.1)


def boost(
    fused: list[tuple[float, VectorHit]], query: str, config: RetrievalConfig
) -> list[tuple[float, VectorHit]]:
    return boost_definitions(fused, query, query_names(query), config)
