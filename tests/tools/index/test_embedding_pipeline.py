"""Windows are embedded in turn and written on a second thread, in order; a failed write stops the run.
The embedder is a counting fake at the Embedder seam (the real model is tested in tests/tools/embedding)."""

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from reactstep.tools.index.embedding_cache import EmbeddingCache
from reactstep.tools.index.embedding_pipeline import WINDOW, embed_and_write
from reactstep.tools.vector_store.edge import EdgeVectorStore


class CountingEmbedder:
    """A 4-dimensional unit vector per text, recording each call's size and thread."""

    model_name = "fake/counting"
    dimension = 4
    known_dimension = dimension

    def __init__(self) -> None:
        self.calls: list[tuple[int, str]] = []

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append((len(texts), threading.current_thread().name))
        return [[1.0, 0.0, 0.0, 0.0] if int(text) % 2 else [0.0, 1.0, 0.0, 0.0] for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[EmbeddingCache]:
    store = EdgeVectorStore(tmp_path / "vectors")
    yield EmbeddingCache(store, "fake_counting_4", 4)
    store.close()


def test_every_item_is_written_once_in_order_with_its_vector(cache: EmbeddingCache) -> None:
    items = list(range(WINDOW * 2 + 3))
    embedder = CountingEmbedder()
    written: list[tuple[int, list[float], str]] = []
    after: list[Sequence[int]] = []

    def write(window: Sequence[int], vectors: list[list[list[float]]]) -> None:
        name = threading.current_thread().name
        written.extend((item, vector, name) for item, (vector,) in zip(window, vectors, strict=True))

    embedded = embed_and_write(items, lambda item: (str(item),), cache, embedder, write, after.append)

    assert embedded == [len(items)]
    assert [item for item, _, _ in written] == items
    assert all(vector[0] == item % 2 for item, vector, _ in written)
    assert {name for _, _, name in written} == {"index-write_0"}  # never the embedding thread
    assert [size for size, _ in embedder.calls] == [WINDOW, WINDOW, 3]
    assert [list(window) for window in after] == [
        items[:WINDOW],
        items[WINDOW : 2 * WINDOW],
        items[2 * WINDOW :],
    ]
    again = CountingEmbedder()
    assert embed_and_write(items, lambda item: (str(item),), cache, again, lambda *_: None) == [0]  # cached
    assert again.calls == []


def test_a_failed_write_stops_the_run(cache: EmbeddingCache) -> None:
    embedder = CountingEmbedder()

    def write(window: Sequence[int], vectors: list[list[list[float]]]) -> None:
        if window[0] == 0:
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        embed_and_write(list(range(WINDOW * 3)), lambda item: (str(item),), cache, embedder, write)
    assert len(embedder.calls) == 2  # the second window was embedded while the first was written


def test_each_item_gets_a_vector_per_text_and_each_kind_is_counted(cache: EmbeddingCache) -> None:
    embedder = CountingEmbedder()
    written: dict[int, list[list[float]]] = {}

    def write(window: Sequence[int], vectors: list[list[list[float]]]) -> None:
        written.update(zip(window, vectors, strict=True))

    items = list(range(10))
    assert embed_and_write(items, lambda item: (str(item), str(item + 1)), cache, embedder, write) == [10, 1]
    assert written[3] == [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]  # "3" is odd, "4" even
    assert [size for size, _ in embedder.calls] == [10, 1]  # "1".."10": only "10" was new
