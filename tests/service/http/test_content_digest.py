"""PUT with Content-Digest (RFC 9530): the body is stored only when it is what the client announced."""

import base64
import hashlib
from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

P = "/api/projects/web"
OLD = b"A = 1\n"
NEW = b"A = 2\n"


def b64(digest: bytes) -> str:
    return base64.b64encode(digest).decode()


SHA256_NEW = f"sha-256=:{b64(hashlib.sha256(NEW).digest())}:"
SHA256_OLD = f"sha-256=:{b64(hashlib.sha256(OLD).digest())}:"
SHA512_NEW = f"sha-512=:{b64(hashlib.sha512(NEW).digest())}:"
SHA512_OLD = f"sha-512=:{b64(hashlib.sha512(OLD).digest())}:"


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    client = make_client()
    client.put(P)
    client.put(f"{P}/files/a.py", content=OLD)
    return client


def error(response: Any) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


@pytest.mark.parametrize(
    "header",
    [
        SHA256_NEW,
        SHA512_NEW,
        f"{SHA256_NEW}, {SHA512_NEW}",
        f"{SHA256_NEW};note=1",
        f"md5=:{b64(hashlib.md5(OLD).digest())}:, {SHA256_NEW}",  # md5 is not verified, sha-256 is
        "unixsum=30",  # only algorithms not verified: ignored (RFC 9530 allows it)
        f"md5=:{b64(hashlib.md5(OLD).digest())}:",
        "",
    ],
)
def test_a_body_that_matches_or_names_no_verified_algorithm_is_stored(
    client: TestClient, header: str
) -> None:
    stored = client.put(f"{P}/files/a.py", content=NEW, headers={"content-digest": header})
    assert (stored.status_code, stored.json()["version"]) == (200, 2)
    assert client.get(f"{P}/files/a.py").content == NEW


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (
            SHA256_OLD,
            f"a.py: the body's sha-256 is :{b64(hashlib.sha256(NEW).digest())}:, not the "
            f":{b64(hashlib.sha256(OLD).digest())}: its Content-Digest announced; nothing was stored",
        ),
        (
            f"{SHA256_NEW}, {SHA512_OLD}",
            f"a.py: the body's sha-512 is :{b64(hashlib.sha512(NEW).digest())}:, not the "
            f":{b64(hashlib.sha512(OLD).digest())}: its Content-Digest announced; nothing was stored",
        ),
    ],
)
def test_a_digest_mismatch_is_400_and_stores_nothing(client: TestClient, header: str, message: str) -> None:
    response = client.put(f"{P}/files/a.py", content=NEW, headers={"content-digest": header})
    assert error(response) == (400, "digest_mismatch")
    assert response.json()["error"]["message"] == message
    assert client.get(f"{P}/files/a.py").content == OLD
    assert client.get(P).json()["version"] == 1
    fresh = client.put(f"{P}/files/b.py", content=NEW, headers={"content-digest": SHA256_OLD})
    assert error(fresh) == (400, "digest_mismatch")
    assert error(client.get(f"{P}/files/b.py")) == (404, "file_not_found")


@pytest.mark.parametrize(
    "header",
    [
        f"sha-256={hashlib.sha256(NEW).hexdigest()}",  # hex, not a byte sequence
        "sha-256=:not base64!:",
        f"sha-256=:{b64(hashlib.sha256(NEW).digest()[:16])}:",  # too short for sha-256
        f"sha-256=:{b64(hashlib.sha512(NEW).digest())}:",  # a sha-512 digest under sha-256's name
        f"SHA-256=:{b64(hashlib.sha256(NEW).digest())}:",  # keys are lowercase
        "sha-256",
        ",",
    ],
)
def test_a_malformed_content_digest_is_400_and_stores_nothing(client: TestClient, header: str) -> None:
    response = client.put(f"{P}/files/a.py", content=NEW, headers={"content-digest": header})
    assert error(response) == (400, "invalid_digest")
    assert "RFC 9530" in response.json()["error"]["message"]
    assert client.get(f"{P}/files/a.py").content == OLD
    assert client.get(P).json()["version"] == 1
