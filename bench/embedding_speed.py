"""Chunks/s of the local embedding options on the same real chunks, interleaved in one process.

Run: .venv/bin/python bench/embedding_speed.py [--release pytest] [--chunks 400] [--rounds 5]
     [--models local/all-MiniLM-L6-v2 local/all-MiniLM-L6-v2-int8 local/paraphrase-MiniLM-L3-v2]

The chunks are the product's own (chunker + dense_text) over a released package's source from PyPI,
docstrings kept, every n-th one so long and short chunks both count. Rows:

    before   the op-by-op graph of commit 1f70927 (bert_graph.py read from git), batches of 32 sorted
             within windows of 64 chunks, as the indexer cut them then
    <model>  LocalEmbedder as the product runs it now (fused kernels, batches by length over a window)

Each round runs every row once, in turn, so a busy machine slows all rows alike; the figure is the
median over rounds and the ratio is to `before`. Cosine is to `before`'s vectors (same model only).
The load average is printed: the other helpers of this machine share its 2 cores.
"""

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from docstring_dataset import fetch_package
from stats import machine

from reactstep.tools.embedding.embeddings import INPUT_NAMES, LocalEmbedder, _open_session, _run
from reactstep.tools.embedding.local_models import LOCAL_MODELS, MINILM
from reactstep.tools.index.indexer import dense_text
from reactstep.tools.source.chunking import outline_file

BEFORE_COMMIT = "1f70927"
Embed = Callable[[list[str]], list[list[float]]]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--release", default="pytest")
    parser.add_argument("--chunks", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--models", nargs="+", default=list(LOCAL_MODELS), choices=list(LOCAL_MODELS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        texts = sample(real_chunks(work, args.release), args.chunks)
        rows: dict[str, Embed] = {"before": before(work, args.threads)}
        for name in args.models:
            embedder = LocalEmbedder(work / "models", threads=args.threads, model=name)
            embedder.embed_query("load")
            rows[name] = embedder.embed_documents
        print(f"{machine()}; {len(texts)} chunks of {args.release}, {args.threads} threads")
        speeds: dict[str, list[float]] = {name: [] for name in rows}
        vectors: dict[str, np.ndarray] = {}
        for _ in range(args.rounds):
            for name, embed in rows.items():
                started = time.perf_counter()
                vectors[name] = np.array(embed(texts))
                speeds[name].append(len(texts) / (time.perf_counter() - started))
        report(speeds, vectors)
        print(f"load average (1, 5, 15 min) at the end: {os.getloadavg()}")


def real_chunks(work: Path, release: str) -> list[str]:
    source = fetch_package(release, work)
    return [
        dense_text(chunk)
        for path in sorted(source.rglob("*.py"))
        for chunk in outline_file(path.relative_to(source).as_posix(), path.read_text()).chunks
    ]


def sample(texts: list[str], count: int) -> list[str]:
    return texts[:: max(1, len(texts) // count)][:count]


def before(work: Path, threads: int) -> Embed:
    """The embedding path of BEFORE_COMMIT: its graph writer, windows of 64, batches of 32."""
    source = subprocess.run(
        ["git", "show", f"{BEFORE_COMMIT}:tools/embedding/bert_graph.py"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parent,
    ).stdout
    (work / "old_bert_graph.py").write_text(source)
    spec = importlib.util.spec_from_file_location("old_bert_graph", work / "old_bert_graph.py")
    assert spec is not None and spec.loader is not None
    old = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old)
    model_dir = MINILM.sources()[0].parent
    graph = work / "before.onnx"
    old.write_bert_graph(model_dir, graph)
    session = _open_session(graph, threads)
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(MINILM.tokenizer_file()))
    tokenizer.enable_truncation(max_length=MINILM.max_tokens)
    tokenizer.no_padding()
    assert tuple(old.INPUT_NAMES) == INPUT_NAMES

    def embed(texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for window in range(0, len(texts), 64):
            encodings = tokenizer.encode_batch(texts[window : window + 64])
            order = sorted(range(len(encodings)), key=lambda index: len(encodings[index].ids))
            out: list[list[float]] = [[] for _ in encodings]
            for start in range(0, len(order), 32):
                batch = order[start : start + 32]
                for index, vector in zip(batch, _run(session, [encodings[i] for i in batch]), strict=True):
                    out[index] = vector
            vectors.extend(out)
        return vectors

    return embed


def report(speeds: dict[str, list[float]], vectors: dict[str, np.ndarray]) -> None:
    base = statistics.median(speeds["before"])
    print(f"{'row':<32} {'chunks/s':>9} {'ratio':>6}  cosine to before (mean / min)  rounds")
    for name, samples in speeds.items():
        median = statistics.median(samples)
        cosine = "-"
        if vectors[name].shape == vectors["before"].shape and "L3" not in name:
            dots = (vectors[name] * vectors["before"]).sum(axis=1)
            cosine = f"{dots.mean():.6f} / {dots.min():.6f}"
        shown = " ".join(f"{speed:.0f}" for speed in samples)
        print(f"{name:<32} {median:>9.1f} {median / base:>6.2f}  {cosine:<29}  {shown}")


if __name__ == "__main__":
    main()
