"""Plain reads (2026-07-28, and 2025 after initialize) answered without the SDK's per-request machinery
(service/mcp/read_calls.py): the same answer as the SDK's, on the wire at 127.0.0.1; anything not plain
is the SDK's to answer."""

import json
from typing import Any

import pytest
from starlette.requests import Request

from reactstep.service.http.serving import BackgroundServer
from reactstep.service.mcp.local import local_caller, local_tools
from reactstep.service.mcp.read_calls import ReadCalls
from reactstep.service.mcp.results import Caller
from reactstep.service.runtime import build_runtime
from reactstep.service.settings import Settings
from tests.service.mcp.served import DEMO_KEY, bearer, post_raw

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
READS = [
    ("read_file", {"file_path": "src/app.py"}),
    ("grep", {"pattern": "upper"}),
    ("list_files", {"path": "src"}),
    ("read_file", {"file_path": "no/such.py"}),  # an error result
    ("read_file", {"file_path": 3}),  # arguments the tool refuses
]


def call(
    name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None, ident: Any = 7
) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments, "_meta": meta or META}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


def headers_for(name: str) -> dict[str, str]:
    return {
        **bearer(DEMO_KEY),
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": name,
    }


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25", "2025-06-18"])
@pytest.mark.parametrize(("name", "arguments"), READS, ids=[str(n) for n in range(len(READS))])
def test_a_plain_read_answers_what_the_sdk_answers(
    server: BackgroundServer, version: str, name: str, arguments: dict[str, Any]
) -> None:
    if version == "2026-07-28":
        headers = headers_for(name)
        plain_call, sdk_call = call(name, arguments), call(name, arguments, {**META, "progressToken": "p"})
    else:  # a 2025 client after initialize: no _meta, the version header alone
        headers = {**bearer(DEMO_KEY), "mcp-protocol-version": version}
        plain_call = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        sdk_call = {**plain_call, "params": {**plain_call["params"], "_meta": {"progressToken": "p"}}}
    # a progress token is one field more than plain: the SDK answers that one (in JSON, without progress)
    plain = post_raw(server, "/mcp/demo", plain_call, headers)
    by_sdk = post_raw(server, "/mcp/demo", sdk_call, headers)
    assert (plain.status_code, plain.headers["content-type"]) == (200, "application/json")
    assert (by_sdk.status_code, by_sdk.headers["content-type"]) == (200, "application/json")
    assert plain.json() == by_sdk.json()
    assert ("_meta" in plain.json()["result"], "resultType" in plain.json()["result"]) == (
        (True, True) if version == "2026-07-28" else (False, False)
    )


def scope_of(headers: dict[str, str]) -> dict[str, Any]:
    encoded = [(name.encode(), value.encode()) for name, value in headers.items()]
    return {"type": "http", "method": "POST", "path": "/mcp/demo", "headers": encoded, "query_string": b""}


PLAIN_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "read_file",
}
PLAIN = call("read_file", {"file_path": "src/app.py"})
LEGACY_HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
}
LEGACY_CALL: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "read_file", "arguments": {"file_path": "src/app.py"}},
}
NOT_PLAIN = [
    ("a write", call("edit_file", {"path": "a", "content": "b"}), {**PLAIN_HEADERS, "mcp-name": "edit_file"}),
    ("another name in the header", PLAIN, {**PLAIN_HEADERS, "mcp-name": "grep"}),
    ("a 2025 version", PLAIN, {**PLAIN_HEADERS, "mcp-protocol-version": "2025-11-25"}),
    ("no name header", PLAIN, {key: value for key, value in PLAIN_HEADERS.items() if key != "mcp-name"}),
    ("not JSON accepted", PLAIN, {**PLAIN_HEADERS, "accept": "text/event-stream"}),
    ("not JSON sent", PLAIN, {**PLAIN_HEADERS, "content-type": "text/plain"}),
    ("an id that is a boolean", call("read_file", {}, ident=True), PLAIN_HEADERS),
    ("one more field", {**PLAIN, "extra": 1}, PLAIN_HEADERS),
    (
        "another version in _meta",
        call("read_file", {}, {**META, "io.modelcontextprotocol/protocolVersion": "x"}),
        PLAIN_HEADERS,
    ),
    (
        "client info without a version",
        call("read_file", {}, {**META, "io.modelcontextprotocol/clientInfo": {"name": "a"}}),
        PLAIN_HEADERS,
    ),
    (
        "a capability that is no object",
        call("read_file", {}, {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": 1}}),
        PLAIN_HEADERS,
    ),
    ("arguments that are no object", call("read_file", [], None), PLAIN_HEADERS),  # type: ignore[arg-type]
    ("2025 with a session", LEGACY_CALL, {**LEGACY_HEADERS, "mcp-session-id": "s"}),
    ("2025 with _meta", {**LEGACY_CALL, "params": {**LEGACY_CALL["params"], "_meta": {}}}, LEGACY_HEADERS),
    ("2025-03-26", LEGACY_CALL, {**LEGACY_HEADERS, "mcp-protocol-version": "2025-03-26"}),
    (
        "2025 without a version",
        LEGACY_CALL,
        {k: v for k, v in LEGACY_HEADERS.items() if k != "mcp-protocol-version"},
    ),
    ("2025 accepting JSON only", LEGACY_CALL, {**LEGACY_HEADERS, "accept": "application/json"}),
    ("2025 a write", {**LEGACY_CALL, "params": {"name": "edit_file", "arguments": {}}}, LEGACY_HEADERS),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("why", "message", "headers"), NOT_PLAIN, ids=[case[0] for case in NOT_PLAIN])
async def test_anything_not_plain_is_left_to_the_sdk(
    tmp_path: Any, why: str, message: dict[str, Any], headers: dict[str, str]
) -> None:
    runtime = build_runtime(Settings(data_dir=tmp_path))
    try:
        tools = local_tools(runtime)
        reads = ReadCalls(tools, local_caller(runtime), {"name": "reactstep", "version": "0"})
        caller = Caller("demo", "dev-mode")
        assert (
            await reads.answer(Request(scope_of(PLAIN_HEADERS)), json.dumps(PLAIN).encode(), caller)
            is not None
        )
        assert await reads.answer(Request(scope_of(headers)), json.dumps(message).encode(), caller) is None
        duplicated = {**scope_of(PLAIN_HEADERS)}
        duplicated["headers"] = [*duplicated["headers"], (b"mcp-method", b"tools/call")]
        assert await reads.answer(Request(duplicated), json.dumps(PLAIN).encode(), caller) is None
    finally:
        runtime.vectors.close()
