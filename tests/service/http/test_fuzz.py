"""schemathesis against openapi.yaml: generated requests, valid and invalid, get no 5xx and answers
that match the contract (status, content type, headers, body schema, auth enforced).

The app is the real one, with a scripted gateway, a local store and a small hashing embedder; every
request-named provider and api_base is refused, so nothing leaves the process (network_log checks
it). Two runs, both derandomized and bounded:
    test_generated_requests_meet_the_contract   in-process over ASGI, pytest's own cases
    test_every_check_passes                     the `schemathesis run --checks all` command against
                                                the app on loopback: every phase (examples, coverage,
                                                fuzzing, stateful), the contract both ways
"""

import math
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import word_vector
from reactstep.contract.step_report import Usage
from reactstep.service.http.app import create_app
from reactstep.service.http.auth import key_entry
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.llm.protocol import LLMReply, LLMRequest
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from tests.service.http.test_openapi import sse_events

MAX_EXAMPLES = 25
SERVICE_KEY = "rsk_fuzz-key-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {SERVICE_KEY}"}


@schemathesis.check
def body_conformance(ctx: Any, response: Any, case: Any) -> bool | None:
    """The body against the response schema (an event stream event by event: the spec's schema of a
    stream is one event's); a stream ends with its `result` or `error` event."""
    checked = response_schema_conformance(ctx, response, case)
    if (response.headers.get("content-type") or [""])[0].startswith("text/event-stream"):
        events = sse_events(response.content.decode())
        assert [name for name, _ in events][-1:] in (["result"], ["error"])
    return checked


@schemathesis.check
def invalid_data_rejected(ctx: Any, response: Any, case: Any) -> bool | None:
    """schemathesis' negative_data_rejection, where 413 also counts: an invalid body that is also
    larger than the body limit is refused by size before its shape is looked at."""
    if response.status_code == 413:
        return None
    return negative_data_rejection(ctx, response, case)


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    body_conformance,
    invalid_data_rejected,
    ignored_auth,
]


class AnsweringGateway:
    """Answers every step at once, so generated requests reach every later stage."""

    async def complete(self, request: LLMRequest) -> LLMReply:
        return LLMReply(
            text="Thought: done\nFinal Answer: ok", usage=Usage(), finish_reason="stop", elapsed_ms=1
        )

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        reply = await self.complete(request)
        yield reply.text
        yield reply


class HashingEmbedder:
    """Bag-of-words vectors: fast, deterministic and searchable."""

    model_name = "local/fuzz-hash"
    dimension = len(word_vector(""))
    known_dimension = dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        vector = word_vector(text)
        norm = math.sqrt(sum(value * value for value in vector)) or 1.0
        return [value / norm for value in vector]


def build_app(root: Path) -> Any:
    """The real app with fakes at its seams, keyed, with every outbound destination refused."""
    store = LocalStore(root / "objects")
    store.put("demo", "src/app.py", b"def main():\n    return 42\n")
    fields: dict[str, Any] = {
        "data_dir": root,
        "api_keys": [key_entry(SERVICE_KEY, "*")],
        "llm_allowed_providers": [],  # every model a request names is refused: no call leaves
        "llm_api_base_allowlist": [],
        "embedding_model": HashingEmbedder.model_name,
        "llm_max_retries": 0,
    }
    return create_app(Settings(**fields), llm=AnsweringGateway(), store=store, embedder=HashingEmbedder())


# schemathesis binds the app when the schema loads, at collection; the directory goes at exit.
_DATA = tempfile.TemporaryDirectory(prefix="reactstep-fuzz-")
_APP = build_app(Path(_DATA.name))
# Without its lifespan the app makes /readyz's LLM verdict at once, importing litellm: once that is
# in, the served app's verdict is too, and /readyz never answers a warming 503 to a generated case.
assert TestClient(_APP).get("/readyz").status_code == 200
schema = schemathesis.openapi.from_asgi("/openapi.yaml", _APP)
schema.config.generation.update(
    modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE], max_examples=MAX_EXAMPLES
)


@schema.parametrize()
@settings(deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
def test_generated_requests_meet_the_contract(
    case: Any, network_log: list[tuple[str, tuple[Any, ...]]]
) -> None:
    case.call_and_validate(headers=AUTH, checks=CHECKS)
    assert [args for event, args in network_log if event == "socket.connect"] == []


# One command a person can run against a server of their own (its key in place of SERVICE_KEY).
CLI_RUN = ["run", "--checks", "all", "--seed", "27", "--max-examples", "40", "--workers", "1"]
CLI_OPTIONS = ["--continue-on-failure", "--generation-database", "none", "--no-color", "--warnings", "off"]
CLI_CONFIG = Path(__file__).with_name("schemathesis.toml")
CHECKOUT = Path(__file__).parents[3]  # the config names its hooks file from here


def test_every_check_passes(tmp_path: Path, network_log: list[tuple[str, tuple[Any, ...]]]) -> None:
    """`schemathesis run --checks all` finds nothing: valid requests accepted, invalid ones refused,
    answers, SSE events and Allow headers as the spec says."""
    program = str(Path(sys.executable).with_name("schemathesis"))
    command = [program, "--config-file", str(CLI_CONFIG), *CLI_RUN, *CLI_OPTIONS]
    with BackgroundServer(build_app(tmp_path)) as server:
        wait_until_ready(server.url)
        run = subprocess.run(
            [*command, "--header", f"Authorization: Bearer {SERVICE_KEY}", f"{server.url}/openapi.yaml"],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=CHECKOUT,
        )
        own = ("127.0.0.1", server.port)
    assert run.returncode == 0, run.stdout[-20_000:]
    assert [args for event, args in network_log if event == "socket.connect" and args[1] != own] == []


def wait_until_ready(url: str) -> None:
    """/readyz answers 200 (the LLM check's first verdict is in): a warming 503 is no finding."""
    deadline = time.monotonic() + 30
    while httpx.get(f"{url}/readyz").status_code != 200:
        assert time.monotonic() < deadline, "the server never became ready"
        time.sleep(0.05)


# What schemathesis found, each as the exact answer it gets now (status, error code, a header).
FILES, SINCE, JSON = "/api/projects/demo/files/", "/api/projects/demo/changes?since=", "application/json"
FOUND: dict[str, tuple[str, str, dict[str, Any], int, str | None]] = {
    "405 names every method": ("OPTIONS", f"{FILES}a.py", {}, 405, "method_not_allowed"),
    "path with a control char": ("GET", f"{FILES}a%01.py", {}, 422, "invalid_path"),
    "path part over 255 bytes": ("GET", FILES + "é" * 128, {}, 422, "invalid_path"),
    "version past 18 digits": ("GET", SINCE + "9" * 19, {}, 422, "validation_failed"),
    "version in other digits": ("GET", f"{SINCE}²", {}, 422, "validation_failed"),
    "If-None-Match not *": ("PUT", f"{FILES}b.py", {"if-none-match": '"x"'}, 400, "bad_request"),
    "a PUT without a body": ("PUT", f"{FILES}empty.py", {}, 200, None),
    "mcp with Accept */*": ("POST", "/mcp/demo", {"content-type": JSON}, 200, None),
    "mcp not UTF-8": ("POST", "/mcp/demo", {"content-type": JSON, "x-body": "\xff"}, 400, "invalid_json"),
}
PING = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'


@pytest.mark.parametrize(("method", "url", "headers", "status", "code"), FOUND.values(), ids=FOUND.keys())
def test_what_schemathesis_found(
    tmp_path: Path, method: str, url: str, headers: dict[str, str], status: int, code: str | None
) -> None:
    body = headers.pop("x-body", "").encode("latin-1") or (PING if url.startswith("/mcp") else b"")
    response = TestClient(build_app(tmp_path)).request(method, url, content=body, headers={**AUTH, **headers})
    assert response.status_code == status
    if code is not None:
        assert response.json()["error"]["code"] == code
    if status == 405:
        assert response.headers["allow"] == "DELETE, GET, HEAD, PUT"


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ([{"name": "run"}, {"name": "run"}], "client tool 'run' has the name of another client tool"),
        ([{"name": "read_file"}], "client tool 'read_file' has the name of a server tool"),
    ],
)
def test_client_tool_names_are_their_own(tmp_path: Path, tools: list[dict[str, str]], message: str) -> None:
    step = {"project_id": "demo", "session_id": "s", "user_query": "q", "client_tools": tools}
    response = TestClient(build_app(tmp_path)).post("/api/agent/react_step", json=step, headers=AUTH)
    assert (response.status_code, response.json()["error"]["message"]) == (422, message)
