"""File reads awaited on the event loop (s3_loop.LoopReads): the same bytes, errors and attempts as
the direct GET on a worker thread, against moto's server and the loopback servers of test_s3_get."""

import asyncio
import socket
import threading
import uuid
from typing import Any

import pytest

from reactstep.service.backends import open_store, s3_client
from reactstep.tools.errors import StoreUnavailable, ToolError
from reactstep.tools.store.s3 import S3Store
from reactstep.tools.store.s3_loop import LoopReads
from tests.s3_peers import Recorder, Slammer, sigv4_is_valid
from tests.tools.store.test_s3_get import ODD_NAMES, direct_reader
from tests.tools.store.test_storage import dead_endpoint, s3_settings


def read_on_loop(store: S3Store, project_id: str, path: str) -> "bytes | S3Store":
    """One LoopReads.get on a loop of its own, started and stopped around it."""
    reads = store.loop_reads
    assert reads is not None

    async def read() -> "bytes | S3Store":
        await reads.start()
        try:
            return await reads.get(project_id, path)
        finally:
            await reads.stop()

    return asyncio.run(read())


def opened(settings: Any) -> S3Store:
    store = open_store(settings)
    assert isinstance(store, S3Store)
    return store


@pytest.mark.parametrize("name", ODD_NAMES)
def test_a_loop_read_gives_what_the_client_wrote(s3_server: str, bucket: str, name: str) -> None:
    data = f"# {name}\n".encode() * 50
    s3_client(s3_settings(s3_server, bucket)).put_object(Bucket=bucket, Key=f"projects/p/{name}", Body=data)
    assert read_on_loop(opened(s3_settings(s3_server, bucket)), "p", name) == data


@pytest.mark.parametrize("size", [0, 3 * 1024 * 1024 + 7])
def test_a_loop_read_is_byte_exact_and_never_decompressed(s3_server: str, bucket: str, size: int) -> None:
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    client = s3_client(s3_settings(s3_server, bucket))
    client.put_object(Bucket=bucket, Key="projects/p/k.gz", Body=data, ContentEncoding="gzip")
    assert read_on_loop(opened(s3_settings(s3_server, bucket)), "p", "k.gz") == data


def test_a_missing_key_is_named_after_one_get(s3_server: str, bucket: str) -> None:
    # The full client of the store's reader is on a dead port: any use of it would fail the read.
    settings = s3_settings(s3_server, bucket)
    nowhere = s3_client(s3_settings(dead_endpoint(), "unused", s3_max_attempts=1))
    reader = direct_reader(s3_server, nowhere)
    store = S3Store(bucket, "projects", s3_client(settings), reader)
    store.loop_reads = LoopReads(store, reader, s3_server, 2, None)
    handed_on = read_on_loop(store, "p", "absent.py")
    assert isinstance(handed_on, S3Store) and handed_on is not store
    with pytest.raises(ToolError, match=r"^file not found: absent\.py$"):
        handed_on.get("p", "absent.py")
    # A directory is still one to the model: the LIST after the miss is the store's own.
    s3_client(settings).put_object(Bucket=bucket, Key="projects/p/pkg/a.py", Body=b"")
    with pytest.raises(ToolError, match=r"^pkg is a directory"):
        read_on_loop(store, "p", "pkg").get("p", "pkg")  # type: ignore[union-attr]


def test_other_replies_are_named_as_the_worker_path_names_them(s3_server: str) -> None:
    settings = s3_settings(s3_server, f"missing-{uuid.uuid4().hex[:12]}")
    with pytest.raises(StoreUnavailable) as expected:
        opened(settings).get("p", "a.py")
    handed_on = read_on_loop(opened(settings), "p", "a.py")
    assert isinstance(handed_on, S3Store)
    with pytest.raises(StoreUnavailable) as caught:
        handed_on.get("p", "a.py")
    assert str(caught.value) == str(expected.value)
    assert str(caught.value) == "object store refused the request: NoSuchBucket (HTTP 404)"


def test_the_loop_get_is_the_signed_get_botocore_sends(recorder: Recorder) -> None:
    client = s3_client(s3_settings(recorder.url, "b", s3_max_attempts=1))
    client.get_object(Bucket="b", Key="projects/p/with space/ünï.py")
    assert read_on_loop(opened(s3_settings(recorder.url, "b")), "p", "with space/ünï.py") == b"recorded body"
    (client_path, _), (loop_path, loop_headers) = recorder.seen
    assert loop_path == client_path == "/b/projects/p/with%20space/%C3%BCn%C3%AF.py"
    assert sigv4_is_valid(loop_path, loop_headers, "test", "us-east-1")
    assert not sigv4_is_valid(loop_path, loop_headers, "other-secret", "us-east-1")
    assert "aiohttp" in loop_headers["user-agent"]
    assert loop_headers["accept-encoding"] == "identity"


@pytest.mark.parametrize("attempts", [1, 2, 3])
def test_the_loop_get_is_the_first_of_the_configured_attempts(attempts: int) -> None:
    slammer = Slammer()
    try:
        settings = s3_settings(slammer.url, "bucket", s3_max_attempts=attempts, s3_timeout_s=2)
        handed_on = read_on_loop(opened(settings), "p", "a.py")
        assert isinstance(handed_on, S3Store)
        with pytest.raises(StoreUnavailable, match=r"^object store unreachable: ConnectionClosedError$"):
            handed_on.get("p", "a.py")
        assert slammer.accepted == attempts
    finally:
        slammer.sock.close()


def test_failures_keep_the_names_of_the_worker_path() -> None:
    # Nothing listens: refused. A server that accepts and never answers: a read timeout.
    silent = socket.create_server(("127.0.0.1", 0))
    try:
        for endpoint, name in (
            (dead_endpoint(), "EndpointConnectionError"),
            (f"http://127.0.0.1:{silent.getsockname()[1]}", "ReadTimeoutError"),
        ):
            settings = s3_settings(endpoint, "bucket", s3_max_attempts=1, s3_timeout_s=0.5)
            with pytest.raises(StoreUnavailable, match=rf"^object store unreachable: {name}$"):
                opened(settings).get("p", "a.py")
            handed_on = read_on_loop(opened(settings), "p", "a.py")
            with pytest.raises(StoreUnavailable, match=rf"^object store unreachable: {name}$"):
                handed_on.get("p", "a.py")  # type: ignore[union-attr]
    finally:
        silent.close()


def test_a_read_off_the_serving_loop_is_handed_on_untouched(recorder: Recorder) -> None:
    store = opened(s3_settings(recorder.url, "b"))
    reads = store.loop_reads
    assert reads is not None
    assert asyncio.run(reads.get("p", "a.py")) is store  # never started
    other = asyncio.new_event_loop()
    try:

        async def started_elsewhere() -> "bytes | S3Store":
            await reads.start()
            return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(reads.get("p", "a.py"), other))

        thread = threading.Thread(target=other.run_forever, daemon=True)
        thread.start()
        assert asyncio.run(started_elsewhere()) is store
    finally:
        other.call_soon_threadsafe(other.stop)
    assert recorder.seen == []


@pytest.mark.parametrize("path", ["", "/", "../etc/passwd"])
def test_paths_get_answers_without_a_request_are_handed_on(recorder: Recorder, path: str) -> None:
    store = opened(s3_settings(recorder.url, "b"))
    assert read_on_loop(store, "p", path) is store
    assert recorder.seen == []


def test_aws_endpoints_and_the_switch_off_have_no_loop_reads(recorder: Recorder) -> None:
    assert opened(s3_settings(recorder.url, "b", s3_direct_reads=False)).loop_reads is None
    assert opened(s3_settings(None, "b")).loop_reads is None  # type: ignore[arg-type]


def test_the_proxy_botocore_would_use_carries_the_loop_get(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The endpoint has no server: only the proxy (the recorder, on loopback) can answer.
    endpoint = dead_endpoint()
    monkeypatch.setenv("HTTP_PROXY", recorder.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    store = opened(s3_settings(endpoint, "b", s3_max_attempts=1))
    assert store.get("p", "a.py") == b"recorded body"  # the worker path, through botocore's session
    assert read_on_loop(store, "p", "a.py") == b"recorded body"
    (worker_path, _), (loop_path, _) = recorder.seen
    assert loop_path == worker_path == f"{endpoint}/b/projects/p/a.py"
