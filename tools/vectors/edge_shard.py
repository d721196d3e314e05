"""One collection of the embedded store on disk: the store's lock file and a shard's creation and checks.

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

from reactstep.tools.vectors.store import (
    DENSE,
    KEYWORD_FIELDS,
    SPARSE,
    VectorStoreError,
    VectorStoreUnavailable,
)

LOCK_FILE = "store.lock"


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
    """Create a collection's shard with its payload indexes, or load one and check its config."""
    if not directory.is_dir():
        with engine_errors(f"create collection {name!r}"):
            shard = edge.EdgeShard.create(str(directory), shard_config(dimension, dense))
            for field in KEYWORD_FIELDS:
                schema = edge.KeywordIndexParams(is_tenant=field == "project_id")
                shard.update(edge.UpdateOperation.create_field_index(field, schema))
        return shard
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
    """Dense cosine vectors of `dimension`, one per name in `dense`, and an IDF-weighted sparse vector."""
    return edge.EdgeConfig(
        vectors={
            using: edge.EdgeVectorParams(size=dimension, distance=edge.Distance.Cosine) for using in dense
        },
        sparse_vectors={SPARSE: edge.EdgeSparseVectorParams(modifier=edge.Modifier.Idf)},
    )


@contextmanager
def engine_errors(action: str) -> Iterator[None]:
    """Turn whatever the engine raises into VectorStoreUnavailable, once."""
    try:
        yield
    except (VectorStoreError, VectorStoreUnavailable):
        raise
    except Exception as exc:  # qdrant-edge raises nothing narrower
        raise VectorStoreUnavailable(f"the embedded vector engine could not {action}: {exc}") from exc
