"""Chunk vectors: one VectorStore interface, two back-ends, chosen once by `open_vector_store`.

    embedded (default)  EdgeVectorStore    Qdrant's engine in-process, one shard per collection
    qdrant              QdrantVectorStore  a Qdrant server or cluster by URL (":memory:" in tests)

A collection holds every project's chunks: a named dense vector ("dense", cosine) and a named
sparse vector ("sparse", IDF modifier, so tools/sparse.py's term weights score as BM25). Every
query is scoped to one project, and sparse IDF is computed over that project's points only.
The store adds `path_prefixes` (each ancestor directory of `path`, and `path` itself) so a
directory filter is one keyword match, and strips it from the payloads it returns.

VectorStoreError        a usage error: unknown collection, wrong dimension, malformed point
VectorStoreUnavailable  the back-end cannot be reached, failed, or is held by another process
"""

import math
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
from qdrant_client import QdrantClient, models
from qdrant_client.common.client_exceptions import QdrantException
from qdrant_client.http.exceptions import ApiException, UnexpectedResponse

from service.settings import Settings
from tools.sparse import SparseVector

DENSE = "dense"
SPARSE = "sparse"
BATCH_SIZE = 256
PAGE_SIZE = 1024
PATH_PREFIXES = "path_prefixes"
# project_id is the tenant key; the other two back the path and language filters.
KEYWORD_FIELDS = ("project_id", PATH_PREFIXES, "language")
REQUIRED_PAYLOAD = ("project_id", "path")
COLLECTION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
# HTTP statuses that mean the request was wrong, not that the server failed.
USAGE_STATUSES = frozenset({400, 404, 409, 422})


class VectorStoreError(Exception):
    """A usage error: an unknown collection, a wrong dimension, a malformed point."""


class VectorStoreUnavailable(Exception):
    """The back-end cannot be reached, failed, or is held by another process."""


@dataclass(frozen=True)
class ChunkPoint:
    """One code chunk to store: a UUID id, both vectors, and its payload."""

    id: str
    dense: list[float]
    sparse: SparseVector
    payload: dict[str, Any]


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


class VectorStore(Protocol):
    """Chunk vectors grouped in collections; every read is scoped to one project."""

    def ensure_collection(self, name: str, dimension: int) -> None: ...
    def upsert(self, collection: str, points: Sequence[ChunkPoint]) -> None: ...
    def delete(self, collection: str, ids: Sequence[str]) -> None: ...
    def project_points(self, collection: str, project_id: str) -> dict[str, dict[str, Any]]: ...
    def update_payload(self, collection: str, updates: Mapping[str, dict[str, Any]]) -> None: ...
    def search_dense(
        self, collection: str, vector: Sequence[float], where: SearchFilter, limit: int
    ) -> list[VectorHit]: ...
    def search_sparse(
        self, collection: str, vector: SparseVector, where: SearchFilter, limit: int
    ) -> list[VectorHit]: ...
    def count(self, collection: str, project_id: str) -> int: ...
    def collections(self) -> list[str]: ...
    def check(self) -> None: ...
    def close(self) -> None: ...


def open_vector_store(settings: Settings) -> VectorStore:
    """The store the settings name: "embedded" (the default) or "qdrant" at `qdrant_url`."""
    if settings.vector_backend == "qdrant":
        if not settings.qdrant_url:
            raise VectorStoreError("REACTSTEP_VECTOR_BACKEND=qdrant needs REACTSTEP_QDRANT_URL")
        key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return QdrantVectorStore(settings.qdrant_url, key, settings.qdrant_timeout_s)
    # Imported here: the edge module imports this one for the shared types.
    from tools.edge_vectors import EdgeVectorStore

    return EdgeVectorStore(settings.vectors_root)


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


@contextmanager
def translated_errors(action: str) -> Iterator[None]:
    """Turn qdrant-client's failures into ours, once: a refused request or a failed back-end."""
    try:
        yield
    except UnexpectedResponse as exc:
        kind = VectorStoreError if exc.status_code in USAGE_STATUSES else VectorStoreUnavailable
        raise kind(f"Qdrant refused to {action}: {exc}") from exc
    except ValueError as exc:  # local mode (and pydantic) report bad requests this way
        raise VectorStoreError(f"Qdrant refused to {action}: {exc}") from exc
    except (ApiException, QdrantException, httpx.HTTPError, OSError) as exc:
        raise VectorStoreUnavailable(f"Qdrant could not {action}: {exc}") from exc


class QdrantVectorStore:
    """Collections on a Qdrant server by URL, or in qdrant-client's ":memory:" mode."""

    def __init__(self, location: str, api_key: str | None = None, timeout_s: float = 10.0) -> None:
        # No compatibility probe here: constructing does no I/O, check() is the readiness probe.
        self._client = QdrantClient(
            location=location, api_key=api_key, timeout=math.ceil(timeout_s), check_compatibility=False
        )

    def ensure_collection(self, name: str, dimension: int) -> None:
        """Create the collection and its payload indexes, or check the existing one's dimension."""
        check_collection_name(name)
        with translated_errors(f"set up collection {name!r}"):
            if not self._client.collection_exists(name):
                self._create_collection(name, dimension)
                return
            vectors = self._client.get_collection(name).config.params.vectors
        params = vectors.get(DENSE) if isinstance(vectors, dict) else None
        check_dimension(name, params.size if params else None, dimension)

    def _create_collection(self, name: str, dimension: int) -> None:
        self._client.create_collection(
            name,
            vectors_config={DENSE: models.VectorParams(size=dimension, distance=models.Distance.COSINE)},
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
        )
        tenant = models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True)
        with warnings.catch_warnings():
            # Local mode ignores payload indexes and says so; a server builds them.
            warnings.filterwarnings("ignore", "Payload indexes have no effect", UserWarning)
            for field in KEYWORD_FIELDS:
                schema = tenant if field == "project_id" else models.PayloadSchemaType.KEYWORD
                self._client.create_payload_index(name, field, schema)

    def upsert(self, collection: str, points: Sequence[ChunkPoint]) -> None:
        """Insert or replace points, BATCH_SIZE per request."""
        for batch in batches(points):
            structs = [qdrant_point(point) for point in batch]
            with translated_errors(f"upsert into {collection!r}"):
                self._client.upsert(collection, structs, wait=True)

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Remove points by id; unknown ids are ignored."""
        for batch in batches(ids):
            with translated_errors(f"delete from {collection!r}"):
                self._client.delete(collection, models.PointIdsList(points=list(batch)), wait=True)

    def project_points(self, collection: str, project_id: str) -> dict[str, dict[str, Any]]:
        """Every point of the project: id -> POINT_FACTS, read page by page."""
        facts: dict[str, dict[str, Any]] = {}
        offset: models.ExtendedPointId | None = None
        while True:
            with translated_errors(f"list the points of {collection!r}"):
                records, offset = self._client.scroll(
                    collection,
                    scroll_filter=project_filter(project_id),
                    limit=PAGE_SIZE,
                    offset=offset,
                    with_payload=POINT_FACTS,
                )
            facts.update(point_facts(records))
            if offset is None:
                return facts

    def update_payload(self, collection: str, updates: Mapping[str, dict[str, Any]]) -> None:
        """Overwrite some payload fields of some points (the vectors stay)."""
        for point_id, fields in updates.items():
            with translated_errors(f"update points of {collection!r}"):
                self._client.set_payload(collection, fields, points=[point_id], wait=True)

    def search_dense(
        self, collection: str, vector: Sequence[float], where: SearchFilter, limit: int
    ) -> list[VectorHit]:
        """The `limit` points nearest to `vector` by cosine similarity, best first."""
        return self._query(collection, list(vector), DENSE, where, limit, params=None)

    def search_sparse(
        self, collection: str, vector: SparseVector, where: SearchFilter, limit: int
    ) -> list[VectorHit]:
        """The `limit` best BM25-scored points (IDF over the project's points), best first."""
        if not vector.indices:
            return []
        params = models.SearchParams(idf=models.IdfCorpusParams(corpus=project_filter(where.project_id)))
        return self._query(collection, qdrant_sparse(vector), SPARSE, where, limit, params)

    def _query(
        self, collection: str, query: Any, using: str, where: SearchFilter, limit: int, params: Any
    ) -> list[VectorHit]:
        with translated_errors(f"search {collection!r}"):
            response = self._client.query_points(
                collection,
                query=query,
                using=using,
                query_filter=qdrant_filter(filter_terms(where)),
                search_params=params,
                limit=limit,
                with_payload=True,
            )
        return [VectorHit(str(hit.id), hit.score, returned_payload(hit.payload)) for hit in response.points]

    def count(self, collection: str, project_id: str) -> int:
        """How many points the project has."""
        with translated_errors(f"count points in {collection!r}"):
            result = self._client.count(collection, project_filter(project_id), exact=True)
        return result.count

    def collections(self) -> list[str]:
        """Every collection's name, sorted."""
        with translated_errors("list collections"):
            found = self._client.get_collections().collections
        return sorted(description.name for description in found)

    def check(self) -> None:
        """Raise VectorStoreUnavailable unless Qdrant answers."""
        try:
            with translated_errors("list collections"):
                self._client.get_collections()
        except VectorStoreError as exc:  # e.g. a URL that points at something other than Qdrant
            raise VectorStoreUnavailable(str(exc)) from exc

    def close(self) -> None:
        """Release the client's connections."""
        with translated_errors("close the client"):
            self._client.close()


def qdrant_point(point: ChunkPoint) -> models.PointStruct:
    """A ChunkPoint as qdrant-client's point."""
    vectors = {DENSE: list(point.dense), SPARSE: qdrant_sparse(point.sparse)}
    return models.PointStruct(id=point.id, vector=vectors, payload=stored_payload(point))


def qdrant_sparse(vector: SparseVector) -> models.SparseVector:
    """Our sparse vector in qdrant-client's model."""
    return models.SparseVector(indices=list(vector.indices), values=list(vector.values))


def qdrant_filter(terms: list[tuple[str, str]]) -> models.Filter:
    """A filter every one of the (field, value) keyword matches must pass."""
    must: list[models.Condition] = [
        models.FieldCondition(key=field, match=models.MatchValue(value=value)) for field, value in terms
    ]
    return models.Filter(must=must)


def project_filter(project_id: str) -> models.Filter:
    """Just the project's points."""
    return qdrant_filter(project_terms(project_id))
