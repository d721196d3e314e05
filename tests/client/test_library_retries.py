"""Retries and errors of Client and AsyncClient against a real tiny HTTP server on 127.0.0.1 that
answers from a script: how many times each request is sent, how long the client waits, and which
error it raises (with the body's code, message and request_id)."""

import asyncio
import json
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from reactstep.client import (
    ApiError,
    AsyncClient,
    BadResponse,
    Client,
    ConnectionFailed,
    NotFound,
    RateLimited,
    RetryPolicy,
    ServerError,
    StreamError,
    Unavailable,
)
from reactstep.client.api.retries import parse_retry_after
from reactstep.client.api.wire import StepResult, ThoughtEvent
from tests.served import free_port

Answer = tuple[int, dict[str, str], bytes]
PROJECT = {
    "project_id": "demo",
    "files": 0,
    "bytes": 0,
    "chunks": 0,
    "version": 3,
    "indexed_version": 0,
    "index_state": "stale",
    "created": 1.5,
}
STORED = {"path": "a.py", "size": 6, "version": 4, "etag": "e4", "sha256": "0" * 64, "changed": True}
OBSERVED = {
    "session_id": "s",
    "tool_name": "read_file",
    "observation": "ok",
    "is_error": False,
    "execution_time_ms": 1,
}
STEP = {"session_id": "s", "status": "final_answer", "final_answer": "42"}
FAST = RetryPolicy(attempts=4, backoff_s=0.01, max_wait_s=5.0)


def ok(body: dict[str, Any]) -> Answer:
    return 200, {"content-type": "application/json"}, json.dumps(body).encode()


def failed(status: int, code: str, retry_after: str | None = "0") -> Answer:
    headers = {"content-type": "application/json"} | ({"retry-after": retry_after} if retry_after else {})
    body = {"error": {"code": code, "message": f"{code} here", "request_id": f"req-{code}"}}
    return status, headers, json.dumps(body).encode()


def events(*pairs: tuple[str, dict[str, Any]]) -> Answer:
    text = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in pairs)
    return 200, {"content-type": "text/event-stream"}, text.encode()


class ScriptedServer:
    """Answers each request with the next scripted answer (the last one again when the script ends)."""

    def __init__(self, script: list[Answer], port: int = 0) -> None:
        self.script = list(script)
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                owner.seen.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}))
                status, headers, body = owner.script.pop(0) if len(owner.script) > 1 else owner.script[0]
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_PUT = do_POST = do_DELETE = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "ScriptedServer":
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def call(mode: str, url: str, route: str, *args: Any, retry: RetryPolicy = FAST) -> Any:
    """client.<route>(*args) with the sync or the async client."""
    if mode == "sync":
        with Client(url, retry=retry) as client:
            return _method(client, route)(*args)

    async def main() -> Any:
        async with AsyncClient(url, retry=retry) as client:
            return await _method(client, route)(*args)

    return asyncio.run(main())


def _method(client: Any, route: str) -> Any:
    target = client
    for name in route.split("."):
        target = getattr(target, name)
    return target


MODES = ["sync", "async"]
UPLOAD = ("projects.upload", "demo", "a.py", b"x = 1\n", "e3")
EXECUTE = ("execute", {"project_id": "demo", "session_id": "s", "tool_name": "read_file", "tool_args": {}})
APPROVED = ("execute", {**EXECUTE[1], "tool_name": "replace_in_file", "approval_token": "t0k3n"})
STEP_CALL = ("step", {"project_id": "demo", "session_id": "s", "user_query": "q"})
# (route and args, the server's answers, requests expected, the error expected or None)
CASES: dict[str, tuple[tuple[Any, ...], list[Answer], int, type[ApiError] | None]] = {
    "a read retried through 503s": (
        ("projects.get", "demo"),
        [failed(503, "storage_unavailable"), failed(503, "vector_store_unavailable"), ok(PROJECT)],
        3,
        None,
    ),
    "a step retried after 503 llm_unavailable": (
        STEP_CALL,
        [failed(503, "llm_unavailable"), ok(STEP)],
        2,
        None,
    ),
    "a write refused by admission (503 overloaded) is sent again": (
        UPLOAD,
        [failed(503, "overloaded"), ok(STORED)],
        2,
        None,
    ),
    "a write after 429 is sent again": (APPROVED, [failed(429, "rate_limited"), ok(OBSERVED)], 2, None),
    "a write that may have happened (503 storage_unavailable) is not sent again": (
        UPLOAD,
        [failed(503, "storage_unavailable"), ok(STORED)],
        1,
        Unavailable,
    ),
    "an execute_action without approval_token (nothing it can write) is sent again": (
        EXECUTE,
        [failed(503, "vector_store_unavailable"), ok(OBSERVED)],
        2,
        None,
    ),
    "an approved write the server began is not sent again": (
        APPROVED,
        [failed(503, "storage_unavailable"), ok(OBSERVED)],
        1,
        Unavailable,
    ),
    "an approved write refused by admission is sent again": (
        APPROVED,
        [failed(503, "overloaded"), ok(OBSERVED)],
        2,
        None,
    ),
    "at most `attempts` sends": (("projects.get", "demo"), [failed(503, "overloaded")], 4, Unavailable),
    "429 to the end: RateLimited": (STEP_CALL, [failed(429, "rate_limited")], 4, RateLimited),
    "a key's day spent (429 until midnight) is raised at once": (
        STEP_CALL,
        [failed(429, "budget_exhausted", retry_after="3600"), ok(STEP)],
        1,
        RateLimited,
    ),
    "a budget held by steps in flight is waited for": (
        STEP_CALL,
        [failed(429, "budget_exhausted", retry_after="0"), ok(STEP)],
        2,
        None,
    ),
    "500 is not retried": (
        ("projects.get", "demo"),
        [failed(500, "internal_error"), ok(PROJECT)],
        1,
        ServerError,
    ),
    "404 is not retried": (
        ("projects.get", "demo"),
        [failed(404, "project_not_found"), ok(PROJECT)],
        1,
        NotFound,
    ),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(CASES))
def test_retries_by_route_and_answer(mode: str, name: str) -> None:
    (route, *args), script, sends, error = CASES[name]
    with ScriptedServer(script) as server:
        if error is None:
            call(mode, server.url, route, *args)
        else:
            with pytest.raises(error) as raised:
                call(mode, server.url, route, *args)
            code = json.loads(script[0][2])["error"]["code"]
            assert (raised.value.status, raised.value.code, raised.value.message) == (
                script[0][0],
                code,
                f"{code} here",
            )
            assert raised.value.request_id == f"req-{code}"
    assert len(server.seen) == sends


@pytest.mark.parametrize("mode", MODES)
def test_a_write_goes_out_once_with_its_precondition(mode: str) -> None:
    with ScriptedServer([failed(503, "overloaded"), ok(STORED)]) as server:
        stored = call(mode, server.url, *UPLOAD)
    assert stored.etag == "e4"
    assert [(method, path, headers["if-match"]) for method, path, headers in server.seen] == [
        ("PUT", "/api/projects/demo/files/a.py", '"e3"')
    ] * 2


@pytest.mark.parametrize("mode", MODES)
def test_retry_after_in_seconds_is_waited(mode: str) -> None:
    with ScriptedServer([failed(503, "overloaded", "1"), ok(PROJECT)]) as server:
        started = time.monotonic()
        assert call(mode, server.url, "projects.get", "demo").version == 3
        waited = time.monotonic() - started
    assert 1.0 <= waited < 3.0


@pytest.mark.parametrize("mode", MODES)
def test_retry_after_as_a_date_is_capped(mode: str) -> None:
    an_hour_on = formatdate(time.time() + 3600, usegmt=True)
    capped = RetryPolicy(attempts=2, backoff_s=0.01, max_wait_s=0.3)
    with ScriptedServer([failed(503, "overloaded", an_hour_on), ok(PROJECT)]) as server:
        started = time.monotonic()
        call(mode, server.url, "projects.get", "demo", retry=capped)
        waited = time.monotonic() - started
    assert 0.3 <= waited < 2.0


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("7", 7.0),
        (" 0 ", 0.0),
        ("Thu, 01 Jan 1970 00:01:40 GMT", 60.0),  # 100 s after the epoch, read at 40 s
        ("Thu, 01 Jan 1970 00:00:10 GMT", 0.0),  # in the past: now
        ("soon", None),
        ("-3", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_retry_after(header: str | None, seconds: float | None) -> None:
    assert parse_retry_after(header, now=40.0) == seconds


@pytest.mark.parametrize("mode", MODES)
def test_connection_refused_is_retried_until_the_server_listens(mode: str) -> None:
    port = free_port()
    started: list[ScriptedServer] = []

    def listen_soon() -> None:
        time.sleep(0.2)
        started.append(ScriptedServer([ok(PROJECT)], port=port).__enter__())

    threading.Thread(target=listen_soon, daemon=True).start()
    patient = RetryPolicy(attempts=20, backoff_s=0.1, max_wait_s=0.1)
    try:
        assert call(mode, f"http://127.0.0.1:{port}", "projects.get", "demo", retry=patient).version == 3
    finally:
        for running in started:
            running.__exit__()
    assert len(started[0].seen) == 1


@pytest.mark.parametrize("mode", MODES)
def test_nobody_listening_is_connection_failed(mode: str) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ConnectionFailed, match=f"cannot reach {url}"):
        call(mode, url, "projects.get", "demo", retry=RetryPolicy(attempts=2, backoff_s=0.01))


THOUGHT = ("thought", {"delta": "It is "})
RESULT = ("result", STEP | {"thought": "It is 42."})


@pytest.mark.parametrize("mode", MODES)
def test_a_stream_refused_before_it_began_is_opened_again(mode: str) -> None:
    request = STEP_CALL[1]

    async def read_async(url: str) -> list[Any]:
        async with AsyncClient(url, retry=FAST) as client:
            return [event async for event in client.stream_step(request)]

    with ScriptedServer([failed(503, "overloaded"), events(THOUGHT, RESULT)]) as server:
        if mode == "sync":
            with Client(server.url, retry=FAST) as client:
                seen = list(client.stream_step(request))
        else:
            seen = asyncio.run(read_async(server.url))
    assert seen[0] == ThoughtEvent(delta="It is ")
    assert isinstance(seen[1], StepResult) and seen[1].response.final_answer == "42"
    assert len(seen) == 2 and len(server.seen) == 2
    assert server.seen[0][2]["accept"] == "text/event-stream"


def test_an_error_event_raises_stream_error_with_its_body() -> None:
    error = {"error": {"code": "llm_timeout", "message": "the model took too long", "request_id": "r-9"}}
    with ScriptedServer([events(THOUGHT, ("error", error))]) as server, Client(server.url) as client:
        stream = client.stream_step(STEP_CALL[1])
        assert next(stream) == ThoughtEvent(delta="It is ")
        with pytest.raises(StreamError) as raised:
            next(stream)
    assert (raised.value.code, raised.value.message, raised.value.request_id) == (
        "llm_timeout",
        "the model took too long",
        "r-9",
    )
    assert len(server.seen) == 1


def test_a_stream_answered_with_json_is_a_bad_response() -> None:
    with (
        ScriptedServer([ok(STEP)]) as server,
        Client(server.url) as client,
        pytest.raises(BadResponse, match="no event stream"),
    ):
        list(client.stream_step(STEP_CALL[1]))
    assert len(server.seen) == 1
