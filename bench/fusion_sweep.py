"""Choose code_search's fusion on the benchmark: every config over every package's queries, in-process.

Run (after bench/retrieval_quality.py has indexed the packages into the same work dir):
    .venv/bin/python bench/fusion_sweep.py --work-dir /tmp/search-bench

Each config is scored by MRR@10 per package and query set (docstring, question, identifier); the one to ship
is the best mean over all of them, never a per-query choice. The product's own search runs
(CodeIndex.search), only the HTTP rendering is skipped; each query is embedded and each
ranking asked once, then every config fuses the same rankings.
"""

import argparse
import itertools
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from docstring_dataset import build, fetch_package
from retrieval_quality import DEFAULT_PACKAGES, every_query_at, mrr, passage_rank, questions_of

from reactstep.service.backends import vector_config
from reactstep.service.runtime import local_embedder
from reactstep.service.settings import Settings
from reactstep.tools.ranking.retrieval import CodeIndex
from reactstep.tools.vector_store.backend_choice import open_vector_store
from reactstep.tools.vector_store.store import Ranking, SearchFilter


@dataclass
class CachedEmbedder:
    """The product's embedder, remembering query vectors across configs."""

    inner: object
    seen: dict[str, list[float]] = field(default_factory=dict)

    @property
    def model_name(self) -> str:
        return self.inner.model_name  # type: ignore[attr-defined,no-any-return]

    @property
    def dimension(self) -> int:
        return self.inner.dimension  # type: ignore[attr-defined,no-any-return]

    @property
    def known_dimension(self) -> int | None:
        return self.inner.known_dimension  # type: ignore[attr-defined,no-any-return]

    def embed_query(self, text: str) -> list[float]:
        if text not in self.seen:
            self.seen[text] = self.inner.embed_query(text)  # type: ignore[attr-defined]
        return self.seen[text]


class CachedVectors:
    """The product's vector store, remembering each ranking: the configs differ only after the searches."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.seen: dict[tuple[object, ...], object] = {}

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def search_rankings(
        self, collection: str, rankings: list[Ranking], where: SearchFilter, limit: int
    ) -> list[object]:
        keys = [(ranking.using, collection, _hashable(ranking.vector), where, limit) for ranking in rankings]
        missing = {key: ranking for key, ranking in zip(keys, rankings, strict=True) if key not in self.seen}
        if missing:
            found = self.inner.search_rankings(collection, list(missing.values()), where, limit)  # type: ignore[attr-defined]
            self.seen.update(zip(missing, found, strict=True))
        return [self.seen[key] for key in keys]


def _hashable(vector: object) -> object:
    """A dense vector as a tuple (a dict key); a SparseVector is one already."""
    return tuple(vector) if isinstance(vector, list) else vector


def boost_setting(text: str) -> dict[str, float]:
    """'code,plain,overlap' as RetrievalConfig's boost fields."""
    code, plain, overlap = (float(value) for value in text.split(","))
    return {"code_name_boost": code, "plain_name_boost": plain, "name_overlap_boost": overlap}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--packages", nargs="+", default=DEFAULT_PACKAGES)
    parser.add_argument("--work-dir", type=Path, required=True)
    parser.add_argument("--fusions", nargs="+", default=["score", "rrf"], choices=["score", "rrf"])
    parser.add_argument("--lexical-weights", nargs="+", type=float, default=[0.4, 0.7, 1.0])
    parser.add_argument("--name-weights", nargs="+", type=float, default=[0.0, 0.5])
    parser.add_argument(
        "--boosts",
        nargs="+",
        type=boost_setting,
        default=[boost_setting("0.1,0.1,0.2")],
        help="code,plain,overlap boosts, e.g. 0.3,0.1,0.2",
    )
    args = parser.parse_args()
    os.environ["REACTSTEP_DATA_DIR"] = str(args.work_dir / "data")
    settings = Settings()
    embedder = CachedEmbedder(local_embedder(settings))
    store = open_vector_store(vector_config(settings))
    vectors = CachedVectors(store)
    sets = {}
    for package in args.packages:
        queries = build(fetch_package(package, args.work_dir), args.work_dir / f"{package}-nodocs")
        sets[(package, "docstring")] = [(query, query.text) for query in queries]
        sets[(package, "question")] = [(query, query.question) for query in questions_of(queries)]
        sets[(package, "identifier")] = [(query, query.identifier) for query in queries if query.identifier]
    grid = [
        every_query_at(lexical, name, fusion=fusion, **boosts)
        for fusion, lexical, name, boosts in itertools.product(
            args.fusions, args.lexical_weights, args.name_weights, args.boosts
        )
    ]
    results = []
    for config in grid:
        index = CodeIndex(vectors, embedder, config)  # type: ignore[arg-type]
        scores = {}
        for (package, label), items in sets.items():
            ranks = [
                passage_rank(query, index.search(SearchFilter(package), text, 10)[0]) for query, text in items
            ]
            scores[(package, label)] = mrr(ranks)
        mean = sum(scores.values()) / len(scores)
        results.append((mean, config, scores))
        cells = " ".join(f"{value:.3f}" for value in scores.values())
        print(
            f"{mean:.4f} {config.fusion} lex {config.lexical_weight} name {config.name_weight} "
            f"code {config.code_name_boost} "
            f"plain {config.plain_name_boost} overlap {config.name_overlap_boost}: {cells}",
            flush=True,
        )
    store.close()
    best = max(results, key=lambda result: result[0])
    print("\nbest:", best[1])


if __name__ == "__main__":
    main()
