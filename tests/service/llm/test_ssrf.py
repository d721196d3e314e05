"""No SSRF through llm_config or embedding_model_config: refused before any connection, no redirects.

Every address below that is not loopback is only a string that must be refused: an audit hook
(conftest's network_log) records each connect and lookup the process makes, and the tests assert
none went there.
"""

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from pydantic import SecretStr
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.service.errors import Forbidden
from reactstep.service.llm.config import server_key
from reactstep.service.llm.net_guard import check_api_base, check_model
from reactstep.service.settings import DEFAULT_PROVIDERS

REACT = "/api/agent/react_step"
ANYWHERE = ["http://*:*", "https://*:*"]


def touched(log: list[tuple[str, tuple[Any, ...]]], host: str) -> list[tuple[str, tuple[Any, ...]]]:
    """Events that name the host (a lookup of it, or a connect to it)."""
    bare = host.strip("[]")
    return [(event, args) for event, args in log if bare in repr(args)]


def step(**extra: Any) -> dict[str, Any]:
    return {"project_id": "demo", "session_id": "s", "user_query": "q", **extra}


@pytest.mark.parametrize(
    "host",
    [
        "10.0.0.1",
        "172.16.5.4",
        "192.168.1.1",
        "169.254.169.254",  # cloud metadata
        "100.64.0.1",  # shared address space
        "127.0.0.1",
        "127.1.2.3",
        "0.0.0.0",
        "224.0.0.1",
        "2130706433",  # 127.0.0.1 written as one number
        "[::1]",
        "[::]",
        "[::ffff:169.254.169.254]",
        "[fd00:ec2::254]",  # AWS's IPv6 metadata address
        "[fe80::1]",
        "localhost",
    ],
)
def test_a_wildcard_entry_never_reaches_a_private_address(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    network_log: list[tuple[str, tuple[Any, ...]]],
    host: str,
) -> None:
    client = make_client(llm_api_base_allowlist=ANYWHERE)
    response = client.post(REACT, json=step(llm_config={"api_base": f"http://{host}:8080/v1"}))
    assert (response.status_code, response.json()["error"]["code"]) == (403, "api_base_not_allowed")
    assert "non-public address" in response.json()["error"]["message"]
    assert llm_server.requests == []
    connects = [args for event, args in touched(network_log, host) if event == "socket.connect"]
    assert connects == []


@pytest.mark.parametrize(
    ("allowlist", "url", "allowed"),
    [
        (["http://10.0.0.1:8000"], "http://10.0.0.1:8000/v1", True),  # named exactly: the operator's word
        (["http://10.0.0.1:*"], "http://10.0.0.1:1234/v1", True),
        (["http://10.0.0.1:8000"], "http://10.0.0.1:8001/v1", False),
        (["http://10.0.0.1"], "http://10.0.0.1/v1", True),  # no port: the scheme's default
        (["http://10.0.0.1"], "http://10.0.0.1:8080/v1", False),
        (["https://10.0.0.1:443"], "http://10.0.0.1:443/v1", False),
        (["http://[fd00::1]:*"], "http://[fd00::1]:9/v1", True),
        (["http://*.example.com:*"], "http://example.org/v1", False),
        (["http://*.example.com:*"], "http://evil-example.com/v1", False),
        (["http://*.example.com:*"], "http://example.com.evil.net/v1", False),
        (["http://10.0.0.1:*"], "http://user:pw@10.0.0.1:80/v1", False),
        (["http://10.0.0.1:*"], "http://10.0.0.1@10.0.0.2:80/v1", False),
        (["http://10.0.0.1:*"], "http://10.0.0.1:80/v1?x=1", False),
        (["http://10.0.0.1:*"], "http://10.0.0.1:80/v1#frag", False),
        (["http://10.0.0.1:*"], "http://10.0.0.1:80\\@10.0.0.2/v1", False),
        (["http://10.0.0.1:*"], "http://10.0.0.1:80/v1\n", False),
        (["http://10.0.0.1:*"], "http://10.0.0.1:99999/v1", False),
        (["http://10.0.0.1:*"], "file:///etc/passwd", False),
        (["http://10.0.0.1:*"], "gopher://10.0.0.1:70/", False),
        (["http://10.0.0.1:*"], "//10.0.0.1:80/v1", False),
        ([], "http://10.0.0.1:8000/v1", False),
        (["10.0.0.1:8000", "http://", "http://:80", "http://h:0x50"], "http://10.0.0.1:8000/v1", False),
    ],
)
def test_allowlist_matching(
    network_log: list[tuple[str, tuple[Any, ...]]], allowlist: list[str], url: str, allowed: bool
) -> None:
    if allowed:
        check_api_base(url, allowlist)
    else:
        with pytest.raises(Forbidden) as refused:
            check_api_base(url, allowlist)
        assert refused.value.code == "api_base_not_allowed"
    assert network_log == []  # exact names and IP literals need no lookup, refusals no connection


def test_embedding_api_base_is_checked_before_any_connection(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    network_log: list[tuple[str, tuple[Any, ...]]],
) -> None:
    config = {"model": "openai/embedder", "api_base": "http://169.254.169.254/latest"}
    body = {"embedding_model_config": config}
    client = make_client(llm_api_base_allowlist=ANYWHERE)
    index = client.post("/api/projects/demo/index", json=body)
    run = {"project_id": "demo", "session_id": "s", "tool_name": "code_search", "tool_args": {"query": "x"}}
    search = client.post("/api/agent/execute_action", json={**run, **body})
    for response in (index, search):
        assert (response.status_code, response.json()["error"]["code"]) == (403, "api_base_not_allowed")
    assert "embedding_model_config.api_base" in index.json()["error"]["message"]
    assert llm_server.requests == [] and touched(network_log, "169.254.169.254") == []


@pytest.mark.parametrize(
    ("model", "allowed", "with_api_base", "ok"),
    [
        ("openai/gpt-4o-mini", DEFAULT_PROVIDERS, False, True),
        ("gpt-4o-mini", DEFAULT_PROVIDERS, False, True),
        ("anthropic/claude-3-5-sonnet", DEFAULT_PROVIDERS, False, True),
        ("ollama/llama3", DEFAULT_PROVIDERS, False, False),  # would reach the server's own localhost
        ("bedrock/anthropic.claude-v2", DEFAULT_PROVIDERS, False, False),  # the server's AWS credentials
        ("vertex_ai/gemini-pro", DEFAULT_PROVIDERS, False, False),
        ("nonsense/model", DEFAULT_PROVIDERS, False, False),
        ("ollama/llama3", (*DEFAULT_PROVIDERS, "ollama"), False, True),  # the operator allows it
        ("openai/local", DEFAULT_PROVIDERS, True, True),
        ("anthropic/claude-3-5-sonnet", DEFAULT_PROVIDERS, True, False),  # api_base: OpenAI-compatible only
    ],
)
def test_provider_allowlist(model: str, allowed: tuple[str, ...], with_api_base: bool, ok: bool) -> None:
    if ok:
        check_model(model, list(allowed), "llm_config.model", with_api_base)
    else:
        with pytest.raises(Forbidden) as refused:
            check_model(model, list(allowed), "llm_config.model", with_api_base)
        assert refused.value.code == "provider_not_allowed"


def test_a_refused_provider_never_calls_the_llm(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    response = make_client().post(REACT, json=step(llm_config={"model": "ollama/llama3"}))
    assert (response.status_code, response.json()["error"]["code"]) == (403, "provider_not_allowed")
    assert llm_server.requests == []


@pytest.mark.parametrize(
    ("model", "default_model", "request_api_base", "sent"),
    [
        ("openai/gpt-4o", "openai/gpt-4o-mini", None, True),
        ("gpt-4o", "openai/gpt-4o-mini", None, True),
        ("anthropic/claude-3-5-sonnet", "openai/gpt-4o-mini", None, False),
        ("openai/gpt-4o-mini", "openai/gpt-4o-mini", "http://127.0.0.1:8000/v1", False),
    ],
)
def test_the_servers_key_goes_only_to_its_own_endpoint(
    model: str, default_model: str, request_api_base: str | None, sent: bool
) -> None:
    key = SecretStr("server-secret-key")
    assert (server_key(key, model, default_model, request_api_base) is key) is sent


def test_a_request_api_base_gets_no_server_key(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push("Final Answer: a")
    port = llm_server.base_url.split(":")[2].split("/")[0]
    client = make_client(llm_api_key="server-secret-key", llm_api_base_allowlist=[f"http://127.0.0.1:{port}"])
    response = client.post(REACT, json=step(llm_config={"api_base": llm_server.base_url}))
    assert response.status_code == 200
    assert llm_server.authorizations == ["Bearer none"]


class RedirectServer:
    """Answers every request with a redirect to `target`; counts what it was asked."""

    def __init__(self, target: str) -> None:
        owner = self
        self.hits = 0
        self.asked: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def _redirect(self) -> None:
                owner.hits += 1
                owner.asked.append(f"{self.command} {self.path}")
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(307)  # 307 keeps the method and body, as an attacker would want
                self.send_header("location", target + self.path.removeprefix("/v1"))
                self.send_header("content-length", "0")
                self.end_headers()

            do_GET = do_POST = _redirect

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        ).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def redirect_to_llm(llm_server: ScriptedLLMServer) -> Iterator[RedirectServer]:
    server = RedirectServer(llm_server.base_url)
    try:
        yield server
    finally:
        server.close()


def allow_both(redirect: RedirectServer, llm_server: ScriptedLLMServer) -> list[str]:
    return [url.rsplit("/", 1)[0] for url in (redirect.base_url, llm_server.base_url)]


def test_litellm_alone_would_follow_the_redirect(
    redirect_to_llm: RedirectServer, llm_server: ScriptedLLMServer
) -> None:
    """The control: litellm's own clients follow a redirect to another origin (httpx at least drops
    the Authorization header on the way, but the request itself arrives)."""
    import asyncio

    from reactstep.service.llm.gateway import import_litellm

    llm_server.push("Final Answer: followed")
    litellm = import_litellm()
    reply = asyncio.run(
        litellm.acompletion(
            model="openai/x",
            messages=[{"role": "user", "content": "q"}],
            api_base=redirect_to_llm.base_url,
            api_key="sk-followed",
            max_retries=0,
        )
    )
    assert reply.choices[0].message.content == "Final Answer: followed"
    assert redirect_to_llm.hits == 1 and len(llm_server.requests) == 1


@pytest.mark.parametrize("stream", [False, True])
def test_the_gateway_does_not_follow_a_redirect(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    redirect_to_llm: RedirectServer,
    stream: bool,
) -> None:
    llm_server.push("Final Answer: followed")
    client = make_client(llm_api_base_allowlist=allow_both(redirect_to_llm, llm_server))
    body = step(llm_config={"api_base": redirect_to_llm.base_url}, user_api_keys={"llmKey": "sk-user-key"})
    response = client.post(REACT, json={**body, "stream": stream})
    # What the server says of itself is asked first (server_facts.py), and no redirect is followed there
    # either; the call is asked once.
    assert redirect_to_llm.asked == ["GET /props", "GET /v1/models", "POST /v1/chat/completions"]
    assert llm_server.requests == []
    assert "llm_bad_response" in response.text and "followed" not in response.text


def test_the_embedding_gateway_does_not_follow_a_redirect(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    redirect_to_llm: RedirectServer,
) -> None:
    client = make_client(llm_api_base_allowlist=allow_both(redirect_to_llm, llm_server))
    config = {"model": "openai/embedder", "api_base": redirect_to_llm.base_url}
    response = client.post("/api/projects/demo/index", json={"embedding_model_config": config})
    assert (response.status_code, response.json()["error"]["code"]) == (502, "llm_bad_response")
    assert redirect_to_llm.hits == 1
    assert llm_server.requests == []
