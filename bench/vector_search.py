"""Vector store speed: qdrant-edge (embedded) against qdrant-client's local mode, through VectorStore.

Run: .venv/bin/python bench/vector_search.py [--sizes 10000 100000] [--queries 200] [--local-max 10000]
Points: random 384-dim unit vectors plus BM25 sparse vectors of synthetic code (camelCase and
snake_case identifiers over a Zipf vocabulary, about 50 identifiers a chunk), spread over 10
projects; every search filters to one project (10% of the points). Local mode scans in Python,
so it runs only up to --local-max points. Each query series stops after --budget-s seconds.
"""

import argparse
import itertools
import platform
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from stats import machine, percentile

from reactstep.tools.embedding.sparse import SparseVector, encode_document, encode_query
from reactstep.tools.vector_store.edge import EdgeVectorStore
from reactstep.tools.vector_store.qdrant import QdrantVectorStore
from reactstep.tools.vector_store.store import ChunkPoint, SearchFilter, VectorStore

DIM = 384
PROJECTS = 10
POOL = 10_000  # distinct chunk texts; a project never holds the same text twice
VOCABULARY = 5_000
COLLECTION = "bench"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--local-max", type=int, default=10_000)
    parser.add_argument("--budget-s", type=float, default=20.0)
    args = parser.parse_args()
    print(f"{machine()}, {platform.platform()}")
    rng = random.Random(7)
    words = make_vocabulary(rng)
    started = time.perf_counter()
    cumulative = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(words))))  # Zipf
    texts = [make_chunk_text(rng, words, cumulative) for _ in range(POOL)]
    sparse = [encode_document(text) for text in texts]
    print(
        f"corpus: {POOL} chunk texts, {sum(len(v.indices) for v in sparse) / POOL:.0f} unique tokens each, "
        f"made in {time.perf_counter() - started:.1f} s"
    )
    for size in args.sizes:
        points = make_points(size, sparse, np.random.default_rng(size))
        backends: list[tuple[str, Callable[[Path], VectorStore]]] = [("edge", EdgeVectorStore)]
        if size <= args.local_max:
            backends.append(("qdrant-client :memory:", lambda _: QdrantVectorStore(":memory:")))
        for name, make_store in backends:
            with tempfile.TemporaryDirectory() as directory:
                store = make_store(Path(directory))
                try:
                    measure(name, store, points, texts, rng, args)
                finally:
                    store.close()


def make_vocabulary(rng: random.Random) -> list[str]:
    """Lowercase pseudo-words of 3 to 8 letters, most frequent first."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choices(letters, k=rng.randint(3, 8))) for _ in range(VOCABULARY)]


def make_chunk_text(rng: random.Random, words: list[str], cumulative: list[float]) -> str:
    """About 50 identifiers of one to three Zipf-drawn words, camelCase or snake_case."""
    identifiers = []
    for _ in range(rng.randint(30, 70)):
        parts = rng.choices(words, cum_weights=cumulative, k=rng.randint(1, 3))
        joined = "_".join(parts) if rng.random() < 0.5 else parts[0] + "".join(p.title() for p in parts[1:])
        identifiers.append(joined)
    return " ".join(identifiers)


def make_points(size: int, sparse: list[SparseVector], rng: np.random.Generator) -> list[ChunkPoint]:
    """`size` points: point n is in project n % 10 and has chunk text (n // 10) % POOL."""
    dense = rng.standard_normal((size, DIM), dtype=np.float32)
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    return [
        ChunkPoint(
            str(uuid.UUID(int=n + 1)),
            dense[n].tolist(),
            sparse[(n // PROJECTS) % POOL],
            {
                "project_id": f"p{n % PROJECTS}",
                "path": f"src/m{n % 50}/f{n}.py",
                "language": "python",
                "content_hash": str(n),
            },
        )
        for n in range(size)
    ]


def measure(
    name: str,
    store: VectorStore,
    points: list[ChunkPoint],
    texts: list[str],
    rng: random.Random,
    args: argparse.Namespace,
) -> None:
    """Upsert every point, then time filtered dense and sparse searches."""
    store.ensure_collection(COLLECTION, DIM)
    started = time.perf_counter()
    store.upsert(COLLECTION, points)
    rate = len(points) / (time.perf_counter() - started)
    print(f"{name} @ {len(points)} points: upsert {rate:,.0f} points/s")
    query_rng = np.random.default_rng(1)

    def dense_query() -> None:
        vector = query_rng.standard_normal(DIM)
        where = SearchFilter(f"p{rng.randrange(PROJECTS)}")
        store.search_dense(COLLECTION, (vector / np.linalg.norm(vector)).tolist(), where, 10)

    def sparse_query() -> None:
        identifiers = rng.choice(texts).split()
        query = " ".join(rng.sample(identifiers, 2))
        store.search_sparse(COLLECTION, encode_query(query), SearchFilter(f"p{rng.randrange(PROJECTS)}"), 10)

    for kind, run in (("dense", dense_query), ("sparse", sparse_query)):
        print(f"  {kind} search, 10% filter, top 10: {time_series(run, args.queries, args.budget_s)}")


def time_series(run: Callable[[], None], count: int, budget_s: float) -> str:
    """'p50 X ms, p95 Y ms (n=N)' over up to `count` calls within `budget_s` seconds."""
    run()  # warm-up: first-call costs (loading, caches) are not steady-state latency
    samples: list[float] = []
    deadline = time.perf_counter() + budget_s
    while len(samples) < count and time.perf_counter() < deadline:
        started = time.perf_counter()
        run()
        samples.append((time.perf_counter() - started) * 1000)
    return f"p50 {percentile(samples, 0.5):.2f} ms, p95 {percentile(samples, 0.95):.2f} ms (n={len(samples)})"


if __name__ == "__main__":
    main()
