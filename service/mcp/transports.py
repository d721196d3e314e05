"""The MCP server on the wire: streamable HTTP without sessions, and stdio."""

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from io import TextIOWrapper
from typing import IO, Any

import anyio
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from reactstep.service.mcp.read_calls import ReadCalls
from reactstep.service.mcp.results import Caller


class HttpTransport:
    """Streamable HTTP without sessions: every request stands alone, so any replica answers it.

    A 2026-07-28 request (MCP-Protocol-Version) is the SDK's single exchange, run inline in the
    request's own task: while the app's lifespan runs (`serving`), one session manager answers them
    all. An older revision's request (or one without the header) runs the SDK's stateless transport
    in a task group of its own, so a manager and task group per request that end with it: the
    handler's task then starts in the request's context (its log line), and an app whose lifespan
    never ran (or runs more than once) answers all the same.
    """

    def __init__(self, server: Server[Any], json_response: bool, reads: ReadCalls) -> None:
        self._server = server
        self._json_response = json_response
        self._reads = reads
        self._shared: StreamableHTTPSessionManager | None = None

    async def read_call(self, request: Request, body: bytes, caller: Caller) -> bytes | None:
        """The answer to a plain 2026-07-28 read (read_calls.py), or None for `handle` to answer."""
        return await self._reads.answer(request, body, caller)

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """The shared session manager of 2026-07-28 requests, for the app's lifespan."""
        manager = self._manager()
        async with manager.run():
            self._shared = manager
            try:
                yield
            finally:
                self._shared = None

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one MCP request whose caller and project were checked already."""
        if self._shared is not None and _protocol_version(scope) in MODERN_PROTOCOL_VERSIONS:
            await self._shared.handle_request(scope, receive, send)
            return
        sessions = self._manager()
        async with sessions.run():
            await sessions.handle_request(scope, receive, send)

    def _manager(self) -> StreamableHTTPSessionManager:
        return StreamableHTTPSessionManager(
            app=self._server, stateless=True, json_response=self._json_response
        )


def checks_its_project(headers: Mapping[str, str]) -> bool:
    """Whether the request is a 2026-07-28 tools/call, which checks its project as execute_action does.

    Its Mcp-Method header is the body's method: the SDK refuses the request (400) when they differ.
    """
    return headers.get("mcp-protocol-version") in MODERN_PROTOCOL_VERSIONS and headers.get("mcp-method") == (
        "tools/call"
    )


def _protocol_version(scope: Scope) -> str | None:
    """The request's MCP-Protocol-Version header."""
    for name, value in scope["headers"]:
        if name == b"mcp-protocol-version":
            return str(value.decode("latin-1"))
    return None


async def serve_stdio(server: Server[Any], output: IO[bytes]) -> None:
    """Serve MCP over stdin and `output` (this process's stdout, kept for the protocol alone)."""
    stdout = anyio.wrap_file(TextIOWrapper(output, encoding="utf-8"))
    async with stdio_server(stdout=stdout) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(server: Server[Any], output: IO[bytes]) -> None:
    """serve_stdio on a new event loop, until the client closes stdin."""
    anyio.run(serve_stdio, server, output)
