"""How code_search combines its rankings: the weights, the fusion and the boosts of named definitions.

The weights, the fusion and the boosts come from bench/retrieval_quality.py and bench/fusion_sweep.py,
chosen on attrs, httpx and jinja2, never tuned per query.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from reactstep.tools.embedding.sparse import tokenize
from reactstep.tools.ranking.names import QueryNames, definition_match, name_overlap
from reactstep.tools.vector_store.store import VectorHit

Mode = Literal["hybrid", "dense", "lexical"]
Fusion = Literal["score", "rrf"]
RRF_K = 60


@dataclass(frozen=True)
class RetrievalConfig:
    """How code_search ranks: which rankings, and how much each counts."""

    mode: Mode = "hybrid"
    dense_weight: float = 1.0
    lexical_weight: float = 0.7
    name_weight: float = 0.5  # the ranking of the chunks' name vectors (symbol and parameters), hybrid only
    # Chosen by bench/fusion_sweep.py over 5 packages x 2 query sets (mean MRR@10), never per query:
    # min-max score fusion beat weighted RRF at every lexical weight (0.520-0.524 vs 0.487-0.507).
    fusion: Fusion = "score"  # weighted sum of min-max normalised scores, or weighted reciprocal ranks
    code_name_boost: float = 0.1  # added for a chunk defining a name written as code in the query
    plain_name_boost: float = 0.1  # added for a chunk defining a plain word of the query
    name_overlap_boost: float = 0.2  # times the share of the chunk's symbol name the query's words hold
    # A query that writes no name as code ("how do I retry a failed request") is prose: the word ranking
    # pulls it away from the right code more than it helps, so its word and name rankings count less.
    # Chosen on bench/real_questions.py's development split (StackOverflow questions); no docstring set
    # of bench/retrieval_quality.py lost more than 0.007 MRR@10 to them (docs/search.md).
    prose_lexical_weight: float = 0.3
    prose_name_weight: float = 0.2

    def weights(self, names: QueryNames) -> tuple[float, float]:
        """The word and name rankings' weights for a query naming `names`: the prose ones when it
        writes no name as code."""
        if names.code:
            return self.lexical_weight, self.name_weight
        return self.prose_lexical_weight, self.prose_name_weight


def fuse(rankings: Sequence[tuple[float, Sequence[VectorHit]]]) -> list[tuple[float, VectorHit]]:
    """Weighted sum of min-max normalised scores; a ranking that misses a hit adds 0 for it.

    Chosen over weighted reciprocal-rank fusion (fuse_ranks) by bench/fusion_sweep.py: better mean
    MRR@10 over five packages' docstring and question queries at every lexical weight tried.
    """
    scores: dict[str, float] = {}
    hits: dict[str, VectorHit] = {}
    for weight, ranking in rankings:
        for point_id, normalised in _normalised(ranking).items():
            scores[point_id] = scores.get(point_id, 0.0) + weight * normalised
        hits.update((hit.id, hit) for hit in ranking if hit.id not in hits)
    ordered = sorted(scores, key=lambda point_id: (-scores[point_id], point_id))
    return [(scores[point_id], hits[point_id]) for point_id in ordered]


def fuse_ranks(rankings: Sequence[tuple[float, Sequence[VectorHit]]]) -> list[tuple[float, VectorHit]]:
    """Weighted reciprocal-rank fusion, scaled so a ranking's first hit scores its weight."""
    scores: dict[str, float] = {}
    hits: dict[str, VectorHit] = {}
    for weight, ranking in rankings:
        for rank, hit in enumerate(ranking, start=1):
            scores[hit.id] = scores.get(hit.id, 0.0) + weight * (RRF_K + 1) / (RRF_K + rank)
            hits.setdefault(hit.id, hit)
    ordered = sorted(scores, key=lambda point_id: (-scores[point_id], point_id))
    return [(scores[point_id], hits[point_id]) for point_id in ordered]


def boost_definitions(
    fused: Sequence[tuple[float, VectorHit]], query: str, names: QueryNames, config: RetrievalConfig
) -> list[tuple[float, VectorHit]]:
    """Fused hits re-ordered after adding the boosts of chunks whose symbol the query names
    (`names`: query_names(query), names.py)."""
    tokens = frozenset(tokenize(query))
    boosted = []
    for score, hit in fused:
        symbol = str(hit.payload.get("symbol", ""))
        score += config.code_name_boost * definition_match(symbol, names.code)
        score += config.plain_name_boost * (definition_match(symbol, names.plain) == 1.0)
        score += config.name_overlap_boost * name_overlap(symbol, tokens)
        boosted.append((score, hit))
    return sorted(boosted, key=lambda pair: (-pair[0], pair[1].id))


def _normalised(ranking: Sequence[VectorHit]) -> dict[str, float]:
    """Scores mapped onto 0..1 within one ranking (the best is 1)."""
    if not ranking:
        return {}
    high, low = max(hit.score for hit in ranking), min(hit.score for hit in ranking)
    spread = (high - low) or 1.0
    return {hit.id: (hit.score - low) / spread if high != low else 1.0 for hit in ranking}
