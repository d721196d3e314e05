"""/mcp/{project_id}: who calls, from which page, for which project; then the SDK's streamable HTTP.

    POST /mcp/{project_id}
      AuthMiddleware        no key, or a wrong one: 401 unauthorized (before any MCP handling)
      AdmissionMiddleware   the body whole and bounded (413, 408), then a slot (503 overloaded)
      mcp_endpoint          a browser Origin not allowed: 403 forbidden_origin
                            a project outside the key's globs: 403 forbidden_project
                            a body declared over REACTSTEP_MAX_BODY_BYTES: 413 payload_too_large
                            arrays and objects nested too deep: 400 json_too_deep
                            more values than any call needs: 413 payload_too_large
                            bytes that are not UTF-8: 400 invalid_json
      read_call             a plain tools/call of a tool that reads (read_calls.py): answered here,
                            its project checked as execute_action checks it (by the tool: one store
                            request per read_file; a missing project is the call's error result)
                            no such project: 404 project_not_found, except for a 2026-07-28
                            tools/call (its Mcp-Method header the SDK holds to its body), which checks
                            it in the call as well
      HttpTransport         anything else: JSON-RPC, one message per POST (a batch is 400), stateless
GET and DELETE are 405 (the route is POST only): without sessions there is nothing to stream or end.
"""

from collections import deque

from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from reactstep.service.errors import Forbidden, InvalidJSON
from reactstep.service.http.auth import authorize_project
from reactstep.service.http.bodies import check_json_shape, received_body
from reactstep.service.mcp.local import local_caller, local_tools
from reactstep.service.mcp.read_calls import ReadCalls
from reactstep.service.mcp.results import Caller
from reactstep.service.mcp.server import build_server
from reactstep.service.mcp.transports import HttpTransport, checks_its_project
from reactstep.service.runtime import Runtime
from reactstep.service.schemas import check_project_id
from reactstep.service.workspace.projects import require_project_from_loop

SDK_MEDIA_TYPES = b"application/json, text/event-stream"


def open_mcp(runtime: Runtime) -> HttpTransport:
    """The MCP server over the runtime's registry, on streamable HTTP; the project is the URL's."""
    tools, call = local_tools(runtime), local_caller(runtime)
    server = build_server(tools, call)
    reads = ReadCalls(tools, call, server.server_info_stamp)
    return HttpTransport(server, json_response=True, reads=reads)  # one JSON body per POST


class McpEndpoint:
    """The ASGI app of the /mcp/{project_id} route."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        runtime: Runtime = request.app.state.runtime
        check_origin(request.headers.get("origin"), runtime.settings.cors_origins)
        project_id = authorize_project(request.scope, check_project_id(request.path_params["project_id"]))
        body = received_body(scope)
        await check_json_shape(body)  # too many values, too deep; not JSON: the SDK's
        check_text(body)  # but not bytes that are no text: the SDK fails on them (500)
        transport: HttpTransport = request.app.state.mcp
        scope = accepting_any(scope)
        read = await transport.read_call(Request(scope), body, Caller(project_id, scope["state"]["owner"]))
        if read is None:
            if not checks_its_project(request.headers):
                await require_project_from_loop(project_id, runtime)
            await transport.handle(scope, _replay(body, receive), send)
            return
        headers = [
            (b"content-length", str(len(read)).encode("latin-1")),
            (b"content-type", b"application/json"),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": read})


mcp_endpoint = McpEndpoint()


def check_origin(origin: str | None, allowed: list[str]) -> None:
    """A browser's request from a page not on the list is refused (DNS rebinding, cross-site calls)."""
    if origin is None:
        return  # not a browser: IDE agents and CLIs send no Origin
    if "*" in allowed:
        return
    if origin.rstrip("/").lower() not in {entry.rstrip("/").lower() for entry in allowed}:
        raise Forbidden(
            f"requests from the page origin {origin!r} may not call MCP (REACTSTEP_CORS_ORIGINS)",
            code="forbidden_origin",
        )


def check_text(body: bytes) -> None:
    """Refuse a body that is not UTF-8, so not JSON (400 invalid_json)."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidJSON(f"the request body is not UTF-8 text: {exc.reason} at byte {exc.start}") from exc


def accepting_any(scope: Scope) -> Scope:
    """The scope with the media types the SDK looks for named in Accept when the client accepts any
    answer: no Accept at all (RFC 9110 12.5.1) or */* (curl's). The SDK would answer those 406."""
    headers = [(name, value) for name, value in scope["headers"] if name != b"accept"]
    accept = b", ".join(value for name, value in scope["headers"] if name == b"accept")
    if accept and b"*/*" not in accept:
        return scope
    named = SDK_MEDIA_TYPES + (b", " + accept if accept else b"")
    return {**scope, "headers": [*headers, (b"accept", named)]}


def _replay(body: bytes, receive: Receive) -> Receive:
    """`receive` for the SDK: the body read here, then the client's own (a disconnect)."""
    pending: deque[Message] = deque([{"type": "http.request", "body": body, "more_body": False}])

    async def replayed() -> Message:
        return pending.popleft() if pending else await receive()

    return replayed
