"""Contract tests for the object store: the local tree and S3 (moto on loopback) behave alike."""

import hashlib
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reactstep.service.backends import open_store, s3_client
from reactstep.service.settings import Settings
from reactstep.tools.errors import StoreUnavailable, ToolError, UnsafePath
from reactstep.tools.store.local import LocalStore
from reactstep.tools.store.local_disk import TEMP_PREFIX
from reactstep.tools.store.objects import ObjectInfo, ObjectStore
from reactstep.tools.store.paths import normalize_path
from reactstep.tools.store.s3 import S3Store

SECRET = "test-secret-do-not-leak"
UNSAFE_PATHS = [
    "../x",
    "a/../../x",
    "/etc/passwd",
    "a\\b",
    "a\x00b",
    "%2e%2e/x",
    "%252e%252e/x",
    "C:/x",
]
BAD_PROJECT_IDS = ["", ".", "..", "a/b", "../x", "a\\b", "a\x00b"]


def s3_settings(endpoint: str, bucket: str, **overrides: Any) -> Settings:
    """Settings for an S3 store on a loopback endpoint with moto's fake credentials."""
    fields: dict[str, Any] = {
        "storage_backend": "s3",
        "s3_endpoint_url": endpoint,
        "s3_bucket": bucket,
        "s3_access_key_id": "test",
        "s3_secret_access_key": "test",
        "s3_region": "us-east-1",
    }
    return Settings(**(fields | overrides))


def dead_endpoint() -> str:
    """A loopback URL where nothing listens: a port the OS just handed out and took back."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def paths(items: Iterator[ObjectInfo]) -> list[str]:
    """Just the paths of a listing, in the order given."""
    return [info.path for info in items]


@pytest.fixture(scope="session")
def s3_admin(s3_server: str) -> Any:
    """One client for test set-up, so each test builds only the client under test."""
    return s3_client(s3_settings(s3_server, "unused"))


@pytest.fixture
def bucket(s3_admin: Any) -> str:
    """A fresh, uniquely named bucket so tests never share state."""
    name = f"t-{uuid.uuid4().hex[:24]}"
    s3_admin.create_bucket(Bucket=name)
    return name


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    """Each back-end, as open_store builds it; S3 gets a fresh bucket per test."""
    if request.param == "local":
        return open_store(Settings(storage_backend="local", data_dir=tmp_path))
    return open_store(s3_settings(request.getfixturevalue("s3_server"), request.getfixturevalue("bucket")))


# --- contract: both back-ends -------------------------------------------------------------


@pytest.mark.parametrize("data", [b"print('hi')\n", b"", b"\xff\xfe\x00\x80binary\xc3(", bytes(range(256))])
def test_put_get_round_trip_is_byte_exact(store: ObjectStore, data: bytes) -> None:
    info = store.put("p1", "src/app.py", data)
    assert store.get("p1", "src/app.py") == data
    assert (info.path, info.size, info.etag) == (
        "src/app.py",
        len(data),
        hashlib.md5(data).hexdigest(),
    )


def test_paths_normalized_once_name_one_file(store: ObjectStore) -> None:
    info = store.put("p1", normalize_path("./src//app.py"), b"x")
    assert info.path == "src/app.py"
    assert store.get("p1", normalize_path("src/./app.py")) == b"x"
    assert paths(store.list("p1")) == ["src/app.py"]


def test_head_reports_size_and_etag_and_changes_after_rewrite(store: ObjectStore) -> None:
    assert store.head("p1", "notes.txt") is None
    first = store.put("p1", "notes.txt", b"one")
    head = store.head("p1", "notes.txt")
    assert head is not None
    assert (head.path, head.size, head.etag) == ("notes.txt", 3, first.etag)
    assert abs(head.modified - time.time()) < 60
    store.put("p1", "notes.txt", b"two!")  # same instant is possible: etag must still move
    again = store.head("p1", "notes.txt")
    assert again is not None
    assert (again.size, again.etag) == (4, hashlib.md5(b"two!").hexdigest())
    assert again.etag != head.etag


def test_list_is_recursive_sorted_and_prefix_filtered(store: ObjectStore) -> None:
    for path in ["src/b.py", "src/a/z.py", "README.md", "src-x/y.txt", "src/a.py", "srcfile"]:
        store.put("p1", path, path.encode())
    everything = ["README.md", "src-x/y.txt", "src/a.py", "src/a/z.py", "src/b.py", "srcfile"]
    assert paths(store.list("p1")) == everything
    assert paths(store.list("p1", "")) == everything
    assert paths(store.list("p1", normalize_path("."))) == everything
    assert paths(store.list("p1", "src")) == ["src/a.py", "src/a/z.py", "src/b.py"]
    assert paths(store.list("p1", normalize_path("src/"))) == ["src/a.py", "src/a/z.py", "src/b.py"]
    assert paths(store.list("p1", "src/a")) == ["src/a/z.py"]
    assert paths(store.list("p1", "nope")) == []
    assert paths(store.list("p1", "README.md")) == []  # a file is not a directory prefix
    listed = {info.path: info for info in store.list("p1")}
    assert listed["src/a.py"].size == len(b"src/a.py")
    assert listed["src/a.py"].etag == hashlib.md5(b"src/a.py").hexdigest()


def test_list_never_shows_another_project(store: ObjectStore) -> None:
    store.put("p1", "mine.txt", b"1")
    store.put("p10", "theirs.txt", b"10")  # "p1" is a string prefix of "p10"
    store.put("p2", "other.txt", b"2")
    assert paths(store.list("p1")) == ["mine.txt"]
    assert paths(store.list("p10")) == ["theirs.txt"]
    assert paths(store.list("p3")) == []
    with pytest.raises(ToolError, match="file not found"):
        store.get("p1", "theirs.txt")


def test_delete_removes_and_tolerates_missing(store: ObjectStore) -> None:
    store.put("p1", "a/b.txt", b"x")
    store.put("p1", "a/c.txt", b"y")
    store.delete("p1", "a/b.txt")
    store.delete("p1", "a/b.txt")
    store.delete("p1", "never/was.txt")
    store.delete("p1", "a")  # a directory is not an object: nothing happens
    assert store.head("p1", "a/b.txt") is None
    assert paths(store.list("p1")) == ["a/c.txt"]
    with pytest.raises(ToolError, match=r"file not found: a/b\.txt"):
        store.get("p1", "a/b.txt")


def test_get_missing_is_a_tool_error(store: ObjectStore) -> None:
    with pytest.raises(ToolError, match=r"^file not found: docs/none\.md$") as caught:
        store.get("p1", "docs/none.md")
    assert not isinstance(caught.value, UnsafePath)


def test_get_directory_is_a_tool_error_pointing_at_list_files(store: ObjectStore) -> None:
    store.put("p1", "src/pkg/mod.py", b"x")
    for directory in ["src", "src/pkg", "src/pkg/", ""]:
        with pytest.raises(ToolError, match=r"is a directory.*list_files"):
            store.get("p1", normalize_path(directory))
    assert store.head("p1", "src") is None
    with pytest.raises(ToolError, match="the project root is a directory"):
        store.get("no-such-project", "")


def test_empty_path_cannot_be_written_or_deleted(store: ObjectStore) -> None:
    with pytest.raises(ToolError, match="path is empty"):
        store.put("p1", "", b"x")
    with pytest.raises(ToolError, match="path is empty"):
        store.delete("p1", normalize_path("./"))


# A path reaches a store only as normalize_path's answer (the type ProjectPath says so to mypy): an
# unsafe one is refused there, before any call of the store.
Call = Callable[[ObjectStore, str], object]
CALLS: dict[str, Call] = {
    "get": lambda s, p: s.get("p1", normalize_path(p)),
    "head": lambda s, p: s.head("p1", normalize_path(p)),
    "put": lambda s, p: s.put("p1", normalize_path(p), b"x"),
    "delete": lambda s, p: s.delete("p1", normalize_path(p)),
    "list": lambda s, p: s.list("p1", normalize_path(p)),
}


@pytest.mark.parametrize("bad", UNSAFE_PATHS)
def test_unsafe_paths_are_refused(store: ObjectStore, bad: str) -> None:
    for name, call in CALLS.items():
        with pytest.raises(UnsafePath):
            call(store, bad)
        assert isinstance(UnsafePath(name), ToolError)  # the model sees it as a tool error


@pytest.mark.parametrize("project_id", BAD_PROJECT_IDS)
def test_bad_project_ids_are_refused(store: ObjectStore, project_id: str) -> None:
    with pytest.raises(ValueError, match="invalid project id"):
        store.put(project_id, "a.txt", b"x")
    with pytest.raises(ValueError, match="invalid project id"):
        store.list(project_id)


def test_dots_inside_a_project_id_are_an_ordinary_name(store: ObjectStore) -> None:
    store.put("v1..2", "a.txt", b"x")  # the HTTP layer's pattern allows it
    assert paths(store.list("v1..2")) == ["a.txt"]
    assert paths(store.list("v1")) == []


# --- no I/O before refusal ------------------------------------------------------------------


def test_unsafe_paths_do_no_local_io(tmp_path: Path) -> None:
    root = tmp_path / "objects"
    store = LocalStore(root)
    for bad in UNSAFE_PATHS:
        for call in CALLS.values():
            with pytest.raises(UnsafePath):
                call(store, bad)
    assert not root.exists()


def test_unsafe_paths_send_no_s3_request(s3_server: str, bucket: str) -> None:
    settings = s3_settings(s3_server, bucket)
    client = s3_client(settings)
    sent: list[str] = []
    client.meta.events.register("before-send.s3", lambda request, **_: sent.append(request.url))
    store = S3Store(settings.s3_bucket, settings.s3_prefix, client)
    for bad in UNSAFE_PATHS:
        for call in CALLS.values():
            with pytest.raises(UnsafePath):
                call(store, bad)
    assert sent == []
    store.put("p1", "ok.txt", b"x")
    assert len(sent) == 1  # the counter does see real requests


# --- local specifics ------------------------------------------------------------------------


def test_local_symlinks_out_of_the_project_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b"secret")
    store = LocalStore(tmp_path / "objects")
    store.put("p1", "ok.txt", b"fine")
    project = tmp_path / "objects" / "p1"
    (project / "linkdir").symlink_to(outside, target_is_directory=True)
    (project / "linkfile").symlink_to(outside / "secret.txt")
    (project / "other").symlink_to(tmp_path / "objects" / "p2", target_is_directory=True)
    for path in ["linkdir/secret.txt", "linkfile", "linkdir", "other/x.txt"]:
        with pytest.raises(UnsafePath, match="outside the project"):
            store.get("p1", path)
    with pytest.raises(UnsafePath):
        store.put("p1", "linkdir/new.txt", b"x")
    with pytest.raises(UnsafePath):
        store.put("p1", "linkfile", b"overwrite")
    with pytest.raises(UnsafePath):
        store.list("p1", "linkdir")
    assert paths(store.list("p1")) == ["ok.txt"]
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_bytes() == b"secret"


def test_local_project_dir_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "objects").mkdir()
    (tmp_path / "objects" / "p1").symlink_to(outside, target_is_directory=True)
    store = LocalStore(tmp_path / "objects")
    with pytest.raises(UnsafePath):
        store.put("p1", "a.txt", b"x")
    assert list(outside.iterdir()) == []


def test_local_write_leaves_no_temp_files_and_list_skips_them(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.put("p1", "dir/a.txt", b"x" * 10_000)
    store.put("p1", "dir/a.txt", b"y")
    assert sorted(p.name for p in (tmp_path / "p1" / "dir").iterdir()) == ["a.txt"]
    (tmp_path / "p1" / "dir" / f"{TEMP_PREFIX}abc").write_bytes(b"half")
    assert paths(store.list("p1")) == ["dir/a.txt"]
    assert store.get("p1", "dir/a.txt") == b"y"


def test_local_file_in_place_of_a_folder_is_a_tool_error(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.put("p1", "a.txt", b"x")
    with pytest.raises(ToolError, match="a parent of it is a file"):
        store.put("p1", "a.txt/b.txt", b"y")
    with pytest.raises(ToolError, match=r"file not found: a\.txt/b\.txt"):
        store.get("p1", "a.txt/b.txt")
    assert store.head("p1", "a.txt/b.txt") is None


def test_local_check(tmp_path: Path) -> None:
    LocalStore(tmp_path / "new").check()
    assert (tmp_path / "new").is_dir()
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(StoreUnavailable, match="local store root"):
        LocalStore(tmp_path / "file").check()


def test_open_store_local_uses_storage_root(tmp_path: Path) -> None:
    settings = Settings(storage_backend="local", data_dir=tmp_path)
    open_store(settings).put("p1", "a.txt", b"x")
    assert (settings.storage_root / "p1" / "a.txt").read_bytes() == b"x"


# --- S3 specifics ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [("projects", "projects/p1/src/a.py"), ("", "p1/src/a.py"), ("/x/y/", "x/y/p1/src/a.py")],
)
def test_s3_key_layout(s3_server: str, bucket: str, prefix: str, expected: str) -> None:
    settings = s3_settings(s3_server, bucket, s3_prefix=prefix)
    client = s3_client(settings)
    store = S3Store(settings.s3_bucket, prefix, client)
    store.put("p1", "src/a.py", b"x")
    keys = [item["Key"] for item in client.list_objects_v2(Bucket=settings.s3_bucket)["Contents"]]
    assert keys == [expected]
    assert paths(store.list("p1")) == ["src/a.py"]


def test_s3_list_follows_pagination(s3_server: str, bucket: str, s3_admin: Any) -> None:
    client = s3_client(s3_settings(s3_server, bucket))
    pages: list[str] = []
    # Two keys a page: five objects take three real round trips with continuation tokens.
    client.meta.events.register(
        "provide-client-params.s3.ListObjectsV2", lambda params, **_: params.update(MaxKeys=2)
    )
    client.meta.events.register(
        "before-send.s3.ListObjectsV2", lambda request, **_: pages.append(request.url)
    )
    names = [f"f/{n}.txt" for n in range(5)]
    for name in reversed(names):
        s3_admin.put_object(Bucket=bucket, Key=f"projects/p1/{name}", Body=b"")
    assert paths(S3Store(bucket, "projects", client).list("p1", "f")) == names
    assert len(pages) == 3


def test_s3_client_config_and_no_default_checksums(s3_server: str, bucket: str) -> None:
    settings = s3_settings(s3_server, bucket, s3_timeout_s=7)
    client = s3_client(settings)
    config = client.meta.config
    assert (config.connect_timeout, config.read_timeout) == (7, 7)
    # S3Config.max_attempts counts every attempt, the first included (botocore's total_max_attempts).
    assert config.retries == {"mode": "standard", "total_max_attempts": 3}
    assert config.signature_version == "s3v4"
    assert config.request_checksum_calculation == "when_required"
    assert config.response_checksum_validation == "when_required"
    headers: list[dict[str, str]] = []
    client.meta.events.register(
        "before-send.s3.PutObject", lambda request, **_: headers.append(dict(request.headers))
    )
    S3Store(settings.s3_bucket, "projects", client).put("p1", "a.txt", b"abc")
    sent = {name.lower() for name in headers[0]}
    assert not {name for name in sent if name.startswith("x-amz-checksum")}
    assert "x-amz-sdk-checksum-algorithm" not in sent


def test_s3_check_passes_on_existing_bucket(s3_server: str, bucket: str) -> None:
    open_store(s3_settings(s3_server, bucket)).check()


def test_s3_check_on_missing_bucket_is_unavailable(s3_server: str) -> None:
    store = open_store(s3_settings(s3_server, f"missing-{uuid.uuid4().hex[:12]}"))
    with pytest.raises(StoreUnavailable, match="404"):
        store.check()
    with pytest.raises(StoreUnavailable, match="NoSuchBucket"):
        store.get("p1", "a.txt")
    with pytest.raises(StoreUnavailable, match="NoSuchBucket"):
        store.list("p1")


def test_s3_unreachable_endpoint_is_unavailable_fast_and_secret_free() -> None:
    settings = s3_settings(dead_endpoint(), "bucket", s3_secret_access_key=SECRET, s3_timeout_s=1)
    store = open_store(settings)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable) as caught:
        store.get("p1", "a.txt")
    assert time.monotonic() - started < 10
    assert SECRET not in str(caught.value)
    assert "unreachable" in str(caught.value)
    for probe in (store.check, lambda: store.put("p1", "a.txt", b"x"), lambda: store.list("p1")):
        with pytest.raises(StoreUnavailable):
            probe()
