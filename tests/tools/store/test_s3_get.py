"""The direct GET of S3 reads (s3_get.ObjectReader): same bytes, same errors, same attempts, valid SigV4.

Against moto's server and two loopback servers of the tests' own: one that records requests and
answers them, one that closes every connection it accepts.
"""

import hashlib
import hmac
import socket
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError, EndpointConnectionError

from reactstep.service.backends import open_store, s3_client
from reactstep.tools.errors import StoreUnavailable, ToolError
from reactstep.tools.store.s3_get import ObjectReader, open_http
from tests.tools.store.test_storage import dead_endpoint, s3_settings

ODD_NAMES = [
    "plain.py",
    "with space.py",
    "plus+sign.py",
    "percent%41.py",
    "hash#and?query=1&x.py",
    "tilde~quote'paren(1)!star*.py",
    "comma,semi;at@dollar$.py",
    "naïve/ünïcödé/文件.py",
    "deep/a/b/c/d/e.py",
]


def direct_reader(endpoint: str, full_client: Any, token: str | None = None) -> ObjectReader:
    """A reader whose fallback is `full_client` (a client on a dead endpoint proves none was made)."""
    credentials = Credentials("test", "test", token)
    return ObjectReader(
        endpoint, "us-east-1", credentials, open_http(endpoint, 2, None), full_client, retry=False
    )


@pytest.fixture
def bucket(s3_server: str) -> str:
    name = f"get-{uuid.uuid4().hex[:20]}"
    s3_client(s3_settings(s3_server, name)).create_bucket(Bucket=name)
    return name


@pytest.fixture
def nowhere() -> Any:
    """A boto3 client on a loopback port nobody listens on: any call it makes fails."""
    return s3_client(s3_settings(dead_endpoint(), "unused", s3_max_attempts=1))


@pytest.mark.parametrize("name", ODD_NAMES)
def test_direct_get_reads_what_the_client_wrote(s3_server: str, bucket: str, nowhere: Any, name: str) -> None:
    data = f"# {name}\n".encode() * 50
    s3_client(s3_settings(s3_server, bucket)).put_object(Bucket=bucket, Key=f"projects/p/{name}", Body=data)
    etag = s3_client(s3_settings(s3_server, bucket)).head_object(Bucket=bucket, Key=f"projects/p/{name}")[
        "ETag"
    ]
    assert direct_reader(s3_server, nowhere).get(bucket, f"projects/p/{name}") == (data, etag)
    assert open_store(s3_settings(s3_server, bucket)).get("p", name) == data


@pytest.mark.parametrize("size", [0, 1, 3 * 1024 * 1024 + 7])
def test_direct_get_is_byte_exact_at_any_size(s3_server: str, bucket: str, nowhere: Any, size: int) -> None:
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    s3_client(s3_settings(s3_server, bucket)).put_object(Bucket=bucket, Key="k.bin", Body=data)
    assert direct_reader(s3_server, nowhere).get(bucket, "k.bin")[0] == data


def test_a_missing_key_is_named_without_the_full_client(s3_server: str, bucket: str, nowhere: Any) -> None:
    with pytest.raises(ClientError) as caught:
        direct_reader(s3_server, nowhere).get(bucket, "projects/p/absent.py")
    assert caught.value.response["Error"]["Code"] == "NoSuchKey"
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
    store = open_store(s3_settings(s3_server, bucket))
    with pytest.raises(ToolError, match=r"^file not found: absent\.py$"):
        store.get("p", "absent.py")


def test_other_replies_are_named_by_the_full_client(s3_server: str, nowhere: Any) -> None:
    missing = f"missing-{uuid.uuid4().hex[:12]}"
    client = s3_client(s3_settings(s3_server, missing))
    with pytest.raises(ClientError) as expected:
        client.get_object(Bucket=missing, Key="a.py")
    with pytest.raises(ClientError) as caught:
        direct_reader(s3_server, client).get(missing, "a.py")
    assert caught.value.response["Error"] == expected.value.response["Error"]
    # The direct GET's own reply is not the answer: with no full client to ask, the read fails.
    with pytest.raises(EndpointConnectionError):
        direct_reader(s3_server, nowhere).get(missing, "a.py")


class Recorder(ThreadingHTTPServer):
    """Answers every GET with `body`; keeps each request's path and headers."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.seen: list[tuple[str, dict[str, str]]] = []
        super().__init__(("127.0.0.1", 0), RecordingHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class RecordingHandler(BaseHTTPRequestHandler):
    server: Recorder

    def do_GET(self) -> None:
        self.server.seen.append((self.path, {name.lower(): value for name, value in self.headers.items()}))
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.server.body)))
        self.end_headers()
        self.wfile.write(self.server.body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    server = Recorder(b"recorded body")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def sigv4_is_valid(path: str, headers: dict[str, str], secret: str, region: str) -> bool:
    """The SigV4 check an S3 server makes, written from AWS's published algorithm (GET, no query)."""
    fields = dict(part.strip().split("=", 1) for part in headers["authorization"].split(" ", 1)[1].split(","))
    access_key, date, scope_region, service, terminator = fields["Credential"].split("/")
    signed = fields["SignedHeaders"].split(";")
    canonical = "\n".join(
        [
            *("GET", path, ""),
            *(f"{name}:{headers[name].strip()}" for name in signed),
            *("", ";".join(signed), headers["x-amz-content-sha256"]),
        ]
    )
    scope = f"{date}/{region}/s3/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", headers["x-amz-date"], scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = f"AWS4{secret}".encode()
    for part in (date, region, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    assert (scope_region, service, terminator, access_key) == (region, "s3", "aws4_request", "test")
    return hmac.compare_digest(expected, fields["Signature"])


def test_the_signature_is_what_botocore_signs_and_carries_the_session_token(
    recorder: Recorder, nowhere: Any
) -> None:
    # The checker first accepts botocore's own request, then the direct GET's.
    client = s3_client(s3_settings(recorder.url, "unused", s3_max_attempts=1))
    client.get_object(Bucket="b", Key="with space/ünï.py")
    reader = direct_reader(recorder.url, nowhere, token="session-token")
    assert reader.get("b", "with space/ünï.py") == (b"recorded body", "")
    (client_path, client_headers), (direct_path, direct_headers) = recorder.seen
    assert direct_path == client_path == "/b/with%20space/%C3%BCn%C3%AF.py"
    assert sigv4_is_valid(client_path, client_headers, "test", "us-east-1")
    assert sigv4_is_valid(direct_path, direct_headers, "test", "us-east-1")
    assert not sigv4_is_valid(direct_path, direct_headers, "other-secret", "us-east-1")
    assert direct_headers["x-amz-security-token"] == "session-token"
    assert "x-amz-security-token" in direct_headers["authorization"].split("SignedHeaders=")[1]


class Slammer:
    """Accepts connections and closes them at once, counting them."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()


@pytest.mark.parametrize("attempts", [1, 2, 3])
def test_a_read_makes_exactly_the_configured_attempts(attempts: int) -> None:
    slammer = Slammer()
    try:
        settings = s3_settings(slammer.url, "bucket", s3_max_attempts=attempts, s3_timeout_s=2)
        with pytest.raises(StoreUnavailable, match=r"^object store unreachable: ConnectionClosedError$"):
            open_store(settings).get("p", "a.py")
        assert slammer.accepted == attempts
    finally:
        slammer.sock.close()


@pytest.mark.parametrize("direct", [True, False])
def test_direct_reads_can_be_turned_off(recorder: Recorder, direct: bool) -> None:
    store = open_store(s3_settings(recorder.url, "bucket", s3_direct_reads=direct))
    assert store.get("p", "a.py") == b"recorded body"
    ((path, headers),) = recorder.seen
    assert path == "/bucket/projects/p/a.py"
    # botocore's operation machinery marks each call with an invocation id; the direct GET does not.
    assert ("amz-sdk-invocation-id" in headers) is not direct
