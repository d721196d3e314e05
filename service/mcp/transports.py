"""The MCP server on the wire: streamable HTTP without sessions, and stdio."""

from io import TextIOWrapper
from typing import IO, Any

import anyio
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Receive, Scope, Send


class HttpTransport:
    """Streamable HTTP without sessions: every request stands alone, so any replica answers it.

    Each request gets a session manager and task group of its own that end with it: nothing outlives
    a request, so the app needs no MCP lifespan (and stays usable by servers and test clients that
    run the lifespan more than once, or never). A request with MCP-Protocol-Version 2026-07-28 is the
    SDK's single exchange; an older one (or none) its stateless transport for the 2025 revisions.
    """

    def __init__(self, server: Server[Any], json_response: bool) -> None:
        self._server = server
        self._json_response = json_response

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one MCP request whose caller and project were checked already."""
        sessions = StreamableHTTPSessionManager(
            app=self._server, stateless=True, json_response=self._json_response
        )
        async with sessions.run():
            await sessions.handle_request(scope, receive, send)


async def serve_stdio(server: Server[Any], output: IO[bytes]) -> None:
    """Serve MCP over stdin and `output` (this process's stdout, kept for the protocol alone)."""
    stdout = anyio.wrap_file(TextIOWrapper(output, encoding="utf-8"))
    async with stdio_server(stdout=stdout) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(server: Server[Any], output: IO[bytes]) -> None:
    """serve_stdio on a new event loop, until the client closes stdin."""
    anyio.run(serve_stdio, server, output)
