"""The embedded vector store: Qdrant's engine in-process (qdrant-edge), one on-disk shard per collection.

    <path>/store.lock      held (flock) by the one process that owns the store; holds its pid
    <path>/<collection>/   an EdgeShard: segments, WAL and the engine's config
    <path>/.optimizing/    a copy being optimized in a child process (edge_optimize.py)

qdrant-edge raises plain `Exception` for every failure, so only what this module checks itself
(names, dimensions, unknown collections, an incompatible existing shard) is a VectorStoreError;
anything else the engine raises means it failed: VectorStoreUnavailable. The engine runs no
background optimizer of its own; ours (edge_optimize.py) makes dense searches scan int8 copies.
"""

import shutil
import threading
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import qdrant_edge as edge

from reactstep.tools.embedding.sparse import SparseVector
from reactstep.tools.errors import VectorStoreError, VectorStoreUnavailable
from reactstep.tools.vector_store.edge_optimize import (
    STAGING,
    CopyOptimizer,
    OptimizeScheduler,
    Outcome,
    SwapGate,
    copy_shard,
    swap_folders,
)
from reactstep.tools.vector_store.edge_requests import edge_filter, edge_point, projects_of, search_batch
from reactstep.tools.vector_store.edge_shard import (
    engine_errors,
    lock_directory,
    open_shard,
    unoptimized_points,
    warm_files,
)
from reactstep.tools.vector_store.store import (
    DENSE,
    PAGE_SIZE,
    POINT_FACTS,
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
)


class EdgeVectorStore(OneRankingSearches):
    """Collections as qdrant-edge shards under `path`, owned by this process until close(); one is
    optimized in the background once `optimize_after` points (0: never) were written to it and no
    write came for `optimize_quiet_s` seconds."""

    def __init__(self, path: Path, optimize_after: int = 10_000, optimize_quiet_s: float = 2.0) -> None:
        self._root = Path(path)
        self._lock = lock_directory(self._root)
        shutil.rmtree(self._root / STAGING, ignore_errors=True)  # a copy left by a process that died
        self._guard = threading.Lock()  # guards the dicts and the child, not the shards
        self._shards: dict[str, edge.EdgeShard] = {}
        self._dimensions: dict[str, int] = {}  # known once ensure_collection has checked them
        self._dense: dict[str, tuple[str, ...]] = {}  # the dense vector names, idem
        self._writing = threading.Lock()  # one write at a time; held by an optimization's copy and swap
        self._writes: dict[str, int] = {}  # writes per collection: a copy made before one is stale
        self._holders: dict[str, list[str]] = {}  # up to two projects with points, per collection
        self._gate = SwapGate()
        self._optimizer = CopyOptimizer(self._root / STAGING)
        self._scheduler = OptimizeScheduler(self.optimize, optimize_after, optimize_quiet_s)
        self._closed = False

    def ensure_collection(self, name: str, dimension: int, dense: Sequence[str] = (DENSE,)) -> None:
        """Create the collection's shard and indexes, or load it and check its dimension; `dense`
        names its dense vectors, all of `dimension` (a shard made with others fails to load)."""
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
            self._shards[name] = shard = open_shard(self._root / name, name, dimension, tuple(dense))
            self._dimensions[name], self._dense[name] = dimension, tuple(dense)
        with engine_errors(f"read collection {name!r}"):
            self._scheduler.written(name, unoptimized_points(shard.info(), len(dense)))

    def upsert(self, collection: str, points: Sequence[ChunkPoint]) -> None:
        """Insert or replace points, BATCH_SIZE per update."""
        for batch in batches(points):
            for point in batch:
                self._check_vector(collection, point.dense)
                if point.name is not None:
                    self._check_vector(collection, point.name)
            records = [edge_point(point) for point in batch]
            self._write(collection, edge.UpdateOperation.upsert_points(records), len(records))

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Remove points by id; unknown ids are ignored."""
        for batch in batches(ids):
            self._write(collection, edge.UpdateOperation.delete_points(list(batch)), len(batch))

    def project_points(
        self, collection: str, project_id: str, path_prefix: str | None = None
    ) -> dict[str, dict[str, Any]]:
        """Every point of the project (below `path_prefix`, if given): id -> POINT_FACTS, page by page."""
        terms = filter_terms(SearchFilter(project_id, path_prefix))
        facts: dict[str, dict[str, Any]] = {}
        offset: Any = None
        while True:
            request = edge.ScrollRequest(
                offset=offset,
                limit=PAGE_SIZE,
                filter=edge_filter(terms),
                with_payload=POINT_FACTS,
            )
            with self._gate.shared(), engine_errors(f"list the points of {collection!r}"):
                records, offset = self._shard(collection).scroll(request)
            facts.update(point_facts(records))
            if offset is None:
                return facts

    def dense_vectors(self, collection: str, ids: Sequence[str]) -> dict[str, list[float]]:
        """id -> dense vector of the points that exist among `ids`."""
        found: dict[str, list[float]] = {}
        for batch in batches(ids):
            with self._gate.shared(), engine_errors(f"read vectors of {collection!r}"):
                records = self._shard(collection).retrieve(list(batch), False, [DENSE])
            found.update(dense_of(records))
        return found

    def update_payload(self, collection: str, updates: Mapping[str, dict[str, Any]]) -> None:
        """Overwrite some payload fields of some points (the vectors stay)."""
        for point_id, fields in updates.items():
            self._write(collection, edge.UpdateOperation.set_payload([point_id], fields), 0)

    def search_rankings(
        self, collection: str, rankings: Sequence[Ranking], where: SearchFilter, limit: int
    ) -> list[list[VectorHit]]:
        """Each ranking's `limit` best points, best first, from one batch (one pass over the segments)."""
        for ranking in rankings:
            if not isinstance(ranking.vector, SparseVector):
                self._check_vector(collection, ranking.vector)
        with self._gate.shared(), engine_errors(f"search {collection!r}"):
            shard = self._shard(collection)
            if (holders := self._holders.get(collection)) is None:  # known again after every write
                writes, holders = self._writes.get(collection), projects_of(shard)
                if self._writes.get(collection) == writes:  # else a write came meanwhile: ask next time
                    self._holders[collection] = holders
            return search_batch(shard, rankings, where, limit, alone=holders == [where.project_id])

    def count(self, collection: str, project_id: str) -> int:
        """How many points the project has."""
        request = edge.CountRequest(exact=True, filter=edge_filter(project_terms(project_id)))
        with self._gate.shared(), engine_errors(f"count points in {collection!r}"):
            return self._shard(collection).count(request)

    def collections(self) -> list[str]:
        """Every collection's name, sorted: the shard directories under the store's path."""
        with self._guard:
            self._check_open()
        return sorted(
            entry.name for entry in self._root.iterdir() if entry.is_dir() and entry.name != STAGING
        )

    def check(self) -> None:
        """Raise VectorStoreUnavailable unless the store is open and its shards answer."""
        with self._gate.shared():
            with self._guard:
                self._check_open()
                shards = list(self._shards.items())
            for name, shard in shards:
                with engine_errors(f"read collection {name!r}"):
                    shard.info()

    def unoptimized(self, name: str) -> int:
        """About how many points of a collection wait in plain segments (scanned as floats)."""
        with self._gate.shared(), engine_errors(f"read collection {name!r}"):
            info = self._shard(name).info()
        with self._guard:
            dense = len(self._dense.get(name, (DENSE,)))
        return unoptimized_points(info, dense)

    def optimize(self, name: str) -> Outcome:
        """Optimize a collection made by ensure_collection in a child process, on a copy, and swap the
        copy in unless a write came meanwhile ("stale"). Runs on the caller's thread for as long as
        it takes (seconds at 100k points); searches and writes go on meanwhile, but for the copy
        (writes wait) and the swap (searches wait)."""
        with self._guard:
            self._check_open()
            if name not in self._dense:
                raise VectorStoreError(f"collection {name!r} is not open; call ensure_collection first")
            dimension, dense = self._dimensions[name], self._dense[name]
        outcome = self._optimizer.run(
            name, dimension, dense, partial(self._copy, name), partial(self._swap, name, dimension, dense)
        )
        if outcome != "stale":
            self._scheduler.optimized(name)
        return outcome

    def close(self) -> None:
        """Flush and close every shard, then release the directory lock; a second close is a no-op."""
        with self._guard:
            if self._closed:
                return
            self._closed = True
        self._optimizer.stop()  # a running optimization fails and ends
        self._scheduler.stop()
        with self._writing, self._guard:
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
                warm_files(directory)
                with engine_errors(f"load collection {name!r}"):
                    shard = self._shards[name] = edge.EdgeShard.load(str(directory))
            return shard

    def _write(self, collection: str, operation: edge.UpdateOperation, points: int) -> None:
        """Apply one update, counted for the optimizer (`points` written or deleted)."""
        with self._writing:
            shard = self._shard(collection)
            self._writes[collection] = self._writes.get(collection, 0) + 1
            self._holders.pop(collection, None)
            with engine_errors(f"write to {collection!r}"):
                shard.update(operation)
        self._scheduler.written(collection, points)

    def _copy(self, name: str, staging: Path) -> int:
        """Flush the collection and copy it to `staging`; how many writes it had then."""
        with self._writing:
            with engine_errors(f"flush collection {name!r}"):
                self._shard(name).flush()
            copy_shard(self._root / name, staging)
            return self._writes.get(name, 0)

    def _swap(self, name: str, dimension: int, dense: tuple[str, ...], staging: Path, writes: int) -> bool:
        """Put the optimized copy at `staging` in place of the live shard, unless a write came since
        the copy (False)."""
        live = self._root / name
        with self._writing, self._gate.exclusive():
            if self._writes.get(name, 0) != writes:
                return False
            with self._guard:
                self._check_open()
                old = self._shards.pop(name)
            with engine_errors(f"close collection {name!r}"):
                old.close()
            # On failure the old folder is back in place, and _shard loads it on next use.
            shard = swap_folders(live, staging, lambda: open_shard(live, name, dimension, dense))
            with self._guard:
                self._shards[name] = shard
        return True

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
