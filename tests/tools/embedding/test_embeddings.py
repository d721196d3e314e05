"""LocalEmbedder with the real all-MiniLM-L6-v2 weights, unquantised: vectors, ranking, truncation and the
ONNX cache (the int8 default is test_local_models.py's)."""

import math
import threading
from pathlib import Path

import pytest

from reactstep.tools.embedding.embeddings import Embedder, EmbeddingError, LocalEmbedder
from reactstep.tools.embedding.local_models import MINILM

CHUNKS = {
    "read": "def read_file(path):\n    return open(path).read()\n",
    "add": "def add(a, b):\n    return a + b\n",
    "http": (
        "import httpx\n\ndef fetch(url):\n    response = httpx.get(url, timeout=10)\n"
        "    response.raise_for_status()\n    return response.json()\n"
    ),
    "sort": "def sort_users(users):\n    return sorted(users, key=lambda user: user.last_name)\n",
}
FP32 = MINILM.name
TEXTS = ["", "x", "read a file from disk", "naïve café 日本語", CHUNKS["http"], "word " * 400]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One ONNX cache for the module, so the graph is exported once."""
    return tmp_path_factory.mktemp("embeddings-cache")


@pytest.fixture(scope="module")
def embedder(cache_dir: Path) -> LocalEmbedder:
    """The embedder most tests share, already loaded."""
    loaded = LocalEmbedder(cache_dir, model=FP32)
    loaded.embed_query("load")
    return loaded


def cached_graph(cache_dir: Path) -> Path:
    """The single exported graph in `cache_dir`."""
    (graph,) = cache_dir.glob("*.onnx")
    return graph


def dot(left: list[float], right: list[float]) -> float:
    """Cosine similarity of two unit vectors."""
    return sum(a * b for a, b in zip(left, right, strict=True))


def max_difference(left: list[list[float]], right: list[list[float]]) -> float:
    """Largest element-wise difference between two lists of vectors."""
    return max(abs(a - b) for x, y in zip(left, right, strict=True) for a, b in zip(x, y, strict=True))


def test_is_an_embedder_with_384_dimensions(embedder: LocalEmbedder) -> None:
    typed: Embedder = embedder
    assert (typed.model_name, typed.dimension) == ("local/all-MiniLM-L6-v2", 384)
    assert len(embedder.embed_query("read a file")) == 384


@pytest.mark.parametrize("text", TEXTS)
def test_vectors_are_unit_length(embedder: LocalEmbedder, text: str) -> None:
    assert math.hypot(*embedder.embed_query(text)) == pytest.approx(1.0, abs=1e-5)


def test_same_input_gives_the_same_vector(embedder: LocalEmbedder) -> None:
    assert embedder.embed_documents(TEXTS) == embedder.embed_documents(TEXTS)


@pytest.mark.parametrize(
    ("query", "best"),
    [
        ("read a file from disk", "read"),
        ("load the contents of a text file", "read"),
        ("download JSON from a URL", "http"),
        ("sum two numbers", "add"),
        ("order people by surname", "sort"),
    ],
)
def test_query_ranks_the_matching_chunk_first(embedder: LocalEmbedder, query: str, best: str) -> None:
    vectors = dict(zip(CHUNKS, embedder.embed_documents(list(CHUNKS.values())), strict=True))
    query_vector = embedder.embed_query(query)
    ranking = sorted(vectors, key=lambda name: dot(query_vector, vectors[name]), reverse=True)
    assert ranking[0] == best


def test_no_documents_give_no_vectors(embedder: LocalEmbedder) -> None:
    assert embedder.embed_documents([]) == []


def test_text_that_is_not_unicode_is_an_embedding_error(embedder: LocalEmbedder) -> None:
    # What reading bytes with errors="surrogateescape" leaves behind.
    with pytest.raises(EmbeddingError, match="valid Unicode"):
        embedder.embed_documents(["fine", "bad \udcff byte"])


def test_long_input_is_cut_to_256_word_pieces(embedder: LocalEmbedder) -> None:
    # "alpha" and "beta" are one word piece each; [CLS] and [SEP] take the other two of the 256.
    fits_exactly = "alpha beta " * 127
    one_piece_short = fits_exactly.removesuffix("beta ")
    long = "alpha beta " * 10_000
    assert max_difference([embedder.embed_query(long)], [embedder.embed_query(fits_exactly)]) < 1e-5
    assert max_difference([embedder.embed_query(long)], [embedder.embed_query(one_piece_short)]) > 1e-4


def test_batches_match_one_by_one(cache_dir: Path, embedder: LocalEmbedder) -> None:
    texts = [*TEXTS, *CHUNKS.values()]
    batched = LocalEmbedder(cache_dir, batch_size=3, threads=1, model=FP32).embed_documents(texts)
    assert max_difference(batched, [embedder.embed_query(text) for text in texts]) < 1e-5


def test_construction_loads_nothing(tmp_path: Path) -> None:
    LocalEmbedder(tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(("batch_size", "threads"), [(0, 0), (8, -1)])
def test_bad_settings_are_refused(tmp_path: Path, batch_size: int, threads: int) -> None:
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        LocalEmbedder(tmp_path, batch_size=batch_size, threads=threads)


def test_an_unusable_cache_dir_is_an_embedding_error(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory should be")
    with pytest.raises(EmbeddingError, match="failed to load"):
        LocalEmbedder(blocker, model=FP32).embed_query("x")


def test_a_second_embedder_reuses_the_export(cache_dir: Path, embedder: LocalEmbedder) -> None:
    before = cached_graph(cache_dir).stat()
    vector = LocalEmbedder(cache_dir, model=FP32).embed_query("read a file")
    after = cached_graph(cache_dir).stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert vector == embedder.embed_query("read a file")


def test_a_corrupt_export_is_replaced(
    tmp_path: Path, cache_dir: Path, embedder: LocalEmbedder, capfd: pytest.CaptureFixture[str]
) -> None:
    corrupt = tmp_path / cached_graph(cache_dir).name
    corrupt.write_bytes(b"not an onnx graph")
    capfd.readouterr()
    vector = LocalEmbedder(tmp_path, model=FP32).embed_query("read a file")
    assert max_difference([vector], [embedder.embed_query("read a file")]) < 1e-5
    assert corrupt.stat().st_size == cached_graph(cache_dir).stat().st_size
    assert capfd.readouterr() == ("", "")  # the export is silent: no weight-loading bar reaches a log


def test_concurrent_first_use_exports_one_file(tmp_path: Path, embedder: LocalEmbedder) -> None:
    shared = LocalEmbedder(tmp_path, model=FP32)  # two threads race inside one embedder, one in another
    results: list[list[float]] = []

    def first_use(user: LocalEmbedder) -> None:
        results.append(user.embed_query("read a file"))

    threads = [
        threading.Thread(target=first_use, args=(user,))
        for user in (shared, shared, LocalEmbedder(tmp_path, model=FP32))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 3
    assert max_difference(results, [embedder.embed_query("read a file")] * 3) < 1e-5
    assert sorted(path.suffix for path in tmp_path.iterdir()) == [".lock", ".onnx"]
