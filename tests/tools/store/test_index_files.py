"""Index files beside the projects (symbol index, overview): both back-ends alike, outside every tree."""

import uuid
from pathlib import Path
from typing import Any

import pytest

from reactstep.service.backends import open_store, s3_client
from reactstep.service.settings import Settings
from reactstep.tools.errors import StoreUnavailable, UnsafePath
from reactstep.tools.store.local import LocalStore
from reactstep.tools.store.objects import ObjectStore
from reactstep.tools.store.paths import normalize_path
from tests.tools.store.test_storage import dead_endpoint, s3_settings


@pytest.fixture(params=["local", "s3"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[ObjectStore, Any]:
    """A store, and what finds its raw files: the local root, or (S3 client, bucket)."""
    if request.param == "local":
        return open_store(Settings(storage_backend="local", data_dir=tmp_path)), tmp_path / "objects"
    settings = s3_settings(request.getfixturevalue("s3_server"), f"t-{uuid.uuid4().hex[:24]}")
    client = s3_client(settings)
    client.create_bucket(Bucket=settings.s3_bucket)
    return open_store(settings), (client, settings.s3_bucket)


@pytest.fixture
def store(backend: tuple[ObjectStore, Any]) -> ObjectStore:
    return backend[0]


def test_a_missing_index_file_is_none(store: ObjectStore) -> None:
    assert store.get_index_file("demo", "symbols.json") is None


def test_put_then_get_replaces_the_content(store: ObjectStore) -> None:
    store.put_index_file("demo", "symbols.json", b'{"version": 1}')
    store.put_index_file("demo", "symbols.json", b'{"version": 2}')
    store.put_index_file("other", "symbols.json", b"other")
    assert store.get_index_file("demo", "symbols.json") == b'{"version": 2}'
    assert store.get_index_file("other", "symbols.json") == b"other"
    assert store.get_index_file("demo", "overview.md") is None


def test_index_files_live_beside_the_projects(backend: tuple[ObjectStore, Any]) -> None:
    store, raw = backend
    store.put_index_file("demo", "overview.md", b"# Project overview\n")
    if isinstance(raw, Path):
        assert (raw / ".reactstep-index" / "demo" / "overview.md").read_bytes() == b"# Project overview\n"
    else:
        client, bucket = raw
        key = "projects/.reactstep-index/demo/overview.md"
        assert client.get_object(Bucket=bucket, Key=key)["Body"].read() == b"# Project overview\n"


def test_no_file_tool_path_reaches_them(store: ObjectStore) -> None:
    store.put("demo", "src/app.py", b"x = 1\n")
    store.put_index_file("demo", "symbols.json", b"{}")
    assert [info.path for info in store.list("demo")] == ["src/app.py"]
    with pytest.raises(UnsafePath):  # a path reaches the store only through normalize_path
        store.get("demo", normalize_path("../.reactstep-index/demo/symbols.json"))


@pytest.mark.parametrize("name", ["", ".hidden", "a/b", "../x", "a\\b", "x" * 129, "sym bols.json"])
def test_bad_names_are_refused(store: ObjectStore, name: str) -> None:
    with pytest.raises(ValueError, match="invalid index file name"):
        store.put_index_file("demo", name, b"x")
    with pytest.raises(ValueError, match="invalid index file name"):
        store.get_index_file("demo", name)


@pytest.mark.parametrize("project_id", [".reactstep-index", ".hidden", "", "a/b"])
def test_no_project_can_be_the_index_folder(store: ObjectStore, project_id: str) -> None:
    with pytest.raises(ValueError, match="invalid project id"):
        store.put(project_id, "symbols.json", b"x")
    with pytest.raises(ValueError, match="invalid project id"):
        store.get_index_file(project_id, "symbols.json")


def test_an_unreachable_s3_store_is_unavailable_not_missing() -> None:
    store = open_store(s3_settings(dead_endpoint(), "unused", s3_timeout_s=0.5))
    with pytest.raises(StoreUnavailable):
        store.get_index_file("demo", "symbols.json")
    with pytest.raises(StoreUnavailable):
        store.put_index_file("demo", "symbols.json", b"{}")


def test_a_local_root_that_is_a_file_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "root").write_bytes(b"not a folder")
    store = LocalStore(tmp_path / "root")
    with pytest.raises(StoreUnavailable):
        store.put_index_file("demo", "symbols.json", b"{}")
    assert store.get_index_file("demo", "symbols.json") is None
