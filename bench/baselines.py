"""The baselines code_search is measured against, on the very chunks the product indexed.

    bm25    textbook Okapi BM25 (rank-bm25, k1 1.5, b 0.75) over the chunk's lexical text (path,
            symbol, code): words split on snake_case/camelCase, lowercased, English stop words out,
            Snowball (Porter 2) stems; written here, independent of the product's tokenizer
    dense   MiniLM (the product's own LocalEmbedder) cosine over the chunk's embedded text
    rrf     reciprocal-rank fusion of the two, 1/(60 + rank) each, equal weights

Each ranking's chunks go through the product's merge_overlapping, as code_search's do, so a
baseline hit and a product hit are judged the same way.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import snowballstemmer
from rank_bm25 import BM25Okapi

from reactstep.tools.ranking.retrieval import Passage, merge_overlapping
from reactstep.tools.source.chunking import Chunk
from reactstep.tools.vector_store.store import VectorHit

WORD = re.compile(r"[A-Za-z0-9]+")
PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
ENGLISH_STOP = frozenset(
    {
        *("a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if"),
        *("in", "into", "is", "it", "no", "not", "of", "on", "or", "such", "that"),
        *("the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with"),
    }
)
RRF_K = 60
CANDIDATES = 50
_stem = snowballstemmer.stemmer("english").stemWord


def bm25_tokens(text: str) -> list[str]:
    """Identifier parts, lowercased, stop words out, stemmed."""
    parts = (part.lower() for word in WORD.findall(text) for part in PART.findall(word))
    return [_stem(part) for part in parts if part not in ENGLISH_STOP]


@dataclass
class Baselines:
    """BM25 and dense rankings over one package's chunks."""

    chunks: Sequence[Chunk]
    bm25: BM25Okapi
    matrix: np.ndarray  # one unit-length dense vector per chunk

    @classmethod
    def build(
        cls, chunks: Sequence[Chunk], lexical: Sequence[str], dense: Sequence[list[float]]
    ) -> "Baselines":
        matrix = np.asarray(dense, dtype=np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-12
        return cls(chunks, BM25Okapi([bm25_tokens(text) for text in lexical]), matrix)

    def bm25_ranking(self, query: str) -> list[int]:
        scores = self.bm25.get_scores(bm25_tokens(query))
        return [int(i) for i in np.argsort(-scores, kind="stable")[:CANDIDATES] if scores[i] > 0]

    def dense_ranking(self, query_vector: list[float]) -> list[int]:
        scores = self.matrix @ np.asarray(query_vector, dtype=np.float32)
        return [int(i) for i in np.argsort(-scores, kind="stable")[:CANDIDATES]]

    def passages(self, ranking: Sequence[int]) -> list[Passage]:
        """The ranked chunks as code_search would show them (overlaps of one file joined)."""
        scored = [(float(-rank), self._hit(index)) for rank, index in enumerate(ranking)]
        return merge_overlapping(scored)

    def _hit(self, index: int) -> VectorHit:
        chunk = self.chunks[index]
        payload = {
            "path": chunk.path,
            "start_line": chunk.start_line,
            "end_line": chunk.end_line,
            "symbol": chunk.symbol,
            "language": chunk.language,
            "content": chunk.content,
        }
        return VectorHit(str(index), 0.0, payload)


def rrf(*rankings: Sequence[int]) -> list[int]:
    """Reciprocal-rank fusion with equal weights."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, index in enumerate(ranking, start=1):
            scores[index] = scores.get(index, 0.0) + 1 / (RRF_K + rank)
    return sorted(scores, key=lambda index: (-scores[index], index))[:CANDIDATES]
