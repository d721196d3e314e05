"""A tools/call of a tool that only reads, answered without the SDK's per-request machinery.

    POST /mcp/{project}  2026-07-28: MCP-Protocol-Version, Mcp-Method tools/call and Mcp-Name <tool>,
                         once each; Content-Type and Accept JSON; the body exactly {jsonrpc "2.0", id
                         (a number or a string), method "tools/call", params {name, arguments, _meta}},
                         _meta exactly the revision's envelope (its version the header's, the client's
                         capabilities, its info), the tool one that only reads and named in both
                         2025-06-18 / 2025-11-25 after initialize: that version header alone (no
                         session), Accept JSON and SSE, params {name, arguments}, a tool that reads
      -> run_tool (execute_action) -> the result the SDK writes for it on that revision
    anything else (a write, one more field, a header that disagrees, not JSON)
      -> None: the SDK answers it, errors included
A read over MCP is execute_action's core and a JSON-RPC envelope; the SDK's envelope handling (a
session manager, the envelope and result validated as pydantic models, the request context) cost
more than the call itself (bench/mcp_overhead.py, docs/performance.md). Tests hold both answers equal.
"""

import json
from typing import Any

from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY
from starlette.requests import Request

from reactstep.service.mcp.results import Caller, ToolCall
from reactstep.service.mcp.server import run_tool

MODERN = "2026-07-28"
HANDSHAKE = ("2025-06-18", "2025-11-25")  # the 2025 revisions with structured results
ROUTING = (b"mcp-protocol-version", b"mcp-method", b"mcp-name")
ENVELOPE = {PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY}
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"


class ReadCalls:
    """Answers the plain reads of both eras; says None to every other request."""

    def __init__(self, tools: list[dict[str, Any]], call: ToolCall, server_info: dict[str, Any]) -> None:
        self._reads = frozenset(entry["name"] for entry in tools if not entry["requires_approval"])
        self._call = call
        self._server_info = server_info  # the SDK's serverInfo stamp of the same server

    async def answer(self, request: Request, body: bytes, caller: Caller) -> bytes | None:
        """The JSON of the answer to a plain read, or None for the SDK to answer."""
        version = _plain_version(request, len(body))
        found = self._plain_read(body, version, request.headers.get("mcp-name")) if version else None
        if found is None:
            return None
        request_id, name, arguments = found
        result = await run_tool(self._call, caller, name, arguments)
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        if version == MODERN:
            dumped["_meta"] = {SERVER_INFO_KEY: dict(self._server_info)}
        else:
            del dumped["resultType"]  # 2026-07-28 only
        return json.dumps(
            {"jsonrpc": "2.0", "id": request_id, "result": dumped}, separators=(",", ":")
        ).encode()

    def _plain_read(
        self, body: bytes, version: str, named: str | None
    ) -> tuple[Any, str, dict[str, Any]] | None:
        """(id, tool, arguments) of a plain tools/call of a read in `body`, else None."""
        try:
            message = json.loads(body)
        except ValueError:
            return None
        if not isinstance(message, dict) or set(message) != {"jsonrpc", "id", "method", "params"}:
            return None
        request_id, params = message["id"], message["params"]
        if message["jsonrpc"] != "2.0" or message["method"] != "tools/call" or not isinstance(params, dict):
            return None
        if isinstance(request_id, bool) or not isinstance(request_id, int | str):
            return None
        name, arguments = params.get("name"), params.get("arguments", {})
        fields = {"name", "arguments", "_meta"} if version == MODERN else {"name", "arguments"}
        if not set(params) <= fields or not isinstance(name, str) or not isinstance(arguments, dict):
            return None
        if name not in self._reads or (
            version == MODERN and (name != named or not _envelope(params.get("_meta")))
        ):
            return None
        return request_id, name, arguments


def _plain_version(request: Request, size: int) -> str | None:
    """The revision of a request whose headers the SDK would take as they are, else None."""
    headers = request.headers
    version = headers.get("mcp-protocol-version")
    routing = sorted(
        name for name, _ in request.scope["headers"] if name in ROUTING or name == b"mcp-session-id"
    )
    if version == MODERN:
        plain = routing == sorted(ROUTING) and headers.get("mcp-method") == "tools/call"
        accepted = check_accept_headers(request)[0]
    else:  # a 2025 client after initialize, stateless: the version header alone
        plain = version in HANDSHAKE and routing == [b"mcp-protocol-version"]
        accepted = all(check_accept_headers(request))
    json_sent = headers.get("content-type", "").lower().startswith("application/json")
    return version if plain and accepted and json_sent and size <= DEFAULT_MAX_REQUEST_BODY_SIZE else None


def _envelope(meta: Any) -> bool:
    """Whether `meta` is exactly the revision's envelope, in the shapes the SDK accepts."""
    if (
        not isinstance(meta, dict)
        or not set(meta) <= ENVELOPE
        or meta.get(PROTOCOL_VERSION_META_KEY) != MODERN
    ):
        return False
    capabilities, info = meta.get(CLIENT_CAPABILITIES_META_KEY), meta.get(CLIENT_INFO_META_KEY)
    if info is not None and not (_texts(info) and {"name", "version"} <= set(info)):
        return False
    return _objects(capabilities)


def _objects(value: Any) -> bool:
    """An object whose values are objects (client capabilities as the SDK reads them)."""
    return isinstance(value, dict) and all(isinstance(entry, dict) for entry in value.values())


def _texts(value: Any) -> bool:
    """An object whose values are strings (client info without icons)."""
    return isinstance(value, dict) and all(isinstance(entry, str) for entry in value.values())
