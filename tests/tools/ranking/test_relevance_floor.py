"""CodeIndex.search: three rankings fused (chunk vectors, name vectors, word match), and how many match."""

from collections.abc import Iterator, Sequence
from dataclasses import replace

import pytest

from reactstep.tools.code_search import render_results
from reactstep.tools.ranking.fusion import RetrievalConfig
from reactstep.tools.ranking.retrieval import CodeIndex, collection_name
from reactstep.tools.vector_store.qdrant import QdrantVectorStore
from reactstep.tools.vector_store.store import CHUNK_VECTORS, SearchFilter
from tests.tools.vector_store.test_vector_stores import EAST, chunk

NEAR = [1.0, 1.0, 0.0, 0.0]  # cosine 0.707 to EAST
FAR = [0.0, 0.0, 1.0, 0.0]  # cosine 0 to EAST


class FixedEmbedder:
    """Every query points EAST: the test chooses each chunk's cosine by its stored vectors."""

    model_name = "fixed"
    dimension = 4
    known_dimension = dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [EAST for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return EAST


@pytest.fixture
def index() -> Iterator[CodeIndex]:
    store = QdrantVectorStore(":memory:")
    embedder = FixedEmbedder()
    collection = collection_name(embedder)
    store.ensure_collection(collection, 4, CHUNK_VECTORS)
    store.upsert(
        collection,
        [
            replace(chunk("best", path="best.py", dense=EAST, text="zebra"), name=EAST),
            replace(chunk("mid", path="mid.py", dense=NEAR, text="other"), name=NEAR),
            replace(chunk("low", path="low.py", dense=FAR, text="other"), name=FAR),
        ],
    )
    yield CodeIndex(store, embedder, RetrievalConfig())
    store.close()


def test_fused_scores_weigh_chunk_name_and_word_rankings(index: CodeIndex) -> None:
    passages, found = index.search(SearchFilter("alpha"), "zebra", 10)
    # "zebra" writes no name as code, so the prose weights count: min-max per ranking, best 1 + 0.3 + 0.2;
    # mid 0.707 of the way in both dense rankings; low 0
    assert [(passage.symbol, round(passage.score, 3)) for passage in passages] == [
        ("best", 1.5),
        ("mid", 0.849),
        ("low", 0.0),
    ]
    assert found == 2  # 0.4 x 1.5 = 0.6: low is shown (10 were asked for) but not a match
    passages, _ = index.search(SearchFilter("alpha"), "`zebra`", 10)  # as code: 1 + 0.7 + 0.5
    assert [(passage.symbol, round(passage.score, 3)) for passage in passages][:2] == [
        ("best", 2.2),
        ("mid", 1.061),
    ]


def test_the_name_ranking_is_off_at_weight_zero(index: CodeIndex) -> None:
    unnamed = replace(index, config=RetrievalConfig(prose_name_weight=0.0))
    passages, _ = unnamed.search(SearchFilter("alpha"), "zebra", 10)
    assert [round(passage.score, 3) for passage in passages] == [1.3, 0.707, 0.0]


def test_a_refused_match_is_not_counted(index: CodeIndex) -> None:
    passages, found = index.search(SearchFilter("alpha"), "zebra", 10, current=lambda p: p.symbol != "mid")
    assert ([passage.symbol for passage in passages], found) == (["best", "low"], 1)


def test_the_page_says_how_many_shown_are_below_the_floor(index: CodeIndex) -> None:
    passages, found = index.search(SearchFilter("alpha"), "zebra", 10)
    header = render_results("zebra", passages, found, budget=10_000).split("\n", 1)[0]
    assert header == (
        'Found 2 results for "zebra" above the relevance floor, and 1 weaker one below it (showing 3):'
    )
