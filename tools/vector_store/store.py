"""Chunk vectors: one VectorStore interface, two back-ends, chosen once (backend_choice.open_vector_store).

    embedded (default)  EdgeVectorStore    Qdrant's engine in-process, one shard per collection
    qdrant              QdrantVectorStore  a Qdrant server or cluster by URL (":memory:" in tests),
                                           in qdrant.py

A collection holds every project's chunks: a named dense vector ("dense", cosine), for chunk
collections a second one of the chunk's name ("name", cosine, same size), and a named sparse vector
("sparse", IDF modifier, so sparse.py's term weights score as BM25). Every
query is scoped to one project, and sparse IDF is computed over that project's points only.
The store adds `path_prefixes` (each ancestor directory of `path`, and `path` itself) so a
directory filter is one keyword match, and strips it from the payloads it returns.

Its errors (tools/errors.py): VectorStoreError, a usage error (unknown collection, wrong dimension,
malformed point); VectorStoreUnavailable, the back-end cannot be reached, failed, or is held by
another process (503 vector_store_unavailable).
"""

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from reactstep.tools.embedding.sparse import SparseVector
from reactstep.tools.errors import VectorStoreError

DENSE = "dense"
NAME = "name"  # the dense vector of a chunk's symbol name and parameters (indexer.name_text)
SPARSE = "sparse"
CHUNK_VECTORS = (DENSE, NAME)  # the dense vectors of a chunk collection; the embedding cache has DENSE only
BATCH_SIZE = 256
PAGE_SIZE = 1024
PATH_PREFIXES = "path_prefixes"
# project_id is the tenant key; the other two back the path and language filters.
KEYWORD_FIELDS = ("project_id", PATH_PREFIXES, "language")
REQUIRED_PAYLOAD = ("project_id", "path")
COLLECTION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")


@dataclass(frozen=True)
class ChunkPoint:
    """One code chunk to store: a UUID id, its vectors, and its payload."""

    id: str
    dense: list[float]
    sparse: SparseVector
    payload: dict[str, Any]
    name: list[float] | None = None  # the NAME vector, for a collection made with it


@dataclass(frozen=True)
class SearchFilter:
    """Which points a search may return: always one project, optionally a directory and language."""

    project_id: str
    path_prefix: str | None = None
    language: str | None = None


@dataclass(frozen=True)
class VectorHit:
    """One search result: the point id, its score and its payload as upserted."""

    id: str
    score: float
    payload: dict[str, Any]


@dataclass(frozen=True)
class Ranking:
    """One ranking of a hybrid search: nearest by a dense vector (DENSE, NAME) or BM25 on SPARSE."""

    using: str
    vector: Sequence[float] | SparseVector


class VectorStore(Protocol):
    """Chunk vectors grouped in collections; every read is scoped to one project."""

    def ensure_collection(self, name: str, dimension: int, dense: Sequence[str] = (DENSE,)) -> None: ...
    def upsert(self, collection: str, points: Sequence[ChunkPoint]) -> None: ...
    def delete(self, collection: str, ids: Sequence[str]) -> None: ...
    def project_points(
        self, collection: str, project_id: str, path_prefix: str | None = None
    ) -> dict[str, dict[str, Any]]: ...
    def update_payload(self, collection: str, updates: Mapping[str, dict[str, Any]]) -> None: ...
    def dense_vectors(self, collection: str, ids: Sequence[str]) -> dict[str, list[float]]: ...
    def search_dense(
        self, collection: str, vector: Sequence[float], where: SearchFilter, limit: int, using: str = DENSE
    ) -> list[VectorHit]: ...
    def search_sparse(
        self, collection: str, vector: SparseVector, where: SearchFilter, limit: int
    ) -> list[VectorHit]: ...
    def search_rankings(
        self, collection: str, rankings: Sequence[Ranking], where: SearchFilter, limit: int
    ) -> list[list[VectorHit]]: ...
    def count(self, collection: str, project_id: str) -> int: ...
    def collections(self) -> list[str]: ...
    def check(self) -> None: ...
    def close(self) -> None: ...


class OneRankingSearches(ABC):
    """search_dense and search_sparse, for a back-end: each is one ranking of its search_rankings."""

    @abstractmethod
    def search_rankings(
        self, collection: str, rankings: Sequence[Ranking], where: SearchFilter, limit: int
    ) -> list[list[VectorHit]]: ...

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


def check_collection_name(name: str) -> None:
    """Refuse a name that is not a plain identifier (the embedded store makes it a directory)."""
    if not COLLECTION_NAME.fullmatch(name):
        raise VectorStoreError(f"invalid collection name {name!r}; use letters, digits, '_' and '-'")


def check_dimension(name: str, existing: int | None, dimension: int) -> None:
    """Refuse to reuse a collection made for vectors of another size."""
    if existing != dimension:
        raise VectorStoreError(
            f"collection {name!r} holds {existing}-dimensional vectors, not {dimension}; "
            "use another collection name for another embedding model"
        )


def path_prefixes(path: str) -> list[str]:
    """Every ancestor directory of `path` and `path` itself: src, src/api, src/api/x.py."""
    parts = [part for part in path.split("/") if part]
    return ["/".join(parts[: end + 1]) for end in range(len(parts))]


def stored_payload(point: ChunkPoint) -> dict[str, Any]:
    """The payload as stored: the point's own plus `path_prefixes`."""
    missing = [key for key in REQUIRED_PAYLOAD if not isinstance(point.payload.get(key), str)]
    if missing:
        raise VectorStoreError(f"point {point.id} lacks payload string(s) {', '.join(missing)}")
    return point.payload | {PATH_PREFIXES: path_prefixes(point.payload["path"])}


def returned_payload(payload: dict[str, Any] | None) -> dict[str, Any]:
    """The payload as upserted: the stored one without `path_prefixes`."""
    return {key: value for key, value in (payload or {}).items() if key != PATH_PREFIXES}


def project_terms(project_id: str) -> list[tuple[str, str]]:
    """The (field, value) pair that scopes a read to one project."""
    return [("project_id", project_id)]


def filter_terms(where: SearchFilter) -> list[tuple[str, str]]:
    """The (field, value) pairs a point must all match: the project's, then the optional ones."""
    terms = project_terms(where.project_id)
    prefix = (where.path_prefix or "").strip("/")
    if prefix:
        terms.append((PATH_PREFIXES, prefix))
    if where.language:
        terms.append(("language", where.language))
    return terms


def batches(items: Sequence[Any], size: int = BATCH_SIZE) -> Iterator[Sequence[Any]]:
    """Consecutive slices of at most `size` items."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


# What the indexer needs to know about an indexed point, without its content or vectors.
POINT_FACTS = ["path", "content_hash", "file_etag", "file_chunks", "start_line", "end_line"]


def point_facts(records: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """id -> POINT_FACTS of scrolled records (either back-end's: both have `id` and `payload`)."""
    return {str(record.id): dict(record.payload or {}) for record in records}


def dense_of(records: Iterable[Any]) -> dict[str, list[float]]:
    """id -> dense vector of retrieved records (either back-end's: `vector` maps names to vectors)."""
    found: dict[str, list[float]] = {}
    for record in records:
        named = record.vector if isinstance(record.vector, dict) else {}
        vector = named.get(DENSE)
        if isinstance(vector, list):
            found[str(record.id)] = [float(value) for value in vector if isinstance(value, float)]
    return found
