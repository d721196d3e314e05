"""The embedded store's optimization: a child process optimizes a copy, which is swapped in only while
it is current, and searches go on through it."""

import logging
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from reactstep.tools.embedding.sparse import encode_document, encode_query
from reactstep.tools.errors import VectorStoreUnavailable
from reactstep.tools.vector_store.edge import EdgeVectorStore
from reactstep.tools.vector_store.edge_optimize import STAGING, OptimizeStopped
from reactstep.tools.vector_store.store import (
    CHUNK_VECTORS,
    DENSE,
    NAME,
    SPARSE,
    ChunkPoint,
    Ranking,
    SearchFilter,
    VectorHit,
)

COLLECTION = "chunks"
DIM = 384
POINTS = 8_000  # enough float bytes for the engine's optimizer to take the segment (~6,600 at 384-d)
ALPHA = SearchFilter("alpha")


def unit_rows(count: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((count, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def points(count: int, first: int = 0) -> list[ChunkPoint]:
    """`count` chunks of project alpha with random unit chunk and name vectors."""
    dense, names = unit_rows(count, first + 1), unit_rows(count, first + 2)
    return [
        ChunkPoint(
            str(uuid.UUID(int=first + n + 1)),
            dense[n].tolist(),
            encode_document(f"def handler_{n % 50}(request): return parse_{n % 7}(request)"),
            {"project_id": "alpha", "path": f"src/m{(first + n) // 10}.py", "symbol": f"handler_{n}"},
            name=names[n].tolist(),
        )
        for n in range(count)
    ]


@pytest.fixture(scope="module")
def written() -> list[ChunkPoint]:
    return points(POINTS)


@pytest.fixture
def store(tmp_path: Path, written: list[ChunkPoint]) -> Iterator[EdgeVectorStore]:
    """A store holding POINTS chunks in one plain segment; no background optimizer."""
    made = EdgeVectorStore(tmp_path / "vectors", optimize_after=0)
    made.ensure_collection(COLLECTION, DIM, CHUNK_VECTORS)
    made.upsert(COLLECTION, written)
    yield made
    made.close()


def rankings(seed: int) -> list[Ranking]:
    query = unit_rows(1, 1000 + seed)[0].tolist()
    return [Ranking(DENSE, query), Ranking(NAME, query), Ranking(SPARSE, encode_query("parse_3 handler_8"))]


def top(store: EdgeVectorStore, seed: int, limit: int = 10) -> list[list[str]]:
    """The ids each of the three rankings finds first."""
    found = store.search_rankings(COLLECTION, rankings(seed), ALPHA, limit)
    return [[hit.id for hit in hits] for hits in found]


def test_optimize_swaps_in_a_copy_that_answers_alike(store: EdgeVectorStore, tmp_path: Path) -> None:
    before = [top(store, seed) for seed in range(20)]
    assert store.unoptimized(COLLECTION) == POINTS
    assert store.optimize(COLLECTION) == "optimized"
    assert store.unoptimized(COLLECTION) == 0
    # The dense rankings scan int8 copies and rescore in floats; the top 10 stays exact here.
    assert [top(store, seed) for seed in range(20)] == before
    assert store.count(COLLECTION, "alpha") == POINTS
    assert store.collections() == [COLLECTION]
    assert not (tmp_path / "vectors" / STAGING).exists()
    assert store.optimize(COLLECTION) == "unchanged"
    store.upsert(COLLECTION, points(3, first=POINTS))  # writes go on into a new plain segment
    assert store.count(COLLECTION, "alpha") == POINTS + 3
    assert store.unoptimized(COLLECTION) == 3


def test_an_optimized_collection_reopens(store: EdgeVectorStore, tmp_path: Path) -> None:
    assert store.optimize(COLLECTION) == "optimized"
    before = [top(store, seed) for seed in range(5)]
    store.close()
    reopened = EdgeVectorStore(tmp_path / "vectors", optimize_after=0)
    try:
        reopened.ensure_collection(COLLECTION, DIM, CHUNK_VECTORS)
        assert [top(reopened, seed) for seed in range(5)] == before
        assert reopened.unoptimized(COLLECTION) == 0
    finally:
        reopened.close()


def when_copied(tmp_path: Path) -> None:
    """Wait until an optimization has started copying the collection."""
    deadline = time.monotonic() + 60
    while not (tmp_path / "vectors" / STAGING / COLLECTION).exists():
        assert time.monotonic() < deadline, "the optimization never started"
        time.sleep(0.005)


def test_a_write_during_the_optimization_makes_the_copy_stale(store: EdgeVectorStore, tmp_path: Path) -> None:
    outcome: list[str] = []
    running = threading.Thread(target=lambda: outcome.append(store.optimize(COLLECTION)))
    running.start()
    when_copied(tmp_path)
    late = points(1, first=POINTS)
    store.upsert(COLLECTION, late)  # waits for the copy, then lands while the child optimizes it
    running.join()
    assert outcome == ["stale"]
    assert store.count(COLLECTION, "alpha") == POINTS + 1  # the live shard kept the write
    assert store.dense_vectors(COLLECTION, [late[0].id]) == {late[0].id: pytest.approx(late[0].dense)}
    assert not (tmp_path / "vectors" / STAGING).exists()


def test_searches_go_on_while_a_collection_is_optimized(store: EdgeVectorStore) -> None:
    expected = top(store, 0)
    answers: list[list[list[str]]] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def search() -> None:
        while not done.is_set():
            try:
                answers.append(top(store, 0))
            except BaseException as exc:  # collected and asserted below
                errors.append(exc)
            time.sleep(0.01)  # a search holds the GIL: leave the optimization its turns

    searcher = threading.Thread(target=search)
    searcher.start()
    try:
        assert store.optimize(COLLECTION) == "optimized"
    finally:
        done.set()
        searcher.join()
    assert errors == []
    assert len(answers) > 10 and all(answer == expected for answer in answers)


def test_closing_the_store_ends_a_running_optimization(store: EdgeVectorStore, tmp_path: Path) -> None:
    failures: list[BaseException] = []

    def optimize() -> None:
        try:
            store.optimize(COLLECTION)
        except VectorStoreUnavailable as exc:
            failures.append(exc)

    running = threading.Thread(target=optimize)
    running.start()
    when_copied(tmp_path)
    time.sleep(0.2)  # the child has started
    store.close()
    running.join(timeout=30)
    assert not running.is_alive()
    assert [type(failure) for failure in failures] == [OptimizeStopped]
    reopened = EdgeVectorStore(tmp_path / "vectors", optimize_after=0)
    try:
        assert reopened.count(COLLECTION, "alpha") == POINTS
        assert not (tmp_path / "vectors" / STAGING).exists()
    finally:
        reopened.close()


def test_closing_during_a_background_optimization_is_no_failure(
    tmp_path: Path, written: list[ChunkPoint], caplog: pytest.LogCaptureFixture
) -> None:
    store = EdgeVectorStore(tmp_path / "vectors", optimize_after=POINTS, optimize_quiet_s=0.0)  # all written
    store.ensure_collection(COLLECTION, DIM, CHUNK_VECTORS)
    with caplog.at_level(logging.INFO, logger="reactstep.vectors"):
        store.upsert(COLLECTION, written)
        when_copied(tmp_path)
        time.sleep(0.2)  # the child has started
        store.close()
    logged = [(record.levelname, record.getMessage()) for record in caplog.records]
    assert logged == [("INFO", "optimizing collection 'chunks' stopped: the vector store is closing")]


def test_the_store_optimizes_once_writes_go_quiet(tmp_path: Path, written: list[ChunkPoint]) -> None:
    store = EdgeVectorStore(tmp_path / "vectors", optimize_after=POINTS // 2, optimize_quiet_s=0.2)
    try:
        store.ensure_collection(COLLECTION, DIM, CHUNK_VECTORS)
        store.upsert(COLLECTION, written)
        deadline = time.monotonic() + 60
        while store.unoptimized(COLLECTION):
            assert time.monotonic() < deadline, "the background optimizer never ran"
            time.sleep(0.05)
        hits: list[VectorHit] = store.search_dense(COLLECTION, written[5].dense, ALPHA, 1)
        assert [hit.id for hit in hits] == [written[5].id]
    finally:
        store.close()


def test_a_store_that_never_optimizes_keeps_its_plain_segment(
    tmp_path: Path, written: list[ChunkPoint]
) -> None:
    store = EdgeVectorStore(tmp_path / "vectors", optimize_after=0, optimize_quiet_s=0.0)
    try:
        store.ensure_collection(COLLECTION, DIM, CHUNK_VECTORS)
        store.upsert(COLLECTION, written)
        time.sleep(0.5)
        assert store.unoptimized(COLLECTION) == POINTS
    finally:
        store.close()
