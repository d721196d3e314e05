"""Hybrid retrieval over a project's chunks: dense and lexical rankings, fused, then merged per file.

    query ──► embed ─┬─► nearest chunk vectors ─┐  one batched search
                     └─► nearest name vectors  ─┤  (search_rankings)
          ├─► encode ─► BM25 on word vectors ───┴─► weighted fusion ──┐  (fusion.py)
          └─► names the query mentions (names.py) ─────────────┴─► + boost of chunks defining one
                                                  ──► merge overlapping hits of one file ──► top N
The fusion, its weights and the boosts come from bench/retrieval_quality.py, never tuned per query.
When the embedder knows its dimension without a call (a local model), the query is embedded on another
thread while the word ranking is searched (onnxruntime lets other threads run; at 100k chunks the two
take ~7 and ~3 ms), then the two dense rankings are searched in one batch.
"""

import re
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from reactstep.tools.embedding.embeddings import Embedder
from reactstep.tools.embedding.local_models import vectors_revision
from reactstep.tools.embedding.sparse import WORD_VECTORS_FORMAT, encode_query
from reactstep.tools.errors import ToolError, VectorStoreError
from reactstep.tools.ranking.fusion import RetrievalConfig, boost_definitions, fuse, fuse_ranks
from reactstep.tools.ranking.names import query_names
from reactstep.tools.vector_store.store import (
    DENSE,
    NAME,
    SPARSE,
    Ranking,
    SearchFilter,
    VectorHit,
    VectorStore,
)

CANDIDATES = 50  # at least this many hits from each ranking; twice max_results when that is more
# A passage is a match when its fused score is at least this share of the query's best passage's.
# bench/retrieval_quality.py: with 0.4, 1-2% of the right functions that rank in the top 10 fall
# below it, and a query has a median of 8-11 matches (the merged pool holds 70-90 candidates).
RELEVANCE_FLOOR = 0.4
# Threads that embed queries while the word ranking is searched; made on first use, idle ones wait.
QUERY_EMBEDDING = ThreadPoolExecutor(max_workers=4, thread_name_prefix="query-embedding")


def embedding_space(embedder: Embedder) -> str:
    """The embedding model (with its vectors' revision) and its dimension, as a name: what the embedding
    cache is kept by."""
    name = " ".join((embedder.model_name, vectors_revision(embedder.model_name)))
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    return f"chunks_{slug}_{embedder.dimension}"


def collection_name(embedder: Embedder) -> str:
    """One collection per embedding model, dimension and word-vector format, so that vectors of two
    models, or word vectors of two formats, never mix."""
    return f"{embedding_space(embedder)}_w{WORD_VECTORS_FORMAT}"


@dataclass(frozen=True)
class Passage:
    """A run of lines of one file that matched, with its best score."""

    path: str
    start_line: int
    end_line: int
    symbol: str
    language: str
    score: float
    lines: tuple[str, ...]
    etag: str = ""  # the MD5 of the file the chunk was cut from, when it was indexed


@dataclass(frozen=True)
class CodeIndex:
    """The vector store and embedder one request searches with."""

    vectors: VectorStore
    embedder: Embedder
    config: RetrievalConfig

    def search(
        self, where: SearchFilter, query: str, limit: int, current: Callable[[Passage], bool] | None = None
    ) -> tuple[list[Passage], int]:
        """The best passages (at most `limit`) and how many match: score at least RELEVANCE_FLOOR
        times the best passage's (passages below it still fill `limit`).

        `current`, when given, is asked of each passage in rank order until `limit` are kept; a
        passage it refuses (its file changed since indexing) is dropped, never shown or counted.
        """
        candidates = max(CANDIDATES, 2 * limit)  # each ranking offers enough for the merged top `limit`
        query_vector = self._embedding(query)
        collection = collection_name(self.embedder)  # after embedding: a remote model learns its size then
        try:
            hits = self._ranked(collection, where, query, query_vector, candidates)
        except VectorStoreError:
            # Asked only on failure: listing collections on every query would cost a call each time.
            if collection in self.vectors.collections():
                raise
            raise ToolError(self._not_indexed_reason(collection, where.project_id)) from None
        if not hits and self.vectors.count(collection, where.project_id) == 0:
            raise ToolError(self._not_indexed_reason(collection, where.project_id))
        passages = merge_overlapping(hits)
        floor = RELEVANCE_FLOOR * passages[0].score if passages else 0.0
        matches = sum(1 for passage in passages if passage.score >= floor)
        if current is None:
            return passages[:limit], matches
        kept: list[Passage] = []
        for passage in passages:
            if current(passage):
                kept.append(passage)
                if len(kept) == limit:
                    break
            elif passage.score >= floor:
                matches -= 1
        return kept, matches

    def _embedding(self, query: str) -> "Future[list[float]] | None":
        """The query's vector: being made on another thread when the collection is known without it
        (a remote model learns its dimension from its first vectors); None in lexical mode."""
        if self.config.mode == "lexical":
            return None
        if self.config.mode == "hybrid" and self.embedder.known_dimension is not None:
            return QUERY_EMBEDDING.submit(self.embedder.embed_query, query)
        made: Future[list[float]] = Future()
        made.set_result(self.embedder.embed_query(query))
        return made

    def _ranked(
        self,
        collection: str,
        where: SearchFilter,
        query: str,
        query_vector: "Future[list[float]] | None",
        candidates: int,
    ) -> list[tuple[float, VectorHit]]:
        names = query_names(query)
        lexical_weight, name_weight = self.config.weights(names)
        words: list[tuple[float, Ranking]] = []
        if self.config.mode == "lexical" or (self.config.mode == "hybrid" and lexical_weight):
            words.append((lexical_weight, Ranking(SPARSE, encode_query(query))))
        early: list[tuple[float, list[VectorHit]]] = []
        if words and query_vector is not None and not query_vector.done():
            early, words = self._searched(collection, words, where, candidates), []  # while it is embedded
        dense: list[tuple[float, Ranking]] = []
        if query_vector is not None:
            vector = query_vector.result()
            dense.append((self.config.dense_weight, Ranking(DENSE, vector)))
            if self.config.mode == "hybrid" and name_weight:
                dense.append((name_weight, Ranking(NAME, vector)))
        rankings = self._searched(collection, dense + words, where, candidates) + early  # one batch
        if len(rankings) == 1:
            return [(hit.score, hit) for hit in rankings[0][1]]
        fused = fuse(rankings) if self.config.fusion == "score" else fuse_ranks(rankings)
        return boost_definitions(fused, query, names, self.config)

    def _searched(
        self, collection: str, wanted: list[tuple[float, Ranking]], where: SearchFilter, candidates: int
    ) -> list[tuple[float, list[VectorHit]]]:
        """Each wanted ranking's weight and hits, from one batch (none for none wanted)."""
        if not wanted:
            return []
        found = self.vectors.search_rankings(
            collection, [ranking for _, ranking in wanted], where, candidates
        )
        return [(weight, hits) for (weight, _), hits in zip(wanted, found, strict=True)]

    def _not_indexed_reason(self, collection: str, project_id: str) -> str:
        others = [name for name in self.vectors.collections() if name != collection]
        indexed_with = [name for name in others if self.vectors.count(name, project_id) > 0]
        model = collection.rsplit("_w", 1)[0]
        if any(name == model or name.rsplit("_w", 1)[0] == model for name in indexed_with):
            return (
                f"project {project_id!r} was indexed by an earlier version of this server, whose word-match "
                f"vectors this one does not read; index it again (POST /api/projects/{project_id}/index: "
                "the code is not embedded again)"
            )
        if indexed_with:
            models = ", ".join(indexed_with)
            return (
                f"project {project_id!r} is indexed with another embedding model ({models}); "
                f"this request uses {self.embedder.model_name} ({self.embedder.dimension} dimensions). "
                "Search with the model it was indexed with, or index it again with this one."
            )
        return (
            f"project {project_id!r} has no search index yet; index it first "
            f"(`reactstep index PATH --project {project_id}` or POST /api/projects/{project_id}/index)"
        )


def merge_overlapping(scored: Sequence[tuple[float, VectorHit]]) -> list[Passage]:
    """Passages in score order; a hit overlapping a better one of the same file joins it."""
    passages: list[Passage] = []
    by_path: dict[str, list[int]] = {}  # the indexes of each file's passages, in score order
    for score, hit in scored:
        passage = _passage(score, hit.payload)
        same_file = by_path.setdefault(passage.path, [])
        for index in same_file:
            if _overlap(passages[index], passage):
                passages[index] = _join(passages[index], passage)
                break
        else:
            same_file.append(len(passages))
            passages.append(passage)
    return passages


def _passage(score: float, payload: dict[str, Any]) -> Passage:
    lines = tuple(str(payload.get("content", "")).split("\n"))
    return Passage(
        path=str(payload["path"]),
        start_line=int(payload["start_line"]),
        end_line=int(payload["end_line"]),
        symbol=str(payload.get("symbol", "")),
        language=str(payload.get("language", "")),
        score=score,
        lines=lines,
        etag=str(payload.get("file_etag", "")),
    )


def _overlap(first: Passage, second: Passage) -> bool:
    return first.start_line <= second.end_line and second.start_line <= first.end_line


def _join(kept: Passage, other: Passage) -> Passage:
    """One passage covering both ranges; lines come from whichever chunk holds them."""
    start, end = min(kept.start_line, other.start_line), max(kept.end_line, other.end_line)
    by_line = {other.start_line + offset: text for offset, text in enumerate(other.lines)}
    by_line.update({kept.start_line + offset: text for offset, text in enumerate(kept.lines)})
    lines = tuple(by_line.get(number, "") for number in range(start, end + 1))
    return replace(kept, start_line=start, end_line=end, lines=lines)
