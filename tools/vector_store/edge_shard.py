"""One collection of the embedded store on disk: the store's lock file and a shard's creation and checks.

Dense vectors carry an int8 scalar quantization and an HNSW config of m=0 (no graph): when the
optimizer runs (edge_optimize.py, in a child process) it turns the appendable segment into one whose
dense vectors are also kept as int8, and a search scans those (a quarter of the bytes) and rescores
its best with the float vectors (edge_requests.dense_search_params). Until then points sit in a plain
appendable segment, which a search scans in float. bench/code_search_latency.py: at 100k chunks one
dense search took 10-11 ms on the float scan and 3-5 ms on the int8 one.

Vectors and their int8 copies are mmapped files the engine does not read in at load ("Cold"): the
engine holds the GIL while it loads, and reading 100k chunks' vectors in took 1-9 s there. We read the
files first (warm_files; a plain read lets other threads run), so the page cache holds them and the
engine's load takes ~0.1 s.

Everything the engine raises here becomes VectorStoreUnavailable, except a shard made for other
vectors (VectorStoreError: another collection name is needed for another embedding model).
"""

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import qdrant_edge as edge

from reactstep.tools.errors import VectorStoreError, VectorStoreUnavailable
from reactstep.tools.vector_store.store import (
    DENSE,
    KEYWORD_FIELDS,
    SPARSE,
)

LOCK_FILE = "store.lock"
WARM_READ = 1 << 20


def lock_directory(root: Path) -> IO[str]:
    """Take the store's lock file (exclusive, non-blocking) and write our pid in it."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        # "a+" keeps the owner's pid for the message; the handle lives as long as the store.
        handle = open(root / LOCK_FILE, "a+", encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        raise VectorStoreUnavailable(f"cannot open the vector store at {root}: {exc}") from exc
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        handle.seek(0)
        owner = handle.read().strip() or "unknown"
        handle.close()
        raise VectorStoreUnavailable(
            f"the vector store at {root} is in use by another process (pid {owner}); run one server "
            "per data dir or use a Qdrant server (REACTSTEP_VECTOR_BACKEND=qdrant)"
        ) from exc
    handle.truncate(0)
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


def open_shard(
    directory: Path, name: str, dimension: int, dense: tuple[str, ...] = (DENSE,)
) -> edge.EdgeShard:
    """Create a collection's shard with its payload indexes, or load one (its files read first) and
    check its config."""
    if not directory.is_dir():
        with engine_errors(f"create collection {name!r}"):
            shard = edge.EdgeShard.create(str(directory), shard_config(dimension, dense))
            for field in KEYWORD_FIELDS:
                schema = edge.KeywordIndexParams(is_tenant=field == "project_id")
                shard.update(edge.UpdateOperation.create_field_index(field, schema))
        return shard
    warm_files(directory)
    try:
        return edge.EdgeShard.load(str(directory), shard_config(dimension, dense))
    except Exception as exc:  # qdrant-edge raises nothing narrower
        if "incompatible" in str(exc).lower():
            raise VectorStoreError(
                f"collection {name!r} was made for other vectors, not {dimension}-dimensional dense plus "
                f"IDF sparse; use another collection name for another embedding model ({exc})"
            ) from exc
        raise VectorStoreUnavailable(f"cannot load collection {name!r}: {exc}") from exc


def shard_config(dimension: int, dense: tuple[str, ...] = (DENSE,)) -> edge.EdgeConfig:
    """Dense cosine vectors of `dimension`, one per name in `dense` (int8-quantized once optimized, no
    HNSW graph), and an IDF-weighted sparse vector."""
    quantized = edge.ScalarQuantizationConfig(
        type=edge.ScalarType.Int8, quantile=0.99, memory=edge.Memory.Cold
    )
    return edge.EdgeConfig(
        vectors={
            using: edge.EdgeVectorParams(
                size=dimension,
                distance=edge.Distance.Cosine,
                quantization_config=quantized,
                memory=edge.Memory.Cold,
            )
            for using in dense
        },
        sparse_vectors={SPARSE: edge.EdgeSparseVectorParams(modifier=edge.Modifier.Idf)},
        # m=0 builds no graph: a filtered scan over int8 is exact enough and an optimize takes seconds
        # (a graph for 100k points took 106 s on 2 cores).
        hnsw_config=edge.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10_000),
    )


def warm_files(directory: Path) -> None:
    """Read every file under `directory` once, so the page cache holds what the engine will map."""
    for folder, _, files in os.walk(directory):
        for file in files:
            try:
                with open(os.path.join(folder, file), "rb", buffering=0) as handle:
                    while handle.read(WARM_READ):
                        pass
            except OSError:
                pass  # the engine reports what it cannot read


def unoptimized_points(info: "edge.ShardInfo", dense_vectors: int) -> int:
    """About how many points sit in plain segments: the engine counts a plain segment's sparse vectors
    as indexed but not its dense ones (points deleted from optimized segments make it an underestimate)."""
    vectors_per_point = dense_vectors + 1
    return max(0, (info.points_count * vectors_per_point - info.indexed_vectors_count) // dense_vectors)


@contextmanager
def engine_errors(action: str) -> Iterator[None]:
    """Turn whatever the engine raises into VectorStoreUnavailable, once."""
    try:
        yield
    except (VectorStoreError, VectorStoreUnavailable):
        raise
    except Exception as exc:  # qdrant-edge raises nothing narrower
        raise VectorStoreUnavailable(f"the embedded vector engine could not {action}: {exc}") from exc
