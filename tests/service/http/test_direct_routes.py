"""The hot routes answered directly (service/http/direct.py) answer as Starlette's router does: the
same status, headers, body and request line, for answers and for every kind of refusal."""

import json
import logging
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest
from starlette.testclient import TestClient

from reactstep.service.http.auth import key_entry
from reactstep.service.limits import MAX_JSON_DEPTH
from reactstep.service.logs.lines import JsonFormatter

EXECUTE = "/api/agent/execute_action"
ROOT = "/under"  # a request under a root_path goes through the router
KEY = "rsk_direct-routes-test-key"
READ = {
    "project_id": "demo",
    "session_id": "s",
    "tool_name": "read_file",
    "tool_args": {"file_path": "README.md"},
}
VARYING = ("execution_time_ms", "duration_ms", "tool_ms")  # timings: the only fields that may differ


def _json(body: dict[str, Any]) -> bytes:
    return json.dumps(body).encode()


def _nested(depth: int) -> list[Any]:
    """A list nested `depth` deep: with the body around it, deeper than the server takes."""
    value: list[Any] = [1]
    for _ in range(depth - 1):
        value = [value]
    return value


CASES = {
    "read": _json(READ),
    "missing file": _json({**READ, "tool_args": {"file_path": "nope.md"}}),
    "bad argument": _json({**READ, "tool_args": {"file_path": "README.md", "start_line": "one"}}),
    "unknown tool": _json({**READ, "tool_name": "rm_rf"}),
    "unknown project": _json({**READ, "project_id": "nope"}),
    "other tenant": _json({**READ, "project_id": "other"}),
    "not JSON": b"{not json",
    "empty": b"",
    "schema": _json({**READ, "surprise": 1}),
    "too deep": _json({**READ, "tool_args": {"file_path": "README.md", "x": _nested(MAX_JSON_DEPTH)}}),
    "too large": _json({**READ, "tool_args": {"file_path": "README.md", "pad": "x" * 3000}}),
    "secret": _json({**READ, "user_api_keys": {"embeddingKey": "sk-lent-key-0123456789"}}),
}


@pytest.mark.parametrize("case", CASES)
def test_direct_answers_are_the_routers(
    make_client: Callable[..., TestClient], caplog: pytest.LogCaptureFixture, case: str
) -> None:
    caplog.set_level(logging.INFO, logger="reactstep")
    direct = make_client(max_body_bytes=2000, api_keys=[key_entry(KEY, "demo")])
    routed = TestClient(direct.app, root_path=ROOT, raise_server_exceptions=False)
    headers = {"authorization": f"Bearer {KEY}", "x-request-id": f"req-{len(case)}"}
    answers = []
    for client, path in ((direct, EXECUTE), (routed, ROOT + EXECUTE)):
        caplog.clear()
        response = client.post(path, content=CASES[case], headers=headers)
        answers.append((response, _request_line(caplog)))
    (direct_answer, direct_line), (routed_answer, routed_line) = answers
    assert direct_answer.status_code == routed_answer.status_code
    assert _headers(direct_answer) == _headers(routed_answer)
    assert _steady(direct_answer.json()) == _steady(routed_answer.json())
    if "execution_time_ms" not in direct_answer.json():  # errors: byte for byte
        assert direct_answer.content == routed_answer.content
    assert _steady(direct_line) == _steady(routed_line)
    assert direct_line["route"] == EXECUTE


def test_a_client_gone_before_its_body_is_the_routers(make_client: Callable[..., TestClient]) -> None:
    """A body that never finishes: the client is gone, and the answer says so in both paths."""
    client = make_client()
    answers = [_call_cut_short(client, root + EXECUTE, root) for root in ("", ROOT)]
    assert answers[0] == answers[1]
    assert answers[0][0] == 400


def _call_cut_short(client: TestClient, path: str, root: str) -> tuple[int, bytes]:
    """POST half a body then a disconnect, straight into the app (no client library would)."""
    sent: list[dict[str, Any]] = []
    messages = [
        {"type": "http.request", "body": b'{"project_id": "demo"', "more_body": True},
        {"type": "http.disconnect"},
    ]

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": root,
        "headers": [(b"host", b"test"), (b"x-request-id", b"cut-short")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 2),
        "state": {},
    }
    anyio.run(client.app, scope, receive, send)
    return sent[0]["status"], sent[1]["body"]


def _headers(response: httpx.Response) -> list[tuple[str, str]]:
    """Every header, in order; the length only for answers whose body holds no timing."""
    timed = "execution_time_ms" in response.json()
    return [
        (name, value)
        for name, value in response.headers.multi_items()
        if not (timed and name == "content-length")
    ]


def _steady(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if key not in VARYING}


def _request_line(caplog: pytest.LogCaptureFixture) -> dict[str, Any]:
    formatter = JsonFormatter()
    lines = [json.loads(formatter.format(r)) for r in caplog.records if r.name == "reactstep.http"]
    (line,) = [line for line in lines if line["message"] == "request"]
    line.pop("ts")
    return line
