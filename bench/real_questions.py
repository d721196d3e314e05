"""code_search on questions people ask (web queries, StackOverflow titles), against BM25, MiniLM and RRF.

Run: .venv/bin/python bench/real_questions.py --data /tmp/realq/data --work-dir /tmp/realq
     [--sets cosqa-dev staqc-dev staqc-train] [--max-queries 300]
     [--product-models local/all-MiniLM-L6-v2-code-int8 local/all-MiniLM-L6-v2]
(needs the bench extra: pip install -e '.[bench]')

The data is microsoft/CodeXGLUE's Text-Code/NL-code-search-WebQuery, read out of the repository's
history and kept out of this one (`--data` names the folder holding the files; SOURCES gives the commit
and sha256 of each, checked on load). Its labelled sets, each a list of (query, code, label 0/1):

    cosqa-dev    604 Bing web queries ("python check if a file exists") x CodeSearchNet functions,
                 labelled by people; the repo's test_webquery.json is the same kind but its labels
                 are not published (the repo holds 5 sample answers), so it cannot be graded
    staqc-dev    StackOverflow question titles x the code of their answers (StaQC, dev split)
    staqc-train  the same, train split; test_staqc.json is unlabelled too

Each set becomes retrieval: every distinct code is a file of one pool project (`f00042.py`, a name
that says nothing), every query with at least one positive label is asked, and a hit is a result in
a file whose code that query labels 1. staqc-dev is the development split (weights and models are
chosen on it); cosqa-dev is held out; staqc-train is held out only from a model that did not learn
from it (the default one, adapter 4, did: TRAINED_ON).

The product answers through POST /api/agent/execute_action code_search (bench/retrieval_quality.py's
path), once per `--product-models` model, after `reactstep index` of the pool with that model. The
baselines (bench/baselines.py) rank the chunks the product's chunker cuts from the same pool, with
stock all-MiniLM-L6-v2's vectors (fp32 and int8). Reports MRR@10 and nDCG@10 (binary gains, each
right file counted once) per set and ranker, and the time each took.

`--stock-leg-weights 0 0.5 1` measures a second dense leg without changing the product: for a query
with no code words (CODE_WORD), the first product model's top 10 files (in each mode and at each
weights asked) and stock MiniLM's are fused by reciprocal rank, stock's counted at that weight (0 is
the product's list with each file once).
"""

import argparse
import hashlib
import json
import math
import os
import sys
import tempfile
import time
from contextlib import redirect_stdout
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from docstring_dataset import CODE_WORD
from retrieval_quality import (
    BASELINE_MODELS,
    HIT,
    add_weights_option,
    baseline_passages,
    code_search,
    every_query_at,
    load_baselines,
    mrr,
    package_chunks,
)
from starlette.testclient import TestClient
from stats import machine

from reactstep.client.cli.main import main as reactstep
from reactstep.service.http.app import create_app
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder
from reactstep.tools.ranking.fusion import RetrievalConfig

REPOSITORY = "microsoft/CodeXGLUE"
FOLDER = "Text-Code/NL-code-search-WebQuery"
# (set, file, commit it is read from, sha256). The StaQC splits were dropped from the repo in 5991f7d
# ("add staqc download"); 9a18117 is the last commit that holds them.
SOURCES = {
    "cosqa-dev": (
        "CoSQA/cosqa-dev.json",
        "ac74a62802a0dd159b3258c78a2df8ad36cdf2b9",
        "247d48d6072f122cdd16b38974d50bc3253d80d42c3ca89790df3a7a28627cad",
    ),
    "staqc-dev": (
        "data/dev_staqc.json",
        "9a181175cc3d4c8d15b3e767fac9cb8e234e0614",
        "67f4decf619d89b9a4171b77ec42d50fae4116bf904964936f2d79cbe53a577e",
    ),
    "staqc-train": (
        "data/train_staqc.json",
        "9a181175cc3d4c8d15b3e767fac9cb8e234e0614",
        "146b2c05c7cd821756070c788833debec8bc3ce7a3a1067a1345aae116542f69",
    ),
}
DEVELOPMENT = "staqc-dev"
TRAINED_ON = "staqc-train"  # adapter 4 (the default model) trained on its pairs
PRODUCT_MODELS = ("local/all-MiniLM-L6-v2-code-int8", "local/all-MiniLM-L6-v2")


@dataclass(frozen=True)
class RealQuery:
    """One asked question and the pool files whose code answers it."""

    text: str
    paths: frozenset[str]

    def answered_by(self, path: str, start_line: int, end_line: int) -> bool:
        return path in self.paths


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True, help="folder holding the SOURCES files")
    parser.add_argument("--sets", nargs="+", default=list(SOURCES), choices=list(SOURCES))
    parser.add_argument("--work-dir", type=Path, help="keep pools and the index here (default: temp)")
    parser.add_argument("--max-queries", type=int, help="ask a set's first N queries (the pool stays whole)")
    parser.add_argument("--product-models", nargs="+", default=list(PRODUCT_MODELS))
    parser.add_argument("--baseline-models", nargs="+", default=list(BASELINE_MODELS))
    parser.add_argument(
        "--modes",
        nargs="+",
        default=["hybrid"],
        choices=["hybrid", "dense", "lexical"],
        help="the product's retrieval modes to ask with (hybrid is the shipped one)",
    )
    add_weights_option(
        parser,
        "--weights",
        "also ask in hybrid mode with these word and name weights for every query (RetrievalConfig's"
        " lexical_weight, name_weight, and the prose ones; shipped 0.7,0.5 and 0.3,0.2 for prose)",
    )
    add_weights_option(
        parser,
        "--prose-weights",
        "also ask in hybrid mode with these word and name weights for prose queries only"
        " (RetrievalConfig's prose_lexical_weight, prose_name_weight)",
    )
    parser.add_argument(
        "--stock-leg-weights",
        nargs="*",
        type=float,
        default=[],
        help="also fuse the first product model's files with stock MiniLM's (the first baseline model)"
        " for queries with no code words, at these weights: a measure of a second dense leg",
    )
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as temp:
        work = args.work_dir or Path(temp)
        os.environ["REACTSTEP_DATA_DIR"] = str(work / "data")
        for name in args.sets:
            evaluate(name, work, args)


def load_set(name: str, data: Path) -> tuple[dict[str, str], list[RealQuery]]:
    """The set's pool (file name -> code, one file per distinct code) and its queries, in file order."""
    file, commit, sha256 = SOURCES[name]
    raw = (data / Path(file).name).read_bytes()
    if hashlib.sha256(raw).hexdigest() != sha256:
        raise SystemExit(f"{data / Path(file).name} is not {REPOSITORY}@{commit[:7]}:{FOLDER}/{file}")
    pairs = json.loads(raw)
    file_of: dict[str, str] = {}
    for pair in pairs:
        file_of.setdefault(pair["code"], f"f{len(file_of):05d}.py")
    answers: dict[str, set[str]] = {}
    for pair in pairs:
        if pair["label"] == 1:
            answers.setdefault(" ".join(pair["doc"].split()), set()).add(file_of[pair["code"]])
    pool = {path: code for code, path in file_of.items()}
    return pool, [RealQuery(text, frozenset(paths)) for text, paths in answers.items()]


def write_pool(pool: dict[str, str], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for path, code in pool.items():
        (folder / path).write_text(code if code.endswith("\n") else code + "\n")


def evaluate(name: str, work: Path, args: argparse.Namespace) -> None:
    """Index one set's pool with each product model and print a row per ranker."""
    pool, queries = load_set(name, args.data)
    queries = queries[: args.max_queries]
    folder = work / f"{name}-pool"
    write_pool(pool, folder)
    role = {DEVELOPMENT: "development", TRAINED_ON: "the default model learned from it"}.get(name, "held out")
    print(f"\n{name} ({role}): {len(queries)} queries, pool of {len(pool)} files")
    results: dict[str, list[list[str]]] = {}  # each ranker's top 10 files per query, in order
    seconds: dict[str, float] = {}
    chunks = package_chunks(folder)
    for model in args.baseline_models:
        started = time.monotonic()
        embedder = LocalEmbedder(Settings().models_root, model=model)
        baselines = load_baselines(chunks, embedder)
        suffix = "" if model == args.baseline_models[0] else f"-{model.rsplit('-', 1)[-1]}"
        for query in queries:
            for ranker, passages in baseline_passages(baselines, embedder, query.text).items():
                if suffix and ranker == "bm25":
                    continue  # the same ranking whatever the model
                results.setdefault(f"{ranker}{suffix}", []).append([p.path for p in passages])
        seconds[model] = time.monotonic() - started
    for model in args.product_models:
        started = time.monotonic()
        os.environ["REACTSTEP_EMBEDDING_MODEL"] = model
        with redirect_stdout(StringIO()) as printed:
            reactstep(["index", str(folder), "--project", name])
        indexed = printed.getvalue().strip().splitlines()[-1]
        label = f"product {model.removeprefix('local/')}"
        asks: dict[str, RetrievalConfig] = {
            label if mode == "hybrid" else f"{label} ({mode} leg alone)": RetrievalConfig(mode=mode)
            for mode in args.modes
        }
        for lexical, names in args.weights:
            asks[f"{label} words x{lexical:g} names x{names:g}"] = every_query_at(lexical, names)
        for lexical, names in args.prose_weights:
            asks[f"{label} prose words x{lexical:g} names x{names:g}"] = RetrievalConfig(
                prose_lexical_weight=lexical, prose_name_weight=names
            )
        for ranker, retrieval in asks.items():
            settings = Settings(embedding_model=model)
            with TestClient(create_app(settings, retrieval=retrieval)) as client:
                for query in queries:
                    observation = code_search(client, name, query.text)
                    results.setdefault(ranker, []).append([hit["path"] for hit in HIT.finditer(observation)])
        seconds[label] = time.monotonic() - started
        print(f"  {label}: {indexed}")
    os.environ.pop("REACTSTEP_EMBEDDING_MODEL", None)
    first = f"product {args.product_models[0].removeprefix('local/')}"
    for product in [ranker for ranker in results if ranker.startswith(first)]:
        for weight in args.stock_leg_weights:
            fused = [
                fuse_files(mine, stock, weight) if not CODE_WORD.search(query.text) else mine
                for mine, stock, query in zip(results[product], results["dense"], queries, strict=True)
            ]
            results[f"{product} + stock dense x{weight:g} (prose)"] = fused
    rows = {
        ranker: [answer_ranks(query, paths) for query, paths in zip(queries, found, strict=True)]
        for ranker, found in results.items()
    }
    best = max(mrr(first_ranks(ranks)) for ranker, ranks in rows.items() if not ranker.startswith("product"))
    for ranker, ranks in rows.items():
        figure = mrr(first_ranks(ranks))
        margin = f"  (vs best baseline {figure - best:+.3f})" if ranker.startswith("product") else ""
        print(f"  {name:<11} {ranker:<40} MRR@10 {figure:.3f}  nDCG@10 {ndcg(ranks, queries):.3f}{margin}")
    print("  seconds: " + ", ".join(f"{what} {spent:.0f}" for what, spent in seconds.items()))


def answer_ranks(query: RealQuery, paths: list[str]) -> list[int]:
    """The 1-based ranks, within the first 10 results, at which a right file first appears."""
    seen: set[str] = set()
    ranks = []
    for rank, path in enumerate(paths[:10], start=1):
        if path not in seen and path in query.paths:
            seen.add(path)
            ranks.append(rank)
    return ranks


def fuse_files(first: list[str], second: list[str], weight: float) -> list[str]:
    """Two top-10 file lists fused by reciprocal rank (1/(60 + rank), the second times `weight`)."""
    scores: dict[str, float] = {}
    for ranking, factor in ((first, 1.0), (second, weight)):
        for rank, path in enumerate(dict.fromkeys(ranking), start=1):
            scores[path] = scores.get(path, 0.0) + factor / (60 + rank)
    return sorted(scores, key=lambda path: (-scores[path], path))[:10]


def first_ranks(ranks: list[list[int]]) -> list[int | None]:
    return [found[0] if found else None for found in ranks]


def ndcg(ranks: list[list[int]], queries: list[RealQuery]) -> float:
    """Mean nDCG@10 with binary gains: each right file counts once, at its first rank."""
    total = 0.0
    for found, query in zip(ranks, queries, strict=True):
        ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(query.paths), 10) + 1))
        total += sum(1 / math.log2(rank + 1) for rank in found) / ideal
    return total / max(len(queries), 1)


if __name__ == "__main__":
    main()
