"""The qdrant-client back-end of the vector store: a Qdrant server or cluster by URL, or ":memory:".

The only module that imports qdrant_client; its errors are translated here, once.
"""

import math
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import httpx
from qdrant_client import QdrantClient, models
from qdrant_client.common.client_exceptions import QdrantException
from qdrant_client.http.exceptions import ApiException, UnexpectedResponse

from reactstep.tools.embedding.sparse import SparseVector
from reactstep.tools.errors import VectorStoreError, VectorStoreUnavailable
from reactstep.tools.vector_store.store import (
    DENSE,
    KEYWORD_FIELDS,
    NAME,
    PAGE_SIZE,
    POINT_FACTS,
    SPARSE,
    ChunkPoint,
    OneRankingSearches,
    Ranking,
    SearchFilter,
    VectorHit,
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

# HTTP statuses that mean the request was wrong, not that the server failed.
USAGE_STATUSES = frozenset({400, 404, 409, 422})


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


class QdrantVectorStore(OneRankingSearches):
    """Collections on a Qdrant server by URL, or in qdrant-client's ":memory:" mode."""

    def __init__(self, location: str, api_key: str | None = None, timeout_s: float = 10.0) -> None:
        # No compatibility probe here: constructing does no I/O, check() is the readiness probe.
        self._client = QdrantClient(
            location=location, api_key=api_key, timeout=math.ceil(timeout_s), check_compatibility=False
        )

    def ensure_collection(self, name: str, dimension: int, dense: Sequence[str] = (DENSE,)) -> None:
        """Create the collection and its payload indexes, or check the existing one's dimension.

        `dense` names its dense vectors, all of `dimension`.
        """
        check_collection_name(name)
        with translated_errors(f"set up collection {name!r}"):
            if not self._client.collection_exists(name):
                self._create_collection(name, dimension, dense)
                return
            vectors = self._client.get_collection(name).config.params.vectors
        params = vectors.get(DENSE) if isinstance(vectors, dict) else None
        check_dimension(name, params.size if params else None, dimension)

    def _create_collection(self, name: str, dimension: int, dense: Sequence[str]) -> None:
        params = models.VectorParams(size=dimension, distance=models.Distance.COSINE)
        self._client.create_collection(
            name,
            vectors_config=dict.fromkeys(dense, params),
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

    def project_points(
        self, collection: str, project_id: str, path_prefix: str | None = None
    ) -> dict[str, dict[str, Any]]:
        """Every point of the project (below `path_prefix`, if given): id -> POINT_FACTS, page by page."""
        terms = filter_terms(SearchFilter(project_id, path_prefix))
        facts: dict[str, dict[str, Any]] = {}
        offset: models.ExtendedPointId | None = None
        while True:
            with translated_errors(f"list the points of {collection!r}"):
                records, offset = self._client.scroll(
                    collection,
                    scroll_filter=qdrant_filter(terms),
                    limit=PAGE_SIZE,
                    offset=offset,
                    with_payload=POINT_FACTS,
                )
            facts.update(point_facts(records))
            if offset is None:
                return facts

    def dense_vectors(self, collection: str, ids: Sequence[str]) -> dict[str, list[float]]:
        """id -> dense vector of the points that exist among `ids`."""
        found: dict[str, list[float]] = {}
        for batch in batches(ids):
            with translated_errors(f"read vectors of {collection!r}"):
                records = self._client.retrieve(
                    collection, list(batch), with_payload=False, with_vectors=[DENSE]
                )
            found.update(dense_of(records))
        return found

    def update_payload(self, collection: str, updates: Mapping[str, dict[str, Any]]) -> None:
        """Overwrite some payload fields of some points (the vectors stay)."""
        for point_id, fields in updates.items():
            with translated_errors(f"update points of {collection!r}"):
                self._client.set_payload(collection, fields, points=[point_id], wait=True)

    def search_rankings(
        self, collection: str, rankings: Sequence[Ranking], where: SearchFilter, limit: int
    ) -> list[list[VectorHit]]:
        """Each ranking's `limit` best points, best first, in one round trip."""
        requests: dict[int, models.QueryRequest] = {}
        for n, ranking in enumerate(rankings):
            query: Any
            params = None
            if isinstance(ranking.vector, SparseVector):
                if not ranking.vector.indices:
                    continue  # no known word: no ranking
                query = qdrant_sparse(ranking.vector)
                params = models.SearchParams(
                    idf=models.IdfCorpusParams(corpus=project_filter(where.project_id))
                )
            else:
                query = list(ranking.vector)
            requests[n] = models.QueryRequest(
                query=query,
                using=ranking.using,
                filter=qdrant_filter(filter_terms(where)),
                params=params,
                limit=limit,
                with_payload=True,
            )
        answers: list[list[VectorHit]] = [[] for _ in rankings]
        if requests:
            with translated_errors(f"search {collection!r}"):
                found = self._client.query_batch_points(collection, requests=list(requests.values()))
            for n, response in zip(requests, found, strict=True):
                answers[n] = [
                    VectorHit(str(hit.id), hit.score, returned_payload(hit.payload))
                    for hit in response.points
                ]
        return answers

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
    vectors: dict[str, Any] = {DENSE: list(point.dense), SPARSE: qdrant_sparse(point.sparse)}
    if point.name is not None:
        vectors[NAME] = list(point.name)
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
