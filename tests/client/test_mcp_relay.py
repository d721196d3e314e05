"""The `reactstep mcp` relay against a real HTTP server on 127.0.0.1: a call that takes long does not
hold back the messages read after it, and every message read is answered before the relay ends."""

import io
import json
import threading
from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from reactstep.client.cli.mcp_command import McpRelay
from reactstep.service.http.serving import BackgroundServer

WAIT_S = 20.0  # the slow call's longest wait: far beyond the test's own run, short of a hung suite


class Output(io.BytesIO):
    """The relay's stdout: each written answer in order; `fast_written` once the fast one is out."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: list[dict[str, object]] = []
        self.fast_written = threading.Event()

    def write(self, data: bytes) -> int:  # type: ignore[override]
        answer = json.loads(data)
        self.answers.append(answer)
        if answer.get("id") == "fast":
            self.fast_written.set()
        return len(data)


@pytest.fixture
def output() -> Output:
    return Output()


@pytest.fixture
def upstream(output: Output) -> Iterator[BackgroundServer]:
    """/mcp/demo answering each request with its method; `slow` answers once `fast` was relayed."""

    async def mcp(request: Request) -> Response:
        message = await request.json()
        if "id" not in message:
            return Response(status_code=202)
        if message["method"] == "slow":
            await run_in_threadpool(output.fast_written.wait, WAIT_S)
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {"ran": message["method"]}})

    with BackgroundServer(Starlette(routes=[Route("/mcp/demo", mcp, methods=["POST"])])) as running:
        yield running


def line(message: dict[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_a_long_call_does_not_hold_back_the_next(upstream: BackgroundServer, output: Output) -> None:
    source = io.BytesIO(
        line({"jsonrpc": "2.0", "id": "slow", "method": "slow"})
        + line({"jsonrpc": "2.0", "method": "notifications/progress"})
        + b"\n"
        + line({"jsonrpc": "2.0", "id": "fast", "method": "fast"})
    )
    McpRelay(upstream.url, "demo", None).run(source, output)
    assert output.answers == [
        {"jsonrpc": "2.0", "id": "fast", "result": {"ran": "fast"}},
        {"jsonrpc": "2.0", "id": "slow", "result": {"ran": "slow"}},
    ]


def test_every_message_read_is_answered_before_the_relay_ends(
    upstream: BackgroundServer, output: Output
) -> None:
    source = io.BytesIO(b"".join(line({"jsonrpc": "2.0", "id": n, "method": f"m{n}"}) for n in range(30)))
    McpRelay(upstream.url, "demo", None).run(source, output)
    assert sorted(answer["id"] for answer in output.answers) == list(range(30))  # type: ignore[type-var]


def test_a_line_that_is_not_json_is_answered_with_an_error(
    upstream: BackgroundServer, output: Output
) -> None:
    McpRelay(upstream.url, "demo", None).run(io.BytesIO(b"{not json\n"), output)
    assert output.answers == [
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32603, "message": "the relay read a line that is not JSON"},
        }
    ]
