"""The app on uvicorn at 127.0.0.1 and the official MCP SDK client for it, shared by the MCP tests."""

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import httpx2  # the SDK's HTTP client takes an httpx2 client for its headers
from mcp import Client
from mcp.client.session import ElicitationFnT
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, ElicitResult, TextContent

from reactstep.service.http.serving import BackgroundServer

DEMO_KEY = "rsk_mcp-demo-key-0123456789"
ALL_KEY = "rsk_mcp-every-project-key-0123"
APP_PY = b"def main():\n    return 42\n"
WRITE_ARGS = {"path": "src/app.py", "find": "return 42", "replace": "return 43"}


def bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


MODERN = "2026-07-28"
LEGACY = "legacy"  # the SDK's initialize handshake: 2025-11-25


@asynccontextmanager
async def mcp_session(
    url: str, key: str = DEMO_KEY, mode: str = MODERN, elicitation: ElicitationFnT | None = None
) -> AsyncIterator[Client]:
    """The SDK's client over streamable HTTP: 2026-07-28 by default, or the initialize handshake."""
    async with (
        httpx2.AsyncClient(headers=bearer(key), timeout=60) as http,
        Client(
            streamable_http_client(url, http_client=http), mode=mode, elicitation_callback=elicitation
        ) as client,
    ):
        yield client


class Person:
    """The person behind the client: answers each question with `decision`, and keeps the questions."""

    def __init__(self, decision: str = "approve") -> None:
        self.decision = decision
        self.questions: list[str] = []

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        self.questions.append(params.message)
        return ElicitResult(action="accept", content={"decision": self.decision})


def execute_action(server: BackgroundServer, tool: str, args: dict[str, Any], **extra: Any) -> dict[str, Any]:
    body = {"project_id": "demo", "session_id": "rest", "tool_name": tool, "tool_args": args, **extra}
    response = httpx.post(f"{server.url}/api/agent/execute_action", json=body, headers=bearer(DEMO_KEY))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


def rpc(method: str, params: dict[str, Any], ident: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}


def post_raw(server: BackgroundServer, path: str, body: Any, headers: dict[str, str]) -> httpx.Response:
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(f"{server.url}{path}", content=content, headers={**accept, **headers}, timeout=30)
