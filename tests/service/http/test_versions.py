"""Every version of every file stays readable over HTTP: GET ?version=N answers the exact bytes the
path held at N, a delete is a version too, the change feed links each change to its bytes, and
retention and garbage collection keep what the contract promises."""

import base64
import hashlib
from collections.abc import Callable

import pytest
from starlette.testclient import TestClient

FILES = "/api/projects/p/files"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    built = make_client()
    assert built.put("/api/projects/p").status_code == 201
    return built


def test_each_version_of_a_path_reads_back_its_exact_bytes(client: TestClient) -> None:
    assert client.put(f"{FILES}/src/a.py", content=b"one\n").json()["version"] == 1
    assert client.put(f"{FILES}/src/b.py", content=b"other\n").json()["version"] == 2
    assert client.put(f"{FILES}/src/a.py", content=b"two\n").json()["version"] == 3
    assert client.delete(f"{FILES}/src/a.py").json()["version"] == 4
    assert client.put(f"{FILES}/src/a.py", content=b"one\n").json()["version"] == 5  # same bytes again
    expected = {1: b"one\n", 2: b"one\n", 3: b"two\n", 5: b"one\n"}
    for version, data in expected.items():
        reply = client.get(f"{FILES}/src/a.py", params={"version": version})
        assert (reply.status_code, reply.content) == (200, data), version
        assert reply.headers["etag"] == f'"{hashlib.md5(data).hexdigest()}"'
        digest = base64.b64encode(hashlib.sha256(data).digest()).decode()
        assert reply.headers["repr-digest"] == f"sha-256=:{digest}:"
    for version in (0, 4):  # before it existed; deleted
        reply = client.get(f"{FILES}/src/a.py", params={"version": version})
        assert (reply.status_code, reply.json()["error"]["code"]) == (404, "file_not_found"), version
    ahead = client.get(f"{FILES}/src/a.py", params={"version": 6})
    assert (ahead.status_code, ahead.json()["error"]["code"]) == (409, "conflict")
    bad = client.get(f"{FILES}/src/a.py", params={"version": "x"})
    assert bad.status_code == 422


def test_an_empty_file_is_a_version_that_reads_back_empty(client: TestClient) -> None:
    """Found by the protocol model: kept empty bytes were taken for bytes never kept (404)."""
    assert client.put(f"{FILES}/empty.py", content=b"").json()["version"] == 1
    assert client.put(f"{FILES}/empty.py", content=b"x").json()["version"] == 2
    reply = client.get(f"{FILES}/empty.py", params={"version": 1})
    assert (reply.status_code, reply.content) == (200, b"")


def test_the_change_feed_links_every_change_to_its_bytes(client: TestClient) -> None:
    client.put(f"{FILES}/dir/x y.py", content=b"spaced\n")
    client.put(f"{FILES}/dir/x y.py", content=b"changed\n")
    client.delete(f"{FILES}/dir/x y.py")
    changes = client.get("/api/projects/p/changes", params={"since": 0}).json()["changes"]
    assert [change["url"] for change in changes] == [
        "/api/projects/p/files/dir/x%20y.py?version=1",
        "/api/projects/p/files/dir/x%20y.py?version=2",
        None,
    ]
    assert [client.get(change["url"]).content for change in changes[:2]] == [b"spaced\n", b"changed\n"]


def test_the_bytes_a_change_replaces_stay_readable_for_a_file_stored_before_versions(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()  # the "demo" project was stored file by file, with no versions kept
    assert client.get("/api/projects/demo/files/README.md", params={"version": 0}).content == b"# Demo\n"
    assert client.put("/api/projects/demo/files/README.md", content=b"# New\n").json()["version"] == 1
    assert client.get("/api/projects/demo/files/README.md", params={"version": 0}).content == b"# Demo\n"
    assert client.get("/api/projects/demo/files/README.md", params={"version": 1}).content == b"# New\n"
    never = client.get("/api/projects/demo/files/nope.py", params={"version": 1})
    assert (never.status_code, never.json()["error"]["code"]) == (404, "file_not_found")


def test_past_the_window_only_the_last_100_versions_of_a_path_are_kept(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(version_retention_days=0)
    assert client.put("/api/projects/p").status_code == 201
    for number in range(1, 103):
        assert client.put(f"{FILES}/a.py", content=f"v{number}\n".encode()).json()["version"] == number
    for version in (1, 2):
        gone = client.get(f"{FILES}/a.py", params={"version": version})
        assert (gone.status_code, gone.json()["error"]["code"]) == (404, "version_not_found"), version
    for version in (3, 50, 102):
        assert client.get(f"{FILES}/a.py", params={"version": version}).content == f"v{version}\n".encode()
    collected = client.post("/api/projects/p/gc")  # the pruned blobs are loose for less than the grace
    assert (collected.status_code, collected.json()) == (200, {"removed": [], "paths": 1})
    assert client.get(f"{FILES}/a.py", params={"version": 3}).content == b"v3\n"


def test_gc_of_a_missing_project_is_404(client: TestClient) -> None:
    reply = client.post("/api/projects/nope/gc")
    assert (reply.status_code, reply.json()["error"]["code"]) == (404, "project_not_found")
