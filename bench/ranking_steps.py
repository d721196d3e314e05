"""What the step after fusion costs a code_search: the name boosts (fusion.py), on candidate pools cut
from real code.

Run: .venv/bin/python bench/ranking_steps.py [--source DIR] [--pools 300]
The chunks are the product chunker's, of every Python file under --source (default: this project).
Two kinds of pool of 90 candidates (what a query's merged rankings hold): drawn from the whole source,
and one file's chunks alone (the worst case: every definition of a file among the candidates).
"""

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from stats import describe, machine

from reactstep.tools.ranking.fusion import RetrievalConfig, boost_definitions
from reactstep.tools.ranking.names import query_names
from reactstep.tools.source.chunking import outline_file
from reactstep.tools.vector_store.store import VectorHit

POOL = 90
QUERY = "raise a ValueError when the value is out of range"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--pools", type=int, default=300)
    args = parser.parse_args()
    hits = source_hits(args.source)
    by_file: dict[str, list[VectorHit]] = {}
    for hit in hits:
        by_file.setdefault(str(hit.payload["path"]), []).append(hit)
    rng = random.Random(7)
    largest = sorted(by_file.values(), key=len)[-20:]
    kinds = {
        "whole source": [rng.sample(hits, min(POOL, len(hits))) for _ in range(args.pools)],
        "one file": [rng.choice(largest)[:POOL] for _ in range(args.pools)],
    }
    print(machine())
    print(f"{len(hits)} chunks from {len(by_file)} files under {args.source}")
    config = RetrievalConfig()
    for kind, pools in kinds.items():
        boost = []
        for pool in pools:
            ranked = [(2.0 * (1 - n / len(pool)), hit) for n, hit in enumerate(pool)]
            started = time.perf_counter()
            boost_definitions(ranked, QUERY, query_names(QUERY), config)
            boost.append((time.perf_counter() - started) * 1000)
        print(f"{kind}: " + describe("name boosts", boost))


def source_hits(source: Path) -> list[VectorHit]:
    """Every chunk of the Python files under `source`, with the payload the index stores."""
    hits = []
    for file in sorted(source.rglob("*.py")):
        if any(part.startswith(".") or part in ("build", "node_modules") for part in file.parts):
            continue
        path = file.relative_to(source).as_posix()
        for chunk in outline_file(path, file.read_text(errors="replace")).chunks:
            payload = {"path": path, "symbol": chunk.symbol, "kind": chunk.kind, "language": chunk.language}
            hits.append(VectorHit(str(len(hits)), 0.0, {**payload, "content": chunk.content}))
    return hits


if __name__ == "__main__":
    main()
