"""Keys never leak: canary keys driven through every path, success and failure, then searched for in
every response, header, log record (DEBUG, every logger, tracebacks included), stdout, stderr and repr."""

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import Fault, Reply, ScriptedLLMServer
from reactstep.contract.step import ReactStepRequest
from reactstep.service.http.app import create_app
from reactstep.service.http.auth import key_entry
from reactstep.service.llm.config import resolve_llm_request
from reactstep.service.llm.protocol import LLMReply, LLMRequest
from reactstep.service.llm.remote_embedder import LiteLLMEmbedder
from reactstep.service.logs.lines import JsonFormatter, TextFormatter
from reactstep.service.redaction import REDACTED, redact_fields, remember_server_secrets
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder
from reactstep.tools.store.local import LocalStore

USER_LLM_KEY = "sk-canary-user-llm-7f3a9c1e5b2d"
USER_EMBEDDING_KEY = "ek-canary-user-embed-0b8e6d4c2a"
SERVER_LLM_KEY = "sk-canary-server-llm-93c5a1f7e2"
SERVER_SECRETS = {
    "embedding_api_key": "ek-canary-server-embed-5d2c8b",
    "s3_secret_access_key": "s3-canary-secret-4e7a1c9f0b",
    "qdrant_api_key": "qd-canary-server-6a3f8e1d2c",
}
SERVICE_KEY = "rsk_canary-service-key-8d1f3a6c0e2b"  # travels only in Authorization
# A key no Authorization header can carry: no piece of it may come back either.
BROKEN_KEY_PIECES = ("sk-canary-broken-head", "canary-broken-tail-5e1")
BROKEN_KEY = f'{BROKEN_KEY_PIECES[0]}\n"{BROKEN_KEY_PIECES[1]}'
CANARIES = [USER_LLM_KEY, USER_EMBEDDING_KEY, SERVER_LLM_KEY, SERVICE_KEY, *SERVER_SECRETS.values()]
CANARIES += [*BROKEN_KEY_PIECES]
REACT, EXECUTE = "/api/agent/react_step", "/api/agent/execute_action"
DEAD = "http://127.0.0.1:9"  # the discard port: nothing listens on loopback
EMBEDDER = {"model": "openai/scripted-embedding"}


class Seen:
    """Everything the service wrote during a test, to search for canaries."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def response(self, response: httpx.Response) -> httpx.Response:
        """Keep a response's status line, headers and body."""
        self.texts.append(f"{response.status_code} {dict(response.headers)} {response.text}")
        return response


@pytest.fixture
def seen(caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]) -> Iterator[Seen]:
    """Collects responses; at the end, searches them, every log record and both output streams."""
    caplog.set_level(logging.DEBUG)
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx", "httpcore", "botocore", "openai"):
        caplog.set_level(logging.DEBUG, logger=name)  # restored after the test
    collected = Seen()
    yield collected
    out, err = capfd.readouterr()
    # as a plain formatter shows them, and as `reactstep serve` writes them (JSON, or text on a terminal):
    # the structured fields of each record included
    formatters = [logging.Formatter("%(name)s %(levelname)s %(message)s"), JsonFormatter(), TextFormatter()]
    records = [formatter.format(record) for record in caplog.get_records("call") for formatter in formatters]
    everything = "\n".join([*collected.texts, *records, out, err])
    assert records, "no log record was captured"
    assert collected.texts, "the test sent no request"
    leaked = [canary for canary in CANARIES if canary in everything]
    assert leaked == []


def body(**extra: Any) -> dict[str, Any]:
    keys = {"llmKey": USER_LLM_KEY, "embeddingKey": USER_EMBEDDING_KEY}
    return {"project_id": "demo", "session_id": "s", "user_query": "q", "user_api_keys": keys, **extra}


def action(tool: str, **args: Any) -> dict[str, Any]:
    keys = {"llmKey": USER_LLM_KEY, "embeddingKey": USER_EMBEDDING_KEY}
    request = {"project_id": "demo", "session_id": "s", "tool_name": tool, "tool_args": args}
    return {**request, "user_api_keys": keys}


def echo(status: int, key: str = USER_LLM_KEY) -> Fault:
    """A provider error whose message repeats the key, as some providers do."""
    return Fault(status=status, message=f"Incorrect API key provided: {key}. Authorization: Bearer {key}")


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize(
    "script",
    [
        ("Final Answer: done",),
        (f"Thought: the key is {USER_LLM_KEY[:6]}\nAction: read_file(file_path='README.md')",),
        (echo(401),),
        (echo(400),),
        (echo(500),),
        (echo(429),),
        (Reply("Final Answer: late", delay_s=2.0),),
    ],
    ids=["answer", "action", "401", "400", "500", "429", "timeout"],
)
def test_user_llm_key_through_react_step(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    seen: Seen,
    script: tuple[Any, ...],
    stream: bool,
) -> None:
    llm_server.push(*script)
    client = make_client(llm_max_retries=0, llm_timeout_s=0.5, **server_secrets())
    seen.response(client.post(REACT, json=body(stream=stream)))
    assert llm_server.authorizations == [f"Bearer {USER_LLM_KEY}"]  # where the key belongs, only


@pytest.mark.parametrize("script", [("Final Answer: done",), (echo(401, SERVER_LLM_KEY),)], ids=["ok", "401"])
def test_server_llm_key_through_react_step(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    seen: Seen,
    script: tuple[Any, ...],
) -> None:
    llm_server.push(*script)
    client = make_client(llm_max_retries=0, llm_api_key=SERVER_LLM_KEY, **server_secrets())
    no_user_key = {**body(), "user_api_keys": {}}
    seen.response(client.post(REACT, json=no_user_key))
    assert llm_server.authorizations == [f"Bearer {SERVER_LLM_KEY}"]


def test_keys_through_a_provider_that_is_down(make_client: Callable[..., TestClient], seen: Seen) -> None:
    client = make_client(llm_api_base=f"{DEAD}/v1", llm_max_retries=0, **server_secrets())
    seen.response(client.post(REACT, json=body()))
    seen.response(client.post(REACT, json=body(stream=True)))


@pytest.mark.parametrize(
    "payload",
    [
        body(surprise=1),
        body(user_api_keys={"llmKey": USER_LLM_KEY, "other": USER_EMBEDDING_KEY}),
        body(user_api_keys={"llmKey": [USER_LLM_KEY]}),
        body(user_api_keys={"llmKey": USER_LLM_KEY * 20}),
        {**body(), "project_id": "../x"},
        body(llm_config={"model": "ollama/x"}),
        body(llm_config={"api_base": f"http://user:{USER_LLM_KEY}@127.0.0.1:9/v1"}),
        body(llm_config={"max_tokens": 10**6}),
    ],
    ids=["extra", "extra key", "wrong type", "too long", "project", "provider", "api_base", "max_tokens"],
)
def test_keys_through_rejected_requests(
    make_client: Callable[..., TestClient], seen: Seen, payload: dict[str, Any]
) -> None:
    client = make_client(llm_api_base_allowlist=["http://*:*"], **server_secrets())
    seen.response(client.post(REACT, json=payload))
    seen.response(client.post(REACT, content=str(payload).encode(), headers={"content-type": "x"}))


@pytest.mark.parametrize("fault", [None, echo(401, USER_EMBEDDING_KEY), echo(500, USER_EMBEDDING_KEY)])
def test_embedding_keys_through_index_and_code_search(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    seen: Seen,
    fault: Fault | None,
) -> None:
    port = llm_server.base_url.split(":")[2].split("/")[0]
    client = make_client(llm_api_base_allowlist=[f"http://127.0.0.1:{port}"], **server_secrets())
    config = {**EMBEDDER, "api_base": llm_server.base_url}
    keys = {"embeddingKey": USER_EMBEDDING_KEY}
    for _ in range(2):
        if fault is not None:
            llm_server.push(fault)
        seen.response(
            client.post(
                "/api/projects/demo/index", json={"embedding_model_config": config, "user_api_keys": keys}
            )
        )
        search = {**action("code_search", query="main"), "embedding_model_config": config}
        seen.response(client.post(EXECUTE, json=search))
    assert {auth for auth in llm_server.authorizations} <= {f"Bearer {USER_EMBEDDING_KEY}"}


class ExplodingGateway:
    """An LLM seam whose failure message carries the key (a bug elsewhere must still not leak it)."""

    async def complete(self, request: LLMRequest) -> LLMReply:
        secret = request.api_key.get_secret_value() if request.api_key else ""
        raise RuntimeError(f"unexpected failure while calling with {secret}")

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        await self.complete(request)
        yield ""


def test_keys_through_an_unexpected_failure(tmp_path: Path, local_store: LocalStore, seen: Seen) -> None:
    settings = Settings(data_dir=tmp_path, llm_max_retries=0, **server_secrets())
    client = TestClient(
        create_app(settings, llm=ExplodingGateway(), store=local_store), raise_server_exceptions=False
    )
    seen.response(client.post(REACT, json=body()))
    seen.response(client.post(REACT, json=body(stream=True)))
    assert "internal_error" in seen.texts[0]


def test_server_secrets_through_dead_back_ends(
    tmp_path: Path, local_embedder: LocalEmbedder, seen: Seen
) -> None:
    settings = Settings(
        data_dir=tmp_path,
        storage_backend="s3",
        s3_endpoint_url=DEAD,
        s3_access_key_id=SecretStr("AKIAEXAMPLEKEYID"),
        s3_timeout_s=1,
        vector_backend="qdrant",
        qdrant_url=DEAD,
        qdrant_timeout_s=1,
        llm_api_base=f"{DEAD}/v1",
        llm_api_key=SecretStr(SERVER_LLM_KEY),
        llm_max_retries=0,
        **server_secrets(),
    )
    client = TestClient(create_app(settings, embedder=local_embedder), raise_server_exceptions=False)
    seen.response(client.get("/readyz"))
    seen.response(client.post(EXECUTE, json=action("read_file", file_path="README.md")))
    seen.response(client.post(EXECUTE, json=action("code_search", query="main")))
    seen.response(client.post(REACT, json={**body(), "user_api_keys": {}}))
    assert '"status":"unavailable"' in seen.texts[0]


def test_log_lines_that_name_a_secret_are_scrubbed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Any logger, any level, message, arguments and traceback: a known secret becomes [redacted]."""
    remember_server_secrets(Settings(data_dir=tmp_path, llm_api_key=SecretStr(SERVER_LLM_KEY)))
    create_app(Settings(data_dir=tmp_path))  # installs the scrubber
    caplog.set_level(logging.DEBUG)
    logger = logging.getLogger("some.third.party")
    logger.debug("calling with key=%s", SERVER_LLM_KEY)
    try:
        raise ValueError(f"bad key {SERVER_LLM_KEY}")
    except ValueError:
        logger.exception("failed")
    assert SERVER_LLM_KEY not in caplog.text
    assert caplog.text.count(REDACTED) == 2


def test_service_key_in_authorization_never_reaches_a_log_line(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer, seen: Seen
) -> None:
    """The request log line names the project, route and status, never the headers that came with them."""
    llm_server.push("Final Answer: done")
    client = make_client(api_keys=[key_entry(SERVICE_KEY, "demo")])
    bearer = {"authorization": f"Bearer {SERVICE_KEY}"}
    seen.response(client.post(REACT, json=body(), headers=bearer))
    seen.response(client.post(EXECUTE, json=action("read_file", file_path="README.md"), headers=bearer))
    seen.response(client.post(REACT, json=body(project_id="other"), headers=bearer))  # 403
    seen.response(client.post(REACT, json=body(), headers={"authorization": f"Bearer {SERVICE_KEY}x"}))  # 401
    assert [text[:3] for text in seen.texts] == ["200", "200", "403", "401"]
    assert SERVICE_KEY not in "\n".join(seen.texts)


def test_secrets_in_a_log_lines_fields_are_scrubbed(tmp_path: Path) -> None:
    """Structured fields are text the formatter writes: a known secret there becomes [redacted] too."""
    remember_server_secrets(Settings(data_dir=tmp_path, llm_api_key=SecretStr(SERVER_LLM_KEY)))
    record = logging.LogRecord("reactstep.http", logging.INFO, __file__, 1, "request", None, None)
    record.fields = {"route": f"/x/{SERVER_LLM_KEY}", "api_key": "anything", "status": 200}
    for formatter in (JsonFormatter(), TextFormatter()):
        line = formatter.format(record)
        assert SERVER_LLM_KEY not in line
        assert line.count(REDACTED) == 2  # the known secret, and the secret-named field


def test_reprs_hide_every_secret(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, llm_api_key=SecretStr(SERVER_LLM_KEY), **server_secrets())
    request = ReactStepRequest.model_validate(body())
    llm_request = resolve_llm_request(request.llm_config, request.user_api_keys, settings)
    embedder = LiteLLMEmbedder("openai/x", api_base=None, api_key=SecretStr(USER_EMBEDDING_KEY), timeout_s=1)
    shown = " ".join(
        text
        for thing in (settings, request, request.user_api_keys, llm_request, embedder)
        for text in (repr(thing), str(thing))
    )
    assert [canary for canary in CANARIES if canary in shown] == []


@pytest.mark.parametrize(
    ("value", "redacted"),
    [
        ({"llmKey": "x", "user_query": "q"}, {"llmKey": REDACTED, "user_query": "q"}),
        (
            {"a": [{"api_key": 1, "Authorization": "Bearer t"}]},
            {"a": [{"api_key": REDACTED, "Authorization": REDACTED}]},
        ),
        ({"s3_secret_access_key": "s", "max_tokens": 5}, {"s3_secret_access_key": REDACTED, "max_tokens": 5}),
        ({"embeddingKey": None, "keys": ["k"]}, {"embeddingKey": REDACTED, "keys": ["k"]}),
    ],
)
def test_redaction_goes_by_field_name(value: Any, redacted: Any) -> None:
    assert redact_fields(value) == redacted


def server_secrets() -> dict[str, Any]:
    return {name: SecretStr(value) for name, value in SERVER_SECRETS.items()}


@pytest.mark.parametrize(
    "key",
    [
        BROKEN_KEY,
        f"{USER_LLM_KEY}\r",
        f"\t{USER_LLM_KEY}",
        f"{USER_LLM_KEY}\x00",
        f"{USER_LLM_KEY}\x7f",
        "sk-é-canary",
    ],
    ids=["newline and quote", "carriage return", "tab", "nul", "del", "not ascii"],
)
@pytest.mark.parametrize("field", ["llmKey", "embeddingKey"])
def test_a_lent_key_no_header_can_carry_is_refused_before_any_call(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer, seen: Seen, key: str, field: str
) -> None:
    llm_server.push("Final Answer: done")
    client = make_client(llm_max_retries=0)
    for payload in (body(user_api_keys={field: key}), body(user_api_keys={field: key}, stream=True)):
        response = seen.response(client.post(REACT, json=payload))
        assert (response.status_code, response.json()["error"]["code"]) == (422, "validation_failed")
        assert response.json()["error"]["details"] == [
            {"field": f"user_api_keys.{field}", "message": "Value error, a key holds printable ASCII only"}
        ]
    assert llm_server.authorizations == []  # the seen fixture then looks for every piece of the keys


def test_a_server_key_no_header_can_carry_never_comes_back(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer, seen: Seen
) -> None:
    """The server's own key is the operator's: it is sent, the HTTP client refuses it, and the
    answer (503 llm_unavailable) names no piece of it, escaped or not."""
    client = make_client(llm_max_retries=0, llm_api_key=SecretStr(BROKEN_KEY))
    for stream in (False, True):
        response = seen.response(client.post(REACT, json={**body(stream=stream), "user_api_keys": {}}))
        assert response.status_code == (200 if stream else 503)
    assert llm_server.authorizations == []
    assert ["llm_unavailable" in text for text in seen.texts] == [True, True]


@pytest.mark.parametrize("control", ["\x01", "\t", "\x7f"], ids=["soh", "tab", "del"])
def test_a_service_key_no_header_can_carry_is_refused(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer, seen: Seen, control: str
) -> None:
    """Even one configured so: the key a client sends is printable ASCII, or no key (401)."""
    token = f"{SERVICE_KEY[:12]}{control}{SERVICE_KEY[12:]}"
    llm_server.push("Final Answer: done")
    client = make_client(api_keys=[key_entry(token, "demo")])
    response = seen.response(client.post(REACT, json=body(), headers={"authorization": f"Bearer {token}"}))
    assert (response.status_code, response.json()["error"]["code"]) == (401, "unauthorized")
    assert llm_server.authorizations == []
