"""The embedded vector store: Qdrant's engine in-process (qdrant-edge), one on-disk shard per collection.

    <path>/store.lock      held (flock) by the one process that owns the store; holds its pid
    <path>/<collection>/   an EdgeShard: segments, WAL and the engine's config

qdrant-edge raises plain `Exception` for every failure, so only what this module checks itself
(names, dimensions, unknown collections, an incompatible existing shard) is a VectorStoreError;
anything else the engine raises means it failed: VectorStoreUnavailable. The engine runs no
background optimizer; points stay in plain segments, where filtered search is a fast scan.
"""

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as edge

from reactstep.tools.vectors.edge_shard import engine_errors, lock_directory, open_shard
from reactstep.tools.vectors.sparse import SparseVector
from reactstep.tools.vectors.store import (
    DENSE,
    NAME,
    PAGE_SIZE,
    POINT_FACTS,
    SPARSE,
    ChunkPoint,
    Ranking,
    SearchFilter,
    VectorHit,
    VectorStoreError,
    VectorStoreUnavailable,
    batches,
    check_collection_name,
    check_dimension,
    dense_of,
    filter_terms,
    point_facts,
    project_terms,
    returned_payload,
    stored_payload,
)


class EdgeVectorStore:
    """Collections as qdrant-edge shards under `path`, owned by this process until close()."""

    def __init__(self, path: Path) -> None:
        self._root = Path(path)
        self._lock = lock_directory(self._root)
        self._guard = threading.Lock()  # guards the two dicts, not the shards (they lock themselves)
        self._shards: dict[str, edge.EdgeShard] = {}
        self._dimensions: dict[str, int] = {}  # known once ensure_collection has checked them
        self._closed = False

    def ensure_collection(self, name: str, dimension: int, dense: Sequence[str] = (DENSE,)) -> None:
        """Create the collection's shard and indexes, or load it and check its dimension.

        `dense` names its dense vectors, all of `dimension`; a shard made with others fails to load.
        """
        check_collection_name(name)
        with self._guard:
            self._check_open()
            if name in self._dimensions:
                check_dimension(name, self._dimensions[name], dimension)
                return
            loaded = self._shards.pop(name, None)
            if loaded is not None:  # opened without a config by an earlier call: reopen to check it
                with engine_errors(f"close collection {name!r}"):
                    loaded.close()
            self._shards[name] = open_shard(self._root / name, name, dimension, tuple(dense))
            self._dimensions[name] = dimension

    def upsert(self, collection: str, points: Sequence[ChunkPoint]) -> None:
        """Insert or replace points, BATCH_SIZE per update."""
        shard = self._shard(collection)
        for batch in batches(points):
            for point in batch:
                self._check_vector(collection, point.dense)
                if point.name is not None:
                    self._check_vector(collection, point.name)
            records = [edge_point(point) for point in batch]
            with engine_errors(f"upsert into {collection!r}"):
                shard.update(edge.UpdateOperation.upsert_points(records))

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Remove points by id; unknown ids are ignored."""
        shard = self._shard(collection)
        for batch in batches(ids):
            with engine_errors(f"delete from {collection!r}"):
                shard.update(edge.UpdateOperation.delete_points(list(batch)))

    def project_points(
        self, collection: str, project_id: str, path_prefix: str | None = None
    ) -> dict[str, dict[str, Any]]:
        """Every point of the project (below `path_prefix`, if given): id -> POINT_FACTS, page by page."""
        terms = filter_terms(SearchFilter(project_id, path_prefix))
        shard = self._shard(collection)
        facts: dict[str, dict[str, Any]] = {}
        offset: Any = None
        while True:
            request = edge.ScrollRequest(
                offset=offset,
                limit=PAGE_SIZE,
                filter=edge_filter(terms),
                with_payload=POINT_FACTS,
            )
            with engine_errors(f"list the points of {collection!r}"):
                records, offset = shard.scroll(request)
            facts.update(point_facts(records))
            if offset is None:
                return facts

    def dense_vectors(self, collection: str, ids: Sequence[str]) -> dict[str, list[float]]:
        """id -> dense vector of the points that exist among `ids`."""
        shard = self._shard(collection)
        found: dict[str, list[float]] = {}
        for batch in batches(ids):
            with engine_errors(f"read vectors of {collection!r}"):
                records = shard.retrieve(list(batch), False, [DENSE])
            found.update(dense_of(records))
        return found

    def update_payload(self, collection: str, updates: Mapping[str, dict[str, Any]]) -> None:
        """Overwrite some payload fields of some points (the vectors stay)."""
        shard = self._shard(collection)
        for point_id, fields in updates.items():
            with engine_errors(f"update points of {collection!r}"):
                shard.update(edge.UpdateOperation.set_payload([point_id], fields))

    def search_dense(
        self, collection: str, vector: Sequence[float], where: SearchFilter, limit: int, using: str = DENSE
    ) -> list[VectorHit]:
        """The `limit` points whose `using` vector is nearest to `vector` by cosine similarity, best first."""
        return self.search_rankings(collection, [Ranking(using, vector)], where, limit)[0]

    def search_sparse(
        self, collection: str, vector: SparseVector, where: SearchFilter, limit: int
    ) -> list[VectorHit]:
        """The `limit` best BM25-scored points (IDF over the project's points), best first."""
        return self.search_rankings(collection, [Ranking(SPARSE, vector)], where, limit)[0]

    def search_rankings(
        self, collection: str, rankings: Sequence[Ranking], where: SearchFilter, limit: int
    ) -> list[list[VectorHit]]:
        """Each ranking's `limit` best points, best first, from one batch (one pass over the segments)."""
        shard = self._shard(collection)
        requests: dict[int, edge.QueryRequest] = {}
        for n, ranking in enumerate(rankings):
            params = None
            if isinstance(ranking.vector, SparseVector):
                if not ranking.vector.indices:
                    continue  # no known word: no ranking
                query = edge.Query.Nearest(edge_sparse(ranking.vector), using=ranking.using)
                params = edge.SearchParams(
                    idf=edge.IdfParams(corpus=edge_filter(project_terms(where.project_id)))
                )
            else:
                self._check_vector(collection, ranking.vector)
                query = edge.Query.Nearest(list(ranking.vector), using=ranking.using)
            requests[n] = edge.QueryRequest(
                limit=limit,
                query=query,
                filter=edge_filter(filter_terms(where)),
                params=params,
                with_payload=True,
            )
        answers: list[list[VectorHit]] = [[] for _ in rankings]
        if requests:
            with engine_errors(f"search {collection!r}"):
                found = shard.query_batch(edge.QueryBatchRequest(list(requests.values())))
            for n, hits in zip(requests, found, strict=True):
                answers[n] = [
                    VectorHit(str(hit.id), hit.score, returned_payload(hit.payload)) for hit in hits
                ]
        return answers

    def count(self, collection: str, project_id: str) -> int:
        """How many points the project has."""
        shard = self._shard(collection)
        request = edge.CountRequest(exact=True, filter=edge_filter(project_terms(project_id)))
        with engine_errors(f"count points in {collection!r}"):
            return shard.count(request)

    def collections(self) -> list[str]:
        """Every collection's name, sorted: the shard directories under the store's path."""
        with self._guard:
            self._check_open()
        return sorted(entry.name for entry in self._root.iterdir() if entry.is_dir())

    def check(self) -> None:
        """Raise VectorStoreUnavailable unless the store is open and its shards answer."""
        with self._guard:
            self._check_open()
            shards = list(self._shards.items())
        for name, shard in shards:
            with engine_errors(f"read collection {name!r}"):
                shard.info()

    def close(self) -> None:
        """Flush and close every shard, then release the directory lock; a second close is a no-op."""
        with self._guard:
            if self._closed:
                return
            self._closed = True
            shards, self._shards = self._shards, {}
        try:
            for name, shard in shards.items():
                with engine_errors(f"close collection {name!r}"):
                    shard.flush()
                    shard.close()
        finally:
            self._lock.close()  # closing the file releases the flock

    def _shard(self, name: str) -> edge.EdgeShard:
        """The open shard of a collection, loading it from disk on first use."""
        check_collection_name(name)
        with self._guard:
            self._check_open()
            shard = self._shards.get(name)
            if shard is None:
                directory = self._root / name
                if not directory.is_dir():
                    raise VectorStoreError(f"unknown collection {name!r}; create it with ensure_collection")
                with engine_errors(f"load collection {name!r}"):
                    shard = self._shards[name] = edge.EdgeShard.load(str(directory))
            return shard

    def _check_vector(self, collection: str, vector: Sequence[float]) -> None:
        """Refuse a dense vector whose size differs from the collection's, when it is known."""
        known = self._dimensions.get(collection)
        if known is not None and len(vector) != known:
            raise VectorStoreError(
                f"collection {collection!r} takes {known}-dimensional vectors, got {len(vector)}"
            )

    def _check_open(self) -> None:
        if self._closed:
            raise VectorStoreUnavailable(f"the vector store at {self._root} is closed")


def edge_point(point: ChunkPoint) -> edge.Point:
    """A ChunkPoint as the engine's Point."""
    vectors: dict[str, edge.NamedVector] = {DENSE: list(point.dense), SPARSE: edge_sparse(point.sparse)}
    if point.name is not None:
        vectors[NAME] = list(point.name)
    return edge.Point(point.id, vectors, stored_payload(point))


def edge_sparse(vector: SparseVector) -> edge.SparseVector:
    """Our sparse vector as the engine's."""
    return edge.SparseVector(list(vector.indices), list(vector.values))


def edge_filter(terms: list[tuple[str, str]]) -> edge.Filter:
    """A filter every one of the (field, value) keyword matches must pass."""
    must: list[Any] = [edge.FieldCondition(field, match=edge.MatchValue(value)) for field, value in terms]
    return edge.Filter(must=must)
