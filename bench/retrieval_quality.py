"""code_search quality on docstring -> function queries, through the product path.

Run: .venv/bin/python bench/retrieval_quality.py [--packages attrs httpx jinja2] [--lexical-weights 0.5 1 2]

For each package: pip-install its release into a temp dir, copy it without docstrings (bench/
docstring_dataset.py), `reactstep index` the copy, then ask execute_action code_search each function's
docstring sentence. A hit is a result in the right file whose line range holds the `def` line.
Reports MRR@10 and Recall@1/5/10 for dense-only, lexical-only and hybrid at each lexical weight.
"""

import argparse
import os
import re
import sys
import tempfile
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from docstring_dataset import Query, build, fetch_package
from starlette.testclient import TestClient
from stats import machine

from reactstep.client.cli import main as reactstep
from reactstep.service.http.app import create_app
from reactstep.service.settings import Settings

HIT = re.compile(r"^\d+\. (?P<path>\S+):(?P<start>\d+)-(?P<end>\d+)", re.MULTILINE)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--packages", nargs="+", default=["attrs", "httpx", "jinja2"])
    parser.add_argument("--lexical-weights", nargs="+", type=float, default=[0.5, 1.0, 1.5, 2.0])
    parser.add_argument("--work-dir", type=Path, help="keep packages and the index here (default: temp)")
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as temp:
        work = args.work_dir or Path(temp)
        os.environ["REACTSTEP_DATA_DIR"] = str(work / "data")
        for package in args.packages:
            evaluate(package, work, args.lexical_weights)


def evaluate(package: str, work: Path, lexical_weights: list[float]) -> None:
    """Index one package and print a row per retrieval configuration."""
    copy = work / f"{package}-nodocs"
    queries = build(fetch_package(package, work), copy)
    with redirect_stdout(StringIO()) as printed:
        reactstep(["index", str(copy), "--project", package])
    print(f"\n{package}: {len(queries)} queries; {printed.getvalue().strip().splitlines()[-1]}")
    configs = [("dense", 1.0, 0.0), ("lexical", 0.0, 1.0)]
    configs += [("hybrid", 1.0, weight) for weight in lexical_weights]
    for mode, dense_weight, lexical_weight in configs:
        ranks = ranks_for(package, queries, mode, dense_weight, lexical_weight)
        label = mode if mode != "hybrid" else f"hybrid (dense 1 : lexical {lexical_weight:g})"
        print(f"  {label:<32} {report(ranks)}")


def ranks_for(
    package: str, queries: list[Query], mode: str, dense: float, lexical: float
) -> list[int | None]:
    """The 1-based rank of the right function for each query, None when not in the top 10."""
    settings = Settings(search_mode=mode, search_dense_weight=dense, search_lexical_weight=lexical)
    ranks: list[int | None] = []
    with TestClient(create_app(settings)) as client:
        for query in queries:
            body = {
                "project_id": package,
                "session_id": "bench",
                "tool_name": "code_search",
                "tool_args": {"query": query.text, "max_results": 10},
            }
            observation = client.post("/api/agent/execute_action", json=body).json()["observation"]
            ranks.append(rank_of(query, observation))
    return ranks


def rank_of(query: Query, observation: str) -> int | None:
    """Where the query's function first appears among the hits."""
    for rank, hit in enumerate(HIT.finditer(observation), start=1):
        if hit["path"] == query.path and int(hit["start"]) <= query.def_line <= int(hit["end"]):
            return rank
    return None


def report(ranks: list[int | None]) -> str:
    """MRR@10 and Recall@1/5/10."""
    count = len(ranks)
    mrr = sum(1 / rank for rank in ranks if rank) / count
    recall = {k: sum(1 for rank in ranks if rank and rank <= k) / count for k in (1, 5, 10)}
    return f"MRR@10 {mrr:.3f}  R@1 {recall[1]:.3f}  R@5 {recall[5]:.3f}  R@10 {recall[10]:.3f}"


if __name__ == "__main__":
    main()
