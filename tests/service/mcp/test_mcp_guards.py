"""What is refused at /mcp/{project_id} before or by the SDK, as HTTP errors: keys, projects, page
origins, batches, sizes and nesting, methods; and the server stays up."""

import httpx
import pytest
from mcp import MCPError

from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from tests.service.mcp.served import (
    ALL_KEY,
    APP_PY,
    DEMO_KEY,
    LEGACY,
    MODERN,
    WRITE_ARGS,
    bearer,
    execute_action,
    mcp_session,
    post_raw,
    rpc,
)

pytestmark = pytest.mark.anyio


INITIALIZE = rpc(
    "initialize",
    {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
)


@pytest.mark.parametrize(
    ("path", "headers", "status", "code"),
    [
        ("/mcp/demo", {}, 401, "unauthorized"),
        ("/mcp/demo", bearer("rsk_not-a-key-of-this-server"), 401, "unauthorized"),
        ("/mcp/other", bearer(DEMO_KEY), 403, "forbidden_project"),
        ("/mcp/nope", bearer(ALL_KEY), 404, "project_not_found"),
        ("/mcp/..", bearer(ALL_KEY), 404, "not_found"),
        ("/mcp/demo", {**bearer(DEMO_KEY), "origin": "https://evil.example"}, 403, "forbidden_origin"),
    ],
)
def test_who_and_which_project_are_http_errors_before_mcp(
    server: BackgroundServer, path: str, headers: dict[str, str], status: int, code: str
) -> None:
    response = post_raw(server, path, INITIALIZE, headers)
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    if status == 401:
        assert response.headers["www-authenticate"] == 'Bearer realm="reactstep"'


def test_an_allowed_origin_and_another_projects_key_reach_mcp(server: BackgroundServer) -> None:
    allowed = post_raw(server, "/mcp/demo", INITIALIZE, {**bearer(DEMO_KEY), "origin": "https://ide.example"})
    assert allowed.status_code == 200
    other = post_raw(
        server,
        "/mcp/other",
        rpc("tools/call", {"name": "read_file", "arguments": {"file_path": "secret.txt"}}),
        bearer(ALL_KEY),
    )
    assert other.status_code == 200
    assert "another tenant" in other.text


def innermost(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


@pytest.mark.parametrize("mode", [MODERN, LEGACY])
async def test_the_sdk_client_is_refused_another_project(server: BackgroundServer, mode: str) -> None:
    """The SDK's client raises on the 403 (the status itself is checked on the wire above)."""
    with pytest.raises(BaseException) as refused:
        async with mcp_session(f"{server.url}/mcp/other", mode=mode) as client:
            await client.list_tools()
    assert isinstance(innermost(refused.value), MCPError)


def test_a_batch_oversize_or_deep_body_is_refused_and_nothing_is_written(server: BackgroundServer) -> None:
    token = execute_action(server, "replace_in_file", WRITE_ARGS)["approval"]["token"]
    call = rpc(
        "tools/call", {"name": "replace_in_file", "arguments": {**WRITE_ARGS, "approval_token": token}}
    )
    batch = [{**call, "id": n} for n in range(50)]
    refused = post_raw(server, "/mcp/demo", batch, bearer(DEMO_KEY))
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == -32602  # JSON-RPC: invalid params (one message per POST)
    limit = Settings.model_fields["max_body_bytes"].default
    big = rpc("tools/call", {"name": "grep", "arguments": {"pattern": "x" * limit}})
    too_big = post_raw(server, "/mcp/demo", big, bearer(DEMO_KEY))
    assert (too_big.status_code, too_big.json()["error"]["code"]) == (413, "payload_too_large")
    deep = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"a": ' + b"[" * 5000 + b"]" * 5000 + b"}}"
    )
    too_deep = post_raw(server, "/mcp/demo", deep, bearer(DEMO_KEY))
    assert (too_deep.status_code, too_deep.json()["error"]["code"]) == (400, "json_too_deep")
    assert (
        httpx.get(f"{server.url}/api/projects/demo/files/src/app.py", headers=bearer(DEMO_KEY)).content
        == APP_PY
    )
    assert post_raw(server, "/mcp/demo", INITIALIZE, bearer(DEMO_KEY)).status_code == 200  # still up


def test_get_and_delete_are_not_offered(server: BackgroundServer) -> None:
    for method in ("GET", "DELETE"):
        response = httpx.request(method, f"{server.url}/mcp/demo", headers=bearer(DEMO_KEY))
        assert (response.status_code, response.json()["error"]["code"]) == (405, "method_not_allowed")


def test_a_notification_is_accepted_with_no_answer(server: BackgroundServer) -> None:
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    response = post_raw(server, "/mcp/demo", notification, bearer(DEMO_KEY))
    assert (response.status_code, response.content) == (202, b"")


def test_a_tools_call_on_a_missing_project_says_so_in_its_result(server: BackgroundServer) -> None:
    """A 2026-07-28 tools/call, or a plain read of a 2025 client, checks its project as execute_action
    checks it: by the tool, not by a store read first."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    call = rpc("tools/call", {"_meta": meta, "name": "read_file", "arguments": {"file_path": "a.py"}})
    headers = {
        **bearer(ALL_KEY),
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "read_file",
    }
    answer = post_raw(server, "/mcp/nope", call, headers)
    assert answer.status_code == 200
    result = answer.json()["result"]
    assert (result["isError"], result["content"][0]["text"]) == (
        True,
        "Error: project_not_found: project 'nope' does not exist; create it with PUT /api/projects/nope",
    )
    lying = post_raw(server, "/mcp/nope", call, {**headers, "mcp-method": "tools/list"})
    assert lying.status_code == 404  # a header that names another method is checked as that method
    old = post_raw(server, "/mcp/nope", call, {**headers, "mcp-protocol-version": "2025-11-25"})
    assert old.status_code == 404  # the 2025 transport does not hold Mcp-Method to the body
    plain_2025 = rpc("tools/call", {"name": "read_file", "arguments": {"file_path": "a.py"}})
    read = post_raw(
        server, "/mcp/nope", plain_2025, {**bearer(ALL_KEY), "mcp-protocol-version": "2025-11-25"}
    )
    assert (read.status_code, read.json()["result"]["content"][0]["text"]) == (
        200,
        result["content"][0]["text"],
    )
