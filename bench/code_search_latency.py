"""code_search latency at 100k chunks, end to end: query embedding, the three searches, fusion, file checks
and rendering, through run_execute_action as the HTTP route calls it.

Run: .venv/bin/python bench/code_search_latency.py [--chunks 100000] [--queries 200]
One project of --chunks synthetic chunks (10 per file; the files exist in the store, so the freshness
check does its real HEADs): random unit dense and name vectors and BM25 vectors of synthetic code
(bench/vector_search.py's generator), written straight to the embedded store in the product's
collection, so building it embeds nothing. Queries are English phrases plus two identifiers of the
corpus. Prints p50/p95 of the whole call, of the query embedding, of each search alone and of the three in one
batch (as code_search asks for them): first on the store as written (one plain segment), then after the
store's optimization (int8 copies of the dense vectors, made in a child process as the server's background
optimizer makes them), with how long that took and the longest this process went unscheduled meanwhile.
"""

import argparse
import itertools
import os
import random
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from stats import machine, percentile
from vector_search import POOL, make_chunk_text, make_vocabulary

from reactstep.contract.actions import ExecuteActionRequest
from reactstep.service.backends import vector_config
from reactstep.service.runtime import Runtime, build_runtime
from reactstep.service.settings import Settings
from reactstep.service.workspace.actions import run_execute_action
from reactstep.tools.embedding.sparse import encode_document, encode_query
from reactstep.tools.ranking.retrieval import CANDIDATES, collection_name
from reactstep.tools.vector_store.backend_choice import open_vector_store
from reactstep.tools.vector_store.store import (
    CHUNK_VECTORS,
    DENSE,
    NAME,
    SPARSE,
    ChunkPoint,
    Ranking,
    SearchFilter,
)

PROJECT = "big"
CHUNKS_PER_FILE = 10
LINES = 12
PHRASES = ("parse the response", "retry a request", "validate the field", "open the file", "cache the value")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as work:
        # The bench optimizes itself (below), not when the background optimizer would.
        settings = Settings(data_dir=Path(work) / "data")
        vectors = open_vector_store(replace(vector_config(settings), optimize_after=0))
        runtime = build_runtime(settings, vectors=vectors)
        texts = build(runtime, args.chunks)
        print("-- as written: one plain segment")
        measure(runtime, texts, args.queries)
        optimize(runtime)
        print("-- optimized")
        measure(runtime, texts, args.queries)
        runtime.vectors.close()
    print(f"load average (1, 5, 15 min) at the end: {os.getloadavg()}")


def build(runtime: Runtime, chunks: int) -> list[str]:
    """The project, its files and its points; the chunk texts."""
    started = time.perf_counter()
    rng = random.Random(7)
    words = make_vocabulary(rng)
    cumulative = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(words))))
    texts = [make_chunk_text(rng, words, cumulative) for _ in range(POOL)]
    sparse = [encode_document(text) for text in texts]
    runtime.projects.create(PROJECT)
    vectors, collection = runtime.vectors.get(), collection_name(runtime.embedder)
    vectors.ensure_collection(collection, runtime.embedder.dimension, CHUNK_VECTORS)
    dense = np.random.default_rng(1).standard_normal((chunks, 384), dtype=np.float32)
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    names = np.random.default_rng(2).standard_normal((chunks, 384), dtype=np.float32)
    names /= np.linalg.norm(names, axis=1, keepdims=True)
    for first in range(0, chunks, 10_000):
        points = []
        for file in range(first // CHUNKS_PER_FILE, min(chunks, first + 10_000) // CHUNKS_PER_FILE):
            path = f"src/pkg{file % 100}/module{file}.py"
            body = [texts[(file * CHUNKS_PER_FILE + n) % POOL] for n in range(CHUNKS_PER_FILE)]
            info = runtime.store.put(
                PROJECT, path, "\n".join(line for text in body for line in [text] * LINES).encode()
            )
            for n, text in enumerate(body):
                index = file * CHUNKS_PER_FILE + n
                payload = {
                    "project_id": PROJECT,
                    "path": path,
                    "start_line": n * LINES + 1,
                    "end_line": (n + 1) * LINES,
                    "language": "python",
                    "symbol": text.split()[0],
                    "kind": "function",
                    "signature": f"def {text.split()[0]}():",
                    "content_hash": str(index),
                    "content": "\n".join([text] * LINES),
                    "file_etag": info.etag,
                    "file_chunks": CHUNKS_PER_FILE,
                }
                points.append(
                    ChunkPoint(
                        str(uuid.UUID(int=index + 1)),
                        dense[index].tolist(),
                        sparse[index % POOL],
                        payload,
                        name=names[index].tolist(),
                    )
                )
        vectors.upsert(collection, points)
    runtime.projects.mark_indexed(PROJECT, 0, collection)
    print(
        f"project: {chunks} chunks in {chunks // CHUNKS_PER_FILE} files, "
        f"built in {time.perf_counter() - started:.0f} s"
    )
    return texts


def optimize(runtime: Runtime) -> None:
    """Optimize the collection as the background optimizer does, timing this process's longest pause."""
    optimize_collection = getattr(runtime.vectors.get(), "optimize", None)
    if optimize_collection is None:
        print("this vector store optimizes itself")
        return
    pauses: list[float] = []
    done = threading.Event()

    def tick() -> None:
        last = time.perf_counter()
        while not done.wait(0.005):
            now = time.perf_counter()
            pauses.append(now - last)
            last = now

    ticker = threading.Thread(target=tick)
    ticker.start()
    started = time.perf_counter()
    outcome = optimize_collection(collection_name(runtime.embedder))
    took = time.perf_counter() - started
    done.set()
    ticker.join()
    print(
        f"optimize: {outcome} in {took:.1f} s; the longest this process went without running a thread "
        f"meanwhile: {max(pauses) * 1000:.0f} ms (a 5 ms ticker)"
    )


def measure(runtime: Runtime, texts: list[str], count: int) -> None:
    rng = random.Random(3)
    whole: list[float] = []
    embedding: list[float] = []
    dense: list[float] = []
    named_ms: list[float] = []
    sparse: list[float] = []
    batch: list[float] = []
    vectors, collection, where = (
        runtime.vectors.get(),
        collection_name(runtime.embedder),
        SearchFilter(PROJECT),
    )
    for n in range(count + 5):
        identifiers = rng.choice(texts).split()
        query = f"{PHRASES[n % len(PHRASES)]} {' '.join(rng.sample(identifiers, 2))}"
        request = ExecuteActionRequest(
            project_id=PROJECT, session_id="s", tool_name="code_search", tool_args={"query": query}
        )
        started = time.perf_counter()
        response = run_execute_action(request, runtime.registry.get(request.tool_name), runtime)
        middle = time.perf_counter()
        vector = runtime.embedder.embed_query(query + " again")
        embedded = time.perf_counter()
        vectors.search_dense(collection, vector, where, CANDIDATES)
        named = time.perf_counter()
        vectors.search_dense(collection, vector, where, CANDIDATES, using=NAME)
        searched = time.perf_counter()
        vectors.search_sparse(collection, encode_query(query), where, CANDIDATES)
        done = time.perf_counter()
        rankings = [Ranking(DENSE, vector), Ranking(NAME, vector), Ranking(SPARSE, encode_query(query))]
        vectors.search_rankings(collection, rankings, where, CANDIDATES)
        batched = time.perf_counter()
        assert not response.is_error and response.observation.startswith("Found"), response.observation[:200]
        if n >= 5:  # the first calls load the model and warm the store
            whole.append((middle - started) * 1000)
            embedding.append((embedded - middle) * 1000)
            dense.append((named - embedded) * 1000)
            named_ms.append((searched - named) * 1000)
            sparse.append((done - searched) * 1000)
            batch.append((batched - done) * 1000)
    for name, samples in (
        ("code_search end to end", whole),
        ("query embedding alone", embedding),
        (f"dense search alone (top {CANDIDATES})", dense),
        (f"name search alone (top {CANDIDATES})", named_ms),
        (f"sparse search alone (top {CANDIDATES})", sparse),
        ("the three searches in one batch, as code_search makes them", batch),
    ):
        print(
            f"{name}: p50 {percentile(samples, 0.5):.1f} ms, p95 {percentile(samples, 0.95):.1f} ms "
            f"(n={len(samples)})"
        )


if __name__ == "__main__":
    main()
