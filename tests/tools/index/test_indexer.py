"""Incremental indexing with the real model, the embedded engine and qdrant-client's local mode."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from reactstep.tools.embedding.embeddings import LocalEmbedder
from reactstep.tools.index.incremental import index_paths
from reactstep.tools.index.indexer import IndexReport, collection_name, index_project
from reactstep.tools.index.progress import IndexProgress
from reactstep.tools.store.local import LocalStore
from reactstep.tools.vector_store.qdrant import QdrantVectorStore
from reactstep.tools.vector_store.store import SearchFilter, VectorStore

APP = b'''"""The demo app."""

import os


def load_config(path):
    """Read the settings file."""
    with open(path) as handle:
        return handle.read()


class UserService:
    def get_user_name(self, user_id):
        return self.names[user_id]

    def delete_user(self, user_id):
        del self.names[user_id]
'''
README = b"# Demo\n\nA small project used by the indexer tests.\n"


@pytest.fixture(params=["edge", "qdrant"])
def vectors(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    from reactstep.tools.vector_store.edge import EdgeVectorStore

    store: VectorStore = (
        EdgeVectorStore(tmp_path / "vectors") if request.param == "edge" else QdrantVectorStore(":memory:")
    )
    yield store
    store.close()


@pytest.fixture
def files(tmp_path: Path) -> LocalStore:
    store = LocalStore(tmp_path / "objects")
    store.put("demo", "src/app.py", APP)
    store.put("demo", "README.md", README)
    store.put("demo", "logo.png", b"\x89PNG\x00\x00")
    store.put("other", "src/app.py", APP)
    return store


def run(
    files: LocalStore, vectors: VectorStore, embedder: LocalEmbedder, max_bytes: int = 100_000
) -> IndexReport:
    report = index_project("demo", files, vectors, embedder, max_file_bytes=max_bytes)
    return report


def counts(report: IndexReport) -> tuple[int, int, int, int, int, int]:
    return (report.files, report.chunks, report.embedded, report.reused, report.removed, report.skipped)


def test_first_run_embeds_everything_and_second_run_nothing(
    files: LocalStore, vectors: VectorStore, local_embedder: LocalEmbedder
) -> None:
    first = run(files, vectors, local_embedder)
    assert first.collection == "chunks_local_all_minilm_l6_v2_code_int8_q2_minilm_code_4_384_w3"
    assert first.files == 2  # the PNG is not a text file the chunker knows
    assert first.embedded == first.chunks > 3
    assert vectors.count(first.collection, "demo") == first.chunks
    assert vectors.count(first.collection, "other") == 0
    second = run(files, vectors, local_embedder)
    assert counts(second) == (2, first.chunks, 0, first.chunks, 0, 0)


def test_changing_one_function_embeds_only_its_chunks(
    files: LocalStore, vectors: VectorStore, local_embedder: LocalEmbedder
) -> None:
    first = run(files, vectors, local_embedder)
    files.put("demo", "src/app.py", APP.replace(b"del self.names[user_id]", b"self.names.pop(user_id)"))
    second = run(files, vectors, local_embedder)
    # The method and the class around it changed; the rest of the file is reused.
    assert (second.embedded, second.removed) == (2, 2)
    assert second.reused == first.chunks - 2


def test_moving_code_down_updates_lines_without_embedding(
    files: LocalStore, vectors: VectorStore, local_embedder: LocalEmbedder
) -> None:
    run(files, vectors, local_embedder)
    files.put("demo", "src/app.py", b"\n\n" + APP)
    second = run(files, vectors, local_embedder)
    assert second.embedded == 0
    points = vectors.project_points(second.collection, "demo")
    lines = sorted((p["start_line"], p["end_line"]) for p in points.values() if p["path"] == "src/app.py")
    hit = vectors.search_sparse(second.collection, _query("load_config"), SearchFilter("demo"), 1)[0]
    assert (hit.payload["symbol"], hit.payload["start_line"]) == ("load_config", 8)
    assert min(lines)[0] == 3


def test_deleted_and_oversize_files_lose_their_points(
    files: LocalStore, vectors: VectorStore, local_embedder: LocalEmbedder
) -> None:
    first = run(files, vectors, local_embedder)
    files.delete("demo", "README.md")
    second = run(files, vectors, local_embedder, max_bytes=100)
    assert (second.files, second.chunks, second.skipped, second.embedded) == (1, 0, 1, 0)
    assert second.removed == first.chunks
    assert vectors.count(collection_name(local_embedder), "demo") == 0


def _query(text: str):  # type: ignore[no-untyped-def]
    from reactstep.tools.embedding.sparse import encode_query

    return encode_query(text)


def test_renaming_a_directory_or_indexing_the_same_code_again_embeds_nothing(
    files: LocalStore, vectors: VectorStore, local_embedder: LocalEmbedder
) -> None:
    first = run(files, vectors, local_embedder)
    files.delete("demo", "src/app.py")
    files.put("demo", "lib/core/app.py", APP)  # the directory renamed
    moved = run(files, vectors, local_embedder)
    assert (moved.embedded, moved.reused, moved.chunks) == (0, first.chunks, first.chunks)
    paths = {facts["path"] for facts in vectors.project_points(moved.collection, "demo").values()}
    assert paths == {"lib/core/app.py", "README.md"}
    other = index_project("other", files, vectors, local_embedder, max_file_bytes=100_000)
    assert (other.embedded, other.reused) == (0, other.chunks)  # another project, the same code
    files.put("demo", "lib/core/app.py", APP + b"\n\ndef extra():\n    return 1\n")
    changed = run(files, vectors, local_embedder)
    assert changed.embedded == 1  # only the new function
    files.put("demo", "lib/core/app.py", APP)  # reverted
    assert run(files, vectors, local_embedder).embedded == 0


def test_index_paths_touches_only_the_given_files(
    files: LocalStore, vectors: VectorStore, local_embedder: LocalEmbedder
) -> None:
    first = run(files, vectors, local_embedder)
    files.put("demo", "src/app.py", APP.replace(b"del self.names[user_id]", b"self.names.pop(user_id)"))
    files.put("demo", "src/new.py", b"def fresh_function():\n    return 'fresh'\n")
    report = index_paths(
        "demo", files, vectors, local_embedder, ["src/app.py", "src/new.py"], max_file_bytes=100_000
    )
    assert (report.files, report.embedded, report.removed) == (2, 3, 2)
    assert vectors.count(report.collection, "demo") == first.chunks + 1
    files.delete("demo", "src/new.py")
    gone = index_paths("demo", files, vectors, local_embedder, ["src/new.py"], max_file_bytes=100_000)
    assert (gone.files, gone.removed) == (0, 1)
    assert vectors.count(report.collection, "demo") == first.chunks
    assert run(files, vectors, local_embedder).embedded == 0  # a full run agrees with the partial ones


def test_progress_goes_on_while_chunks_are_embedded(
    files: LocalStore, vectors: VectorStore, local_embedder: LocalEmbedder
) -> None:
    calls: list[IndexProgress] = []
    index_project("demo", files, vectors, local_embedder, max_file_bytes=100_000, progress=calls.append)
    # One step per file planned (logo.png is no source), one per embedding window, then the writes.
    assert [
        (step.phase, step.files_done, step.chunks_done, step.chunks_total, step.path) for step in calls
    ] == [
        ("scan", 1, 0, 1, "README.md"),
        ("scan", 2, 0, 6, "src/app.py"),
        ("embed", 2, 0, 6, "src/app.py"),
        ("embed", 2, 6, 6, "src/app.py"),
        ("write", 2, 6, 6, "src/app.py"),
        ("done", 2, 6, 6, "src/app.py"),
    ]
    assert {step.files_total for step in calls} == {2}
