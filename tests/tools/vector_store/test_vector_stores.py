"""Contract tests for the vector stores: qdrant-edge on disk and qdrant-client's ":memory:" behave alike."""

import math
import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from reactstep.service.backends import open_vector_store
from reactstep.service.settings import Settings
from reactstep.tools.embedding.sparse import encode_document, encode_query, token_index
from reactstep.tools.errors import VectorStoreError, VectorStoreUnavailable
from reactstep.tools.vector_store.edge import EdgeVectorStore
from reactstep.tools.vector_store.qdrant import QdrantVectorStore
from reactstep.tools.vector_store.store import (
    CHUNK_VECTORS,
    DENSE,
    NAME,
    SPARSE,
    ChunkPoint,
    Ranking,
    SearchFilter,
    VectorStore,
)

COLLECTION = "chunks"
DIM = 4
REPO = Path(__file__).resolve().parents[3]
EAST = [1.0, 0.0, 0.0, 0.0]
ALPHA = SearchFilter("alpha")


def point_id(name: str) -> str:
    """A deterministic UUID string per test name, as the indexer makes them."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, name))


def chunk(
    name: str,
    project: str = "alpha",
    path: str = "src/app.py",
    dense: list[float] | None = None,
    text: str = "",
    language: str = "python",
) -> ChunkPoint:
    """A point with a full payload; `name` makes the id and the content hash."""
    payload: dict[str, Any] = {
        "project_id": project,
        "path": path,
        "start_line": 1,
        "end_line": 3,
        "language": language,
        "symbol": name,
        "kind": "function",
        "content_hash": f"hash-{name}",
        "content": text,
    }
    return ChunkPoint(point_id(name), dense or EAST, encode_document(text), payload)


def names(hits: list[Any]) -> list[str]:
    """The symbols of hits, in rank order."""
    return [hit.payload["symbol"] for hit in hits]


@pytest.fixture(params=["edge", "qdrant"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    """Each back-end with the collection made; closed afterwards."""
    made: VectorStore = (
        EdgeVectorStore(tmp_path / "vectors") if request.param == "edge" else QdrantVectorStore(":memory:")
    )
    made.ensure_collection(COLLECTION, DIM)
    yield made
    made.close()


def test_ensure_collection_is_idempotent(store: VectorStore) -> None:
    store.upsert(COLLECTION, [chunk("one")])
    store.ensure_collection(COLLECTION, DIM)
    assert store.collections() == [COLLECTION]
    assert store.count(COLLECTION, "alpha") == 1


def test_ensure_collection_refuses_another_dimension(store: VectorStore) -> None:
    with pytest.raises(VectorStoreError, match="dimension"):
        store.ensure_collection(COLLECTION, 8)


@pytest.mark.parametrize("name", ["../x", "a/b", "", ".hidden", "a b"])
def test_invalid_collection_names_are_refused(store: VectorStore, name: str) -> None:
    with pytest.raises(VectorStoreError, match="invalid collection name"):
        store.ensure_collection(name, DIM)


def test_unknown_collection_is_a_usage_error(store: VectorStore) -> None:
    calls: list[Callable[[], object]] = [
        lambda: store.upsert("missing", [chunk("one")]),
        lambda: store.count("missing", "alpha"),
        lambda: store.search_dense("missing", EAST, ALPHA, 5),
        lambda: store.project_points("missing", "alpha"),
    ]
    for call in calls:
        with pytest.raises(VectorStoreError):
            call()


def test_wrong_vector_size_is_a_usage_error(store: VectorStore) -> None:
    with pytest.raises(VectorStoreError):
        store.upsert(COLLECTION, [chunk("short", dense=[1.0, 0.0])])
    with pytest.raises(VectorStoreError):
        store.search_dense(COLLECTION, [1.0, 0.0], ALPHA, 5)


def test_payload_without_project_is_refused(store: VectorStore) -> None:
    point = chunk("orphan")
    del point.payload["project_id"]
    with pytest.raises(VectorStoreError, match="project_id"):
        store.upsert(COLLECTION, [point])


def test_upsert_in_batches_and_count_per_project(store: VectorStore) -> None:
    store.upsert(
        COLLECTION, [chunk(f"a{n}") for n in range(600)] + [chunk(f"b{n}", "beta") for n in range(5)]
    )
    assert (store.count(COLLECTION, "alpha"), store.count(COLLECTION, "beta")) == (600, 5)
    assert store.count(COLLECTION, "gamma") == 0


def test_upsert_replaces_a_point_with_the_same_id(store: VectorStore) -> None:
    store.upsert(COLLECTION, [chunk("one")])
    replaced = chunk("one", path="src/moved.py")
    store.upsert(COLLECTION, [ChunkPoint(replaced.id, replaced.dense, replaced.sparse, replaced.payload)])
    hits = store.search_dense(COLLECTION, EAST, ALPHA, 5)
    assert [hit.payload["path"] for hit in hits] == ["src/moved.py"]


def test_projects_see_only_their_own_points(store: VectorStore) -> None:
    text = "def get_user_name(user): return user.name"
    store.upsert(COLLECTION, [chunk("mine", text=text), chunk("theirs", "beta", text=text)])
    dense = store.search_dense(COLLECTION, EAST, ALPHA, 10)
    sparse = store.search_sparse(COLLECTION, encode_query("get_user_name"), ALPHA, 10)
    assert (names(dense), names(sparse)) == (["mine"], ["mine"])
    assert list(store.project_points(COLLECTION, "beta")) == [point_id("theirs")]


def test_a_project_alone_in_its_collection_and_then_not(store: VectorStore) -> None:
    """The embedded store drops the project filter while one project holds every point; a write of
    another project's point brings it back."""
    text = "def get_user_name(user): return user.name"
    store.upsert(
        COLLECTION, [chunk("first", dense=[0.8, 0.6, 0.0, 0.0], text=text), chunk("second", text=text)]
    )
    assert names(store.search_dense(COLLECTION, EAST, ALPHA, 10)) == ["second", "first"]
    assert store.search_dense(COLLECTION, EAST, SearchFilter("beta"), 10) == []
    store.upsert(COLLECTION, [chunk("theirs", "beta", text=text)])  # the nearest point, and beta's
    assert names(store.search_dense(COLLECTION, EAST, ALPHA, 10)) == ["second", "first"]
    assert names(store.search_sparse(COLLECTION, encode_query("get_user_name"), ALPHA, 1)) in (
        ["first"],
        ["second"],
    )
    assert names(store.search_dense(COLLECTION, EAST, SearchFilter("beta"), 10)) == ["theirs"]
    store.delete(COLLECTION, [point_id("theirs")])
    assert names(store.search_dense(COLLECTION, EAST, ALPHA, 1)) == ["second"]


PATHS = {"x": "src/api/x.py", "y": "src/api/sub/y.py", "apix": "src/apix.py", "doc": "docs/a.md"}


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("src/api", ["x", "y"]),
        ("src/api/", ["x", "y"]),
        ("src", ["apix", "x", "y"]),
        ("src/api/x.py", ["x"]),
        ("src/ap", []),
        ("", ["apix", "doc", "x", "y"]),
        (None, ["apix", "doc", "x", "y"]),
    ],
)
def test_path_prefix_matches_whole_directories(
    store: VectorStore, prefix: str | None, expected: list[str]
) -> None:
    store.upsert(COLLECTION, [chunk(name, path=path, text="handler") for name, path in PATHS.items()])
    where = SearchFilter("alpha", path_prefix=prefix)
    assert sorted(names(store.search_dense(COLLECTION, EAST, where, 10))) == expected
    assert sorted(names(store.search_sparse(COLLECTION, encode_query("handler"), where, 10))) == expected


def test_language_filter(store: VectorStore) -> None:
    store.upsert(COLLECTION, [chunk("py", language="python"), chunk("go", path="main.go", language="go")])
    where = SearchFilter("alpha", language="go")
    assert names(store.search_dense(COLLECTION, EAST, where, 10)) == ["go"]
    both = SearchFilter("alpha", path_prefix="src", language="go")
    assert store.search_dense(COLLECTION, EAST, both, 10) == []


def test_dense_ranking_is_by_cosine(store: VectorStore) -> None:
    vectors = {"same": [2.0, 0.0, 0.0, 0.0], "near": [1.0, 1.0, 0.0, 0.0], "far": [0.0, 0.0, 1.0, 0.0]}
    vectors["opposite"] = [-1.0, 0.0, 0.0, 0.0]
    store.upsert(COLLECTION, [chunk(name, dense=dense) for name, dense in vectors.items()])
    hits = store.search_dense(COLLECTION, EAST, ALPHA, 3)
    assert names(hits) == ["same", "near", "far"]
    assert [hit.score for hit in hits] == pytest.approx([1.0, 1 / math.sqrt(2), 0.0], abs=1e-6)


CODE = {
    "get_user_name": "def get_user_name(user):\n    return user.name",
    "get_user_email": "def get_user_email(user):\n    return user.email",
    "order_book": "class OrderBook:\n    def add(self, order):\n        self.orders.append(order)",
    "parse_config": "def parse_config(path):\n    return yaml.safe_load(open(path))",
}


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("get_user_name", "get_user_name"),
        ("getUserName", "get_user_name"),
        ("get user name", "get_user_name"),
        ("get_user_email", "get_user_email"),
        ("OrderBook", "order_book"),
        ("yaml config", "parse_config"),
    ],
)
def test_sparse_ranks_the_matching_chunk_first(store: VectorStore, query: str, first: str) -> None:
    store.upsert(COLLECTION, [chunk(name, text=text) for name, text in CODE.items()])
    hits = store.search_sparse(COLLECTION, encode_query(query), ALPHA, 10)
    assert names(hits)[0] == first


def test_sparse_score_is_bm25_with_the_projects_idf(store: VectorStore) -> None:
    store.upsert(COLLECTION, [chunk(name, text=text) for name, text in CODE.items()])
    # Another project full of the same term must not change alpha's IDF.
    store.upsert(COLLECTION, [chunk(f"noise{n}", "beta", text="OrderBook") for n in range(20)])
    hits = store.search_sparse(COLLECTION, encode_query("orderbook"), ALPHA, 10)
    document = encode_document(CODE["order_book"])
    weight = dict(zip(document.indices, document.values, strict=True))[token_index("orderbook")]
    idf = math.log(1 + (4 - 1 + 0.5) / (1 + 0.5))  # 4 alpha chunks, 1 has the term
    assert names(hits) == ["order_book"]
    assert hits[0].score == pytest.approx(idf * weight)


def test_empty_sparse_query_finds_nothing(store: VectorStore) -> None:
    store.upsert(COLLECTION, [chunk("one", text="anything")])
    assert store.search_sparse(COLLECTION, encode_query("the a"), ALPHA, 10) == []


def test_delete(store: VectorStore) -> None:
    store.upsert(COLLECTION, [chunk(f"c{n}") for n in range(5)])
    store.delete(COLLECTION, [point_id("c1"), point_id("c3"), point_id("never-stored")])
    assert store.count(COLLECTION, "alpha") == 3
    assert sorted(names(store.search_dense(COLLECTION, EAST, ALPHA, 10))) == [
        "c0",
        "c2",
        "c4",
    ]


def test_project_points_reads_every_page(store: VectorStore) -> None:
    store.upsert(COLLECTION, [chunk(f"c{n}") for n in range(1500)] + [chunk("other", "beta")])
    facts = {"path": "src/app.py", "start_line": 1, "end_line": 3}
    assert store.project_points(COLLECTION, "alpha") == {
        point_id(f"c{n}"): {**facts, "content_hash": f"hash-c{n}"} for n in range(1500)
    }
    assert store.project_points(COLLECTION, "gamma") == {}


def test_update_payload_changes_only_the_named_fields(store: VectorStore) -> None:
    store.upsert(COLLECTION, [chunk("one", text="def one(): pass"), chunk("two")])
    store.update_payload(COLLECTION, {point_id("one"): {"start_line": 7, "end_line": 9, "file_etag": "e2"}})
    points = store.project_points(COLLECTION, "alpha")
    assert points[point_id("one")] == {
        "path": "src/app.py", "start_line": 7, "end_line": 9, "file_etag": "e2", "content_hash": "hash-one",
    }  # fmt: skip
    assert points[point_id("two")]["start_line"] == 1
    hits = store.search_sparse(COLLECTION, encode_query("one"), ALPHA, 5)
    assert [(hit.payload["symbol"], hit.payload["content"]) for hit in hits] == [("one", "def one(): pass")]


def test_payload_round_trips_without_path_prefixes(store: VectorStore) -> None:
    point = chunk("one", path="src/api/x.py", text="def one(): pass")
    point.payload["tags"] = ["a", "b"]
    store.upsert(COLLECTION, [point])
    (dense,) = store.search_dense(COLLECTION, EAST, ALPHA, 10)
    (sparse,) = store.search_sparse(COLLECTION, encode_query("one"), ALPHA, 10)
    assert dense.id == sparse.id == point.id
    assert dense.payload == sparse.payload == point.payload


def test_check_passes_on_a_working_store(store: VectorStore) -> None:
    store.check()


# --- the embedded store: persistence and one owner per directory -------------------------------


def test_edge_store_persists_across_reopen(tmp_path: Path) -> None:
    first = EdgeVectorStore(tmp_path)
    first.ensure_collection(COLLECTION, DIM)
    first.upsert(COLLECTION, [chunk(name, text=text) for name, text in CODE.items()])
    before = first.search_sparse(COLLECTION, encode_query("getUserName"), ALPHA, 10)
    first.close()
    second = EdgeVectorStore(tmp_path)
    try:
        assert second.collections() == [COLLECTION]
        assert second.count(COLLECTION, "alpha") == len(CODE)  # loaded without ensure_collection
        assert second.search_sparse(COLLECTION, encode_query("getUserName"), ALPHA, 10) == before
        with pytest.raises(VectorStoreError, match="dimension"):
            second.ensure_collection(COLLECTION, 8)
        second.ensure_collection(COLLECTION, DIM)
    finally:
        second.close()


def try_open_in_child(path: Path) -> str:
    """Open an EdgeVectorStore at `path` in a fresh interpreter; return what it printed."""
    script = (
        "import sys\nfrom pathlib import Path\n"
        "from reactstep.tools.vector_store.edge import EdgeVectorStore\n"
        "from reactstep.tools.errors import VectorStoreUnavailable\n"
        "try:\n    EdgeVectorStore(Path(sys.argv[1])).close()\n    print('opened')\n"
        "except VectorStoreUnavailable as exc:\n    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_edge_store_has_one_owner_process(tmp_path: Path) -> None:
    owner = EdgeVectorStore(tmp_path)
    try:
        message = try_open_in_child(tmp_path)
        assert message == (
            f"the vector store at {tmp_path} is in use by another process (pid {os.getpid()}); "
            "run one server per data dir or use a Qdrant server (REACTSTEP_VECTOR_BACKEND=qdrant)"
        )
        with pytest.raises(VectorStoreUnavailable, match="in use by another process"):
            EdgeVectorStore(tmp_path)  # a second opener in the same process is refused too
    finally:
        owner.close()
    assert try_open_in_child(tmp_path) == "opened"


def test_closed_edge_store_is_unavailable(tmp_path: Path) -> None:
    closed = EdgeVectorStore(tmp_path)
    closed.ensure_collection(COLLECTION, DIM)
    closed.close()
    closed.close()
    with pytest.raises(VectorStoreUnavailable, match="closed"):
        closed.check()
    with pytest.raises(VectorStoreUnavailable, match="closed"):
        closed.count(COLLECTION, "alpha")


# --- the Qdrant server path: unreachable server, and the factory --------------------------------


def dead_url() -> str:
    """A loopback URL where nothing listens: a port the OS just handed out and took back."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_unreachable_qdrant_is_unavailable() -> None:
    remote = QdrantVectorStore(dead_url(), timeout_s=2)
    with pytest.raises(VectorStoreUnavailable, match="Qdrant could not"):
        remote.check()
    with pytest.raises(VectorStoreUnavailable):
        remote.ensure_collection(COLLECTION, DIM)


def test_open_vector_store_picks_the_configured_back_end(tmp_path: Path) -> None:
    embedded = open_vector_store(Settings(data_dir=tmp_path))
    remote = open_vector_store(Settings(data_dir=tmp_path, vector_backend="qdrant", qdrant_url=":memory:"))
    try:
        assert (type(embedded), type(remote)) == (EdgeVectorStore, QdrantVectorStore)
        assert (tmp_path / "vectors" / "store.lock").is_file()
    finally:
        embedded.close()
        remote.close()
    with pytest.raises(VectorStoreError, match="QDRANT_URL"):
        open_vector_store(Settings(data_dir=tmp_path, vector_backend="qdrant"))


def test_dense_vectors_are_read_back_by_id(store: VectorStore) -> None:
    north = [0.0, 1.0, 0.0, 0.0]
    store.upsert(COLLECTION, [chunk(f"v{n}", dense=north if n % 2 else EAST) for n in range(300)])
    wanted = [point_id(f"v{n}") for n in range(300)] + [point_id("never stored")]
    found = store.dense_vectors(COLLECTION, wanted)
    assert len(found) == 300
    assert (found[point_id("v0")], found[point_id("v1")]) == (EAST, north)


def test_project_points_below_a_path(store: VectorStore) -> None:
    store.upsert(COLLECTION, [chunk(name, path=path) for name, path in PATHS.items()])
    below = store.project_points(COLLECTION, "alpha", "src/api")
    assert sorted(facts["path"] for facts in below.values()) == ["src/api/sub/y.py", "src/api/x.py"]
    assert [facts["path"] for facts in store.project_points(COLLECTION, "alpha", "src/apix.py").values()] == [
        "src/apix.py"
    ]


def test_a_second_named_dense_vector_ranks_on_its_own(store: VectorStore) -> None:
    store.ensure_collection("named", DIM, CHUNK_VECTORS)
    north = [0.0, 1.0, 0.0, 0.0]
    by_code = replace(chunk("by_code", dense=EAST), name=north)
    by_name = replace(chunk("by_name", dense=north), name=EAST)
    store.upsert("named", [by_code, by_name])
    assert names(store.search_dense("named", EAST, ALPHA, 2)) == ["by_code", "by_name"]
    assert names(store.search_dense("named", EAST, ALPHA, 2, using=NAME)) == ["by_name", "by_code"]


def test_rankings_searched_in_one_batch_answer_as_searched_one_by_one(store: VectorStore) -> None:
    store.ensure_collection("named", DIM, CHUNK_VECTORS)
    north = [0.0, 1.0, 0.0, 0.0]
    by_code = replace(chunk("by_code", dense=EAST, text="def parse_header(line): pass"), name=north)
    by_name = replace(chunk("by_name", dense=north, text="def render_page(page): pass"), name=EAST)
    theirs = replace(chunk("theirs", "beta", dense=EAST, text="def parse_header(line): pass"), name=EAST)
    store.upsert("named", [by_code, by_name, theirs])
    words, unknown = encode_query("parse header"), encode_query("the")
    rankings = [Ranking(NAME, EAST), Ranking(SPARSE, unknown), Ranking(DENSE, north), Ranking(SPARSE, words)]

    batch = store.search_rankings("named", rankings, ALPHA, 2)

    assert [names(hits) for hits in batch] == [
        ["by_name", "by_code"],
        [],
        ["by_name", "by_code"],
        ["by_code"],
    ]
    assert batch == [
        store.search_dense("named", EAST, ALPHA, 2, using=NAME),
        store.search_sparse("named", unknown, ALPHA, 2),
        store.search_dense("named", north, ALPHA, 2),
        store.search_sparse("named", words, ALPHA, 2),
    ]
    assert store.search_rankings("named", [], ALPHA, 2) == []
