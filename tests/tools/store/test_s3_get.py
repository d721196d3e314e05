"""The direct GET of S3 reads (s3_get.ObjectReader): same bytes, same errors, same attempts, valid SigV4.

Against moto's server and two loopback servers of the tests' own: one that records requests and
answers them, one that closes every connection it accepts.
"""

import uuid
from dataclasses import replace
from typing import Any

import pytest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError, EndpointConnectionError

from reactstep.service.backends import open_store, s3_client, s3_config, store_config
from reactstep.tools.errors import StoreUnavailable, ToolError
from reactstep.tools.store import factory as store_factory
from reactstep.tools.store.s3_clients import make_s3_client
from reactstep.tools.store.s3_get import ObjectReader, open_http
from tests.s3_peers import Recorder, Slammer, sigv4_is_valid
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
def nowhere() -> Any:
    """A boto3 client on a loopback port nobody listens on: any call it makes fails."""
    return make_s3_client(replace(s3_config(s3_settings(dead_endpoint(), "unused")), max_attempts=1))


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


def test_the_signature_is_what_botocore_signs_and_carries_the_session_token(
    recorder: Recorder, nowhere: Any
) -> None:
    # The checker first accepts botocore's own request, then the direct GET's.
    client = make_s3_client(replace(s3_config(s3_settings(recorder.url, "unused")), max_attempts=1))
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


@pytest.mark.parametrize("attempts", [1, 2, 3])
def test_a_read_makes_exactly_the_configured_attempts(attempts: int) -> None:
    slammer = Slammer()
    try:
        config = store_config(s3_settings(slammer.url, "bucket", s3_timeout_s=2))
        store = store_factory.open_store(replace(config, s3=replace(config.s3, max_attempts=attempts)))
        with pytest.raises(StoreUnavailable, match=r"^object store unreachable: ConnectionClosedError$"):
            store.get("p", "a.py")
        assert slammer.accepted == attempts
    finally:
        slammer.sock.close()


def test_a_custom_endpoint_is_read_in_one_direct_get(recorder: Recorder) -> None:
    store = open_store(s3_settings(recorder.url, "bucket"))
    assert store.get("p", "a.py") == b"recorded body"
    ((path, headers),) = recorder.seen
    assert path == "/bucket/projects/p/a.py"
    # botocore's operation machinery marks each call with an invocation id; the direct GET does not.
    assert "amz-sdk-invocation-id" not in headers
