"""code_search against BM25, MiniLM and their RRF fusion, on the same chunks, through the product path.

Run: .venv/bin/python bench/retrieval_quality.py --work-dir /tmp/search-bench
     [--packages attrs httpx jinja2 werkzeug pytest] [--configs product prod-lex prod-den]
(needs the bench extra: pip install -e '.[bench]')

For each package: pip-install its release into the work dir, copy it without docstrings (bench/
docstring_dataset.py), `reactstep index` the copy (kept in the work dir, so a second run embeds
nothing), then ask every query two ways:

    docstring   the function's docstring, first sentence, as written (code words kept)
    question    the same sentence with every code word dropped, as "how do I ..." (as_question)
    identifier  the function's qualified name as code (`Map.bind_to_environ`, `redirect`), when
                no other function of the package has it: what the name boosts are for

The product answers through POST /api/agent/execute_action code_search (configs: `product` is the
shipped settings, `prod-lex`/`prod-den` one leg alone).
The baselines (bench/baselines.py) rank the chunks the product's chunker cuts from the same copy; their
dense vectors are stock all-MiniLM-L6-v2's
(`--baseline-models`, fp32 and int8 by default: "best baseline" is the best of every baseline run on
either), whatever model the product embeds with, so a model tuned for code is measured against the one
it was tuned from.
A hit is a result in the right file whose line range holds the `def` line. Reports MRR@10 and
Recall@1/10 per package, query set and ranker.
"""

import argparse
import os
import re
import sys
import tempfile
from collections.abc import Callable
from contextlib import redirect_stdout
from dataclasses import replace
from io import StringIO
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from baselines import Baselines, rrf
from docstring_dataset import MIN_QUERY_WORDS, RELEASES, Query, build, fetch_package
from starlette.testclient import TestClient
from stats import machine

from reactstep.client.cli.main import main as reactstep
from reactstep.service.backends import vector_config
from reactstep.service.http.app import create_app
from reactstep.service.runtime import local_embedder
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder
from reactstep.tools.index.chunk_text import dense_text, embedding_text
from reactstep.tools.index.embedding_cache import EmbeddingCache
from reactstep.tools.ranking.fusion import RetrievalConfig
from reactstep.tools.ranking.retrieval import Passage, collection_name, embedding_space
from reactstep.tools.source.chunking import Chunk, outline_file
from reactstep.tools.vector_store.backend_choice import open_vector_store

HIT = re.compile(r"^\d+\. (?P<path>\S+):(?P<start>\d+)-(?P<end>\d+)", re.MULTILINE)
PRODUCT_CONFIGS = {
    "product": RetrievalConfig(),
    "prod-lex": RetrievalConfig(mode="lexical"),
    "prod-den": RetrievalConfig(mode="dense"),
}
DEFAULT_PACKAGES = list(RELEASES)
# Stock all-MiniLM-L6-v2, as shipped and as the int8 recipe quantises it: the baseline's dense leg.
BASELINE_MODELS = ("local/all-MiniLM-L6-v2", "local/all-MiniLM-L6-v2-int8")

Ranks = list[int | None]


def weight_pair(text: str) -> tuple[float, float]:
    """'WORDS,NAMES' (two numbers) as a pair of weights: the type of the weight options."""
    try:
        lexical, names = (float(weight) for weight in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not WORDS,NAMES (two numbers)") from None
    return lexical, names


def add_weights_option(parser: argparse.ArgumentParser, flag: str, help: str) -> None:
    """An option taking any number of WORDS,NAMES pairs (weight_pair each)."""
    parser.add_argument(flag, nargs="*", default=[], type=weight_pair, metavar="WORDS,NAMES", help=help)


def every_query_at(lexical: float, names: float, **fields: Any) -> RetrievalConfig:
    """A RetrievalConfig whose word and name weights are these for every query, prose too (as when the
    weights were chosen, before prose had its own)."""
    return RetrievalConfig(
        lexical_weight=lexical,
        name_weight=names,
        prose_lexical_weight=lexical,
        prose_name_weight=names,
        **fields,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--packages", nargs="+", default=DEFAULT_PACKAGES)
    parser.add_argument("--configs", nargs="+", default=list(PRODUCT_CONFIGS), choices=list(PRODUCT_CONFIGS))
    add_weights_option(
        parser,
        "--prose-weights",
        "also ask with these word and name weights for prose queries (RetrievalConfig's"
        " prose_lexical_weight, prose_name_weight; 0.7,0.5 counts prose as any other query)",
    )
    parser.add_argument("--work-dir", type=Path, help="keep packages and the index here (default: temp)")
    parser.add_argument(
        "--shared-answers",
        action="store_true",
        help="count a hit on any function whose query text is the same (identical docstring sentences)",
    )
    parser.add_argument(
        "--baseline-models",
        nargs="+",
        default=list(BASELINE_MODELS),
        help="the stock local models the MiniLM baseline embeds with (one baseline run per model)",
    )
    parser.add_argument(
        "--fresh-lexical",
        action="store_true",
        help="drop the packages' points first (after a tokenizer change)",
    )
    args = parser.parse_args()
    args.asked = {config: PRODUCT_CONFIGS[config] for config in args.configs}
    for lexical, names in args.prose_weights:
        args.asked[f"prose {lexical:g}/{names:g}"] = RetrievalConfig(
            prose_lexical_weight=lexical, prose_name_weight=names
        )
    print(machine())
    with tempfile.TemporaryDirectory() as temp:
        work = args.work_dir or Path(temp)
        os.environ["REACTSTEP_DATA_DIR"] = str(work / "data")
        for package in args.packages:
            evaluate(package, work, args)


def evaluate(package: str, work: Path, args: argparse.Namespace) -> None:
    """Index one package and print a row per ranker and query set."""
    copy = work / f"{package}-nodocs"
    queries = build(fetch_package(package, work), copy)
    with redirect_stdout(StringIO()) as printed:
        reactstep(["index", str(copy), "--project", package])
    if args.fresh_lexical:
        drop_points(package)
        with TestClient(create_app(Settings())) as client:
            done = client.post(f"/api/projects/{package}/index", json={"full": True}).json()
        print(f"  re-encoded {package}: {done}")
    questions = questions_of(queries)
    identifiers = [query for query in queries if query.identifier]
    print(f"\n{package}: {len(queries)} docstring queries, {len(questions)} questions, ", end="")
    print(f"{len(identifiers)} identifiers; ", end="")
    print(printed.getvalue().strip().splitlines()[-1])
    rows: dict[str, dict[str, Ranks]] = {}
    sets: list[tuple[str, list[Query], Callable[[Query], str]]] = [
        ("docstring", queries, lambda query: query.text),
        ("question", questions, lambda query: query.question),
        ("identifier", identifiers, lambda query: query.identifier),
    ]
    if args.shared_answers:
        sets = [(label, sharing_answers(items, text_of), text_of) for label, items, text_of in sets]
    for label, _, _ in sets:
        rows[label] = {}
    chunks = package_chunks(copy)
    for model in args.baseline_models:
        embedder = LocalEmbedder(Settings().models_root, model=model)
        baselines = load_baselines(chunks, embedder)
        suffix = "" if model == args.baseline_models[0] else f"-{model.rsplit('-', 1)[-1]}"
        for label, items, text_of in sets:
            for name, ranks in baseline_ranks(baselines, embedder, items, text_of).items():
                if suffix and name == "bm25":
                    continue  # the same ranking whatever the model
                rows[label][f"{name}{suffix}"] = ranks
    for label, items, text_of in sets:
        for config, retrieval in args.asked.items():
            rows[label][config] = product_ranks(package, items, text_of, retrieval)
    for label, by_ranker in rows.items():
        best = max(mrr(ranks) for name, ranks in by_ranker.items() if name not in args.asked)
        for name, ranks in by_ranker.items():
            margin = f"  (vs best baseline {mrr(ranks) - best:+.3f})" if name in args.asked else ""
            if name in args.asked and name != "product" and "product" in by_ranker:
                margin += f" (vs product {mrr(ranks) - mrr(by_ranker['product']):+.4f})"
            print(f"  {label:<10} {name:<8} {report(ranks)}{margin}")
        if "product" in by_ranker and "prod-den" in by_ranker:
            helped, hurt = changed(by_ranker["product"], by_ranker["prod-den"])
            print(f"  {label:<10} product against prod-den: {helped} queries ranked better, {hurt} worse")


def questions_of(queries: list[Query]) -> list[Query]:
    """The queries whose question keeps at least MIN_QUERY_WORDS words after "how do I"."""
    return [query for query in queries if len(query.question.split()) >= MIN_QUERY_WORDS + 3]


def package_chunks(copy: Path) -> list[Chunk]:
    """The chunks the product's chunker cuts from the copy."""
    chunks: list[Chunk] = []
    for file in sorted(copy.rglob("*.py")):
        chunks.extend(outline_file(file.relative_to(copy).as_posix(), file.read_text()).chunks)
    return chunks


def load_baselines(chunks: list[Chunk], embedder: LocalEmbedder) -> Baselines:
    """The baselines over these chunks, with `embedder`'s vectors of their dense text (cached by model)."""
    settings = Settings()
    vectors = open_vector_store(vector_config(settings))
    try:
        cache = EmbeddingCache(vectors, embedding_space(embedder), embedder.dimension)
        dense, _ = cache.embed([dense_text(chunk) for chunk in chunks], embedder)
    finally:
        vectors.close()
    return Baselines.build(chunks, [embedding_text(chunk) for chunk in chunks], dense)


def drop_points(package: str) -> None:
    """Delete the project's points, keeping the embedding cache: a full index re-encodes, embeds nothing."""
    settings = Settings()
    embedder = local_embedder(settings)
    vectors = open_vector_store(vector_config(settings))
    try:
        collection = collection_name(embedder)
        if collection in vectors.collections():
            vectors.delete(collection, list(vectors.project_points(collection, package)))
    finally:
        vectors.close()


def baseline_ranks(
    baselines: Baselines, embedder: object, queries: list[Query], text_of: Callable[[Query], str]
) -> dict[str, Ranks]:
    ranks: dict[str, Ranks] = {"bm25": [], "dense": [], "rrf": []}
    for query in queries:
        for name, passages in baseline_passages(baselines, embedder, text_of(query)).items():
            ranks[name].append(passage_rank(query, passages))
    return ranks


def baseline_passages(baselines: Baselines, embedder: object, text: str) -> dict[str, list[Passage]]:
    """Each baseline's top 10 passages for `text`: bm25, dense and their rrf."""
    lexical = baselines.bm25_ranking(text)
    dense = baselines.dense_ranking(embedder.embed_query(text))  # type: ignore[attr-defined]
    rankings = {"bm25": lexical, "dense": dense, "rrf": rrf(lexical, dense)}
    return {name: baselines.passages(ranking)[:10] for name, ranking in rankings.items()}


def product_ranks(
    package: str, queries: list[Query], text_of: Callable[[Query], str], retrieval: RetrievalConfig
) -> Ranks:
    """The 1-based rank of the right function for each query, None when not in the top 10."""
    with TestClient(create_app(Settings(), retrieval=retrieval)) as client:
        return [rank_of(query, code_search(client, package, text_of(query))) for query in queries]


def code_search(client: TestClient, project: str, text: str) -> str:
    """code_search's observation for `text`, top 10, through POST /api/agent/execute_action."""
    body = {
        "project_id": project,
        "session_id": "bench",
        "tool_name": "code_search",
        "tool_args": {"query": text, "max_results": 10},
    }
    answer = client.post("/api/agent/execute_action", json=body)
    if answer.status_code != 200:
        raise SystemExit(f"code_search failed for {text!r}: {answer.status_code} {answer.text}")
    observation: str = answer.json()["observation"]
    return observation


def rank_of(query: Query, observation: str) -> int | None:
    """Where the query's function (or one asked by the same text, with --shared-answers) first appears
    among code_search's hits."""
    for rank, hit in enumerate(HIT.finditer(observation), start=1):
        if query.answered_by(hit["path"], int(hit["start"]), int(hit["end"])):
            return rank
    return None


def passage_rank(query: Query, passages: list[Passage]) -> int | None:
    """Where the query's function first appears among a baseline's passages."""
    for rank, passage in enumerate(passages, start=1):
        if query.answered_by(passage.path, passage.start_line, passage.end_line):
            return rank
    return None


def sharing_answers(queries: list[Query], text_of: Callable[[Query], str]) -> list[Query]:
    """Each query with the functions asked by the very same text as answers too."""
    by_text: dict[str, list[Query]] = {}
    for query in queries:
        by_text.setdefault(text_of(query), []).append(query)
    return [
        replace(query, also=tuple((o.path, o.def_line) for o in by_text[text_of(query)] if o is not query))
        for query in queries
    ]


def changed(ranks: Ranks, others: Ranks) -> tuple[int, int]:
    """How many queries `ranks` answers at a better reciprocal rank than `others`, and how many worse."""
    pairs = [(mrr([rank]), mrr([other])) for rank, other in zip(ranks, others, strict=True)]
    return sum(1 for a, b in pairs if a > b), sum(1 for a, b in pairs if a < b)


def mrr(ranks: Ranks) -> float:
    return sum(1 / rank for rank in ranks if rank) / max(len(ranks), 1)


def report(ranks: Ranks) -> str:
    """MRR@10 and Recall@1/10."""
    count = max(len(ranks), 1)
    recall = {k: sum(1 for rank in ranks if rank and rank <= k) / count for k in (1, 10)}
    return f"MRR@10 {mrr(ranks):.4f}  R@1 {recall[1]:.3f}  R@10 {recall[10]:.3f}"


if __name__ == "__main__":
    main()
