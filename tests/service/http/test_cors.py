"""CORS for browser and webview clients: only the configured origins, preflights answered before any
key is asked for, the key allowed in Authorization, X-Request-ID readable, credentials never."""

from collections.abc import Callable

import pytest
from pydantic import ValidationError
from starlette.testclient import TestClient

from reactstep.service.http.auth import key_entry
from reactstep.service.settings import Settings

IDE = "vscode-webview://4f1a2b3c"
SITE = "https://ide.example.com"
SERVICE_KEY = "rsk_cors-key-0123456789abcdef"
KEYED = {"api_keys": [key_entry(SERVICE_KEY, "demo")]}
REACT = "/api/agent/react_step"


def preflight(
    client: TestClient, origin: str, headers: str = "authorization, content-type"
) -> dict[str, str]:
    response = client.options(
        REACT,
        headers={
            "origin": origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": headers,
        },
    )
    return {"status": str(response.status_code), **response.headers}


def test_a_preflight_from_an_allowed_origin_is_answered_without_a_key(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(cors_origins=[SITE, IDE], **KEYED)
    answer = preflight(client, IDE, "authorization, content-type, x-request-id")
    assert answer["status"] == "200"
    assert answer["access-control-allow-origin"] == IDE
    allowed = {name.strip().lower() for name in answer["access-control-allow-headers"].split(",")}
    assert {"authorization", "content-type", "x-request-id"} <= allowed
    assert "POST" in answer["access-control-allow-methods"]
    assert "access-control-allow-credentials" not in answer


@pytest.mark.parametrize(
    ("origin", "headers"),
    [("https://evil.example", "authorization"), (SITE, "x-api-secret"), ("https://ide.example.com:8443", "")],
    ids=["other origin", "unlisted header", "other port"],
)
def test_a_preflight_outside_the_allowlist_is_refused(
    make_client: Callable[..., TestClient], origin: str, headers: str
) -> None:
    answer = preflight(make_client(cors_origins=[SITE]), origin, headers)
    assert answer["status"] == "400"
    if origin != SITE:
        assert "access-control-allow-origin" not in answer


def test_a_browser_may_read_the_answer_and_its_request_id(make_client: Callable[..., TestClient]) -> None:
    client = make_client(cors_origins=[SITE], **KEYED)
    refused = client.get("/api/projects/demo", headers={"origin": SITE})
    allowed = client.get(
        "/api/projects/demo", headers={"origin": SITE, "authorization": f"Bearer {SERVICE_KEY}"}
    )
    for response, status in ((refused, 401), (allowed, 200)):  # a 401 too, so the page can say why
        assert response.status_code == status
        assert response.headers["access-control-allow-origin"] == SITE
        exposed = {name.strip() for name in response.headers["access-control-expose-headers"].split(",")}
        assert {"x-request-id", "etag", "retry-after"} <= exposed
        assert "access-control-allow-credentials" not in response.headers


def test_without_origins_configured_no_cors_header_is_sent(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    answer = preflight(client, SITE)
    assert answer["status"] == "405"  # OPTIONS is just another method the route does not have
    response = client.get("/healthz", headers={"origin": SITE})
    assert [name for name in response.headers if name.startswith("access-control-")] == []


@pytest.mark.parametrize("cookie", [None, "session=1"])
def test_any_origin_is_a_wildcard_without_credentials(
    make_client: Callable[..., TestClient], cookie: str | None
) -> None:
    client = make_client(cors_origins=["*"])
    headers = {"origin": SITE, **({"cookie": cookie} if cookie else {})}
    response = client.get("/healthz", headers=headers)
    assert response.headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-credentials" not in response.headers
    answer = preflight(client, SITE)
    assert (answer["access-control-allow-origin"], "access-control-allow-credentials" in answer) == (
        "*",
        False,
    )


@pytest.mark.parametrize(
    "origin",
    ["https://ide.example.com/", "ide.example.com", "https://ide.example.com/app", "*.example.com", ""],
)
def test_an_origin_that_is_not_one_stops_start_up(origin: str) -> None:
    with pytest.raises(ValidationError, match="scheme://host"):
        Settings(cors_origins=[origin])
