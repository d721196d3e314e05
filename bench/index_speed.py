"""Indexing and code_search speed on a repository of 1,000+ files, through the product path.

Run: .venv/bin/python bench/index_speed.py [--files 1200] [--queries 100] [--release pytest]
The corpus is .py files (200 B - 16 KB) of packages installed in this venv, copied into a temp project;
with --release, a package's released source from PyPI as it is (every file, docstrings kept), e.g.
pytest 9.2.0: 2,500 chunks. The index runs with the embedding model REACTSTEP_EMBEDDING_MODEL names.
Prints: index throughput (files/s, chunks/s), re-index after touching one file, and code_search
latency p50/p95 end to end (query embedding + hybrid search + rendering) and vector search alone.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from docstring_dataset import fetch_package
from stats import describe, machine

from reactstep.client.cli.main import main as reactstep
from reactstep.contract.actions import ExecuteActionRequest
from reactstep.service.runtime import build_runtime
from reactstep.service.settings import Settings
from reactstep.service.workspace.actions import run_execute_action
from reactstep.tools.index.indexer import collection_name
from reactstep.tools.vector_store.store import SearchFilter

PACKAGES = ("pydantic", "starlette", "httpx", "botocore", "qdrant_client", "moto", "litellm")
MAX_FILE_BYTES = 16_000  # typical application-sized modules, not generated giants
QUERIES = (
    "parse a JSON response",
    "retry a failed request",
    "validate a model field",
    "open a file",
    "cache",
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1200)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--release", help="index this package's released source instead (pip, no deps)")
    args = parser.parse_args()
    print(f"{machine()}, load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as work:
        if args.release:
            project = _release(Path(work), args.release)
        else:
            project = _corpus(Path(work) / "repo", args.files)
        settings = Settings(data_dir=Path(work) / "data")
        os.environ["REACTSTEP_DATA_DIR"] = str(settings.data_dir)
        first = _index(project)
        print(f"first index: {first}")
        victim = sorted(project.rglob("*.py"))[len(list(project.rglob("*.py"))) // 2]
        victim.write_text(victim.read_text() + "\n\ndef touched_by_bench():\n    return 1\n")
        print(f"re-index after touching one file: {_index(project)}")
        _search_latency(settings, args.queries)


def _corpus(root: Path, limit: int) -> Path:
    site = (
        Path(sys.prefix)
        / "lib"
        / f"python{sys.version_info.major}.{sys.version_info.minor}"
        / "site-packages"
    )
    every = [path for package in PACKAGES for path in sorted((site / package).rglob("*.py"))]
    files = [path for path in every if 200 < path.stat().st_size <= MAX_FILE_BYTES][:limit]
    for path in files:
        target = root / path.relative_to(site)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    print(f"corpus: {len(files)} .py files, {sum(p.stat().st_size for p in files) / 1e6:.1f} MB")
    return root


def _release(work: Path, name: str) -> Path:
    source = fetch_package(name, work)
    files = list(source.rglob("*.py"))
    print(
        f"corpus: {name} release, {len(files)} .py files, {sum(p.stat().st_size for p in files) / 1e6:.1f} MB"
    )
    return source


def _index(project: Path) -> str:
    started = time.perf_counter()
    with redirect_stdout(StringIO()) as printed:
        reactstep(["index", str(project), "--project", "bench"])
    seconds = time.perf_counter() - started
    summary = printed.getvalue().strip().splitlines()[-1]
    files = int(summary.split()[1])
    chunks = int(summary.split(": ")[1].split()[0])
    return f"{summary} | wall {seconds:.1f}s: {files / seconds:.1f} files/s, {chunks / seconds:.1f} chunks/s"


def _search_latency(settings: Settings, count: int) -> None:
    runtime = build_runtime(settings)
    vectors, embedder = runtime.vectors.get(), runtime.embedder
    print(f"chunks in the index: {vectors.count(collection_name(embedder), 'bench')}")
    end_to_end, vector_only = [], []
    for n in range(count + 5):
        query = QUERIES[n % len(QUERIES)] + f" {n}"
        request = ExecuteActionRequest(
            project_id="bench", session_id="s", tool_name="code_search", tool_args={"query": query}
        )
        started = time.perf_counter()
        run_execute_action(request, runtime.registry.get(request.tool_name), runtime)
        middle = time.perf_counter()
        vector = embedder.embed_query(query)
        searched = time.perf_counter()
        vectors.search_dense(collection_name(embedder), vector, SearchFilter("bench"), 50)
        done = time.perf_counter()
        if n >= 5:
            end_to_end.append((middle - started) * 1000)
            vector_only.append((done - searched) * 1000)
    print(describe("code_search end to end", end_to_end))
    print(describe("dense vector search alone (top 50, project filter)", vector_only))
    runtime.vectors.close()


if __name__ == "__main__":
    main()
