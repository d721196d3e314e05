"""The official MCP SDK client against the real app on uvicorn at 127.0.0.1: tools, resources and prompts
at /mcp/{project_id} on 2026-07-28 and on the initialize handshake, answering as execute_action does."""

import asyncio
from typing import Any

import httpx
import pytest

from reactstep.service.http.serving import BackgroundServer
from tests.service.mcp.served import (
    DEMO_KEY,
    LEGACY,
    MODERN,
    Person,
    bearer,
    execute_action,
    mcp_session,
    post_raw,
    rpc,
    texts,
)

pytestmark = pytest.mark.anyio
MODES = [MODERN, LEGACY]


@pytest.mark.parametrize(("mode", "asks"), [(MODERN, True), (MODERN, False), (LEGACY, False)])
async def test_tools_are_the_rest_manifest_with_annotations_and_output(
    server: BackgroundServer, mode: str, asks: bool
) -> None:
    """A write takes approval_token only where the client cannot ask (it declared no elicitation)."""
    manifest = httpx.get(f"{server.url}/api/agent/tools", headers=bearer(DEMO_KEY)).json()["tools"]
    person = Person() if asks else None
    async with mcp_session(f"{server.url}/mcp/demo", mode=mode, elicitation=person) as client:
        tools = (await client.list_tools()).tools
        again = (await client.list_tools(cache_mode="refresh")).tools
    assert [tool.name for tool in tools] == [entry["name"] for entry in manifest]
    assert [tool.name for tool in again] == [tool.name for tool in tools]  # a fixed order
    for tool, entry in zip(tools, manifest, strict=True):
        assert tool.description == entry["description"]
        expected = entry["parameters"]
        if entry["requires_approval"] and not asks:  # a client that cannot ask: the token flow
            properties = {
                **expected["properties"],
                "approval_token": tool.input_schema["properties"]["approval_token"],
            }
            expected = {**expected, "properties": properties}
        assert tool.input_schema == expected
        assert tool.output_schema is not None
        assert tool.output_schema["required"] == ["observation"]
        assert ("approval" in tool.output_schema["properties"]) is entry["requires_approval"]
        assert tool.annotations is not None
        hints = (
            tool.annotations.read_only_hint,
            tool.annotations.destructive_hint,
            tool.annotations.idempotent_hint,
        )
        assert hints == (entry["read_only"], not entry["read_only"], True), tool.name


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {**bearer(DEMO_KEY), "mcp-protocol-version": MODERN, "mcp-method": method}
    return {**headers, "mcp-name": name} if name else headers


def test_discover_and_the_lists_cache_hints_on_the_wire(server: BackgroundServer) -> None:
    discover = post_raw(
        server, "/mcp/demo", rpc("server/discover", {"_meta": MODERN_META}), modern_headers("server/discover")
    )
    assert discover.status_code == 200, discover.text
    found = discover.json()["result"]
    assert found["supportedVersions"] == [MODERN]
    assert sorted(found["capabilities"]) == ["prompts", "resources", "tools"]
    for method in ("tools/list", "prompts/list", "resources/list"):
        listed = post_raw(server, "/mcp/demo", rpc(method, {"_meta": MODERN_META}), modern_headers(method))
        result = listed.json()["result"]
        assert (result["ttlMs"], result["cacheScope"], result["resultType"]) == (
            300_000,
            "private",
            "complete",
        )
    mismatch = post_raw(
        server,
        "/mcp/demo",
        rpc(
            "tools/call",
            {"_meta": MODERN_META, "name": "read_file", "arguments": {"file_path": "src/app.py"}},
        ),
        modern_headers("tools/call", "grep"),  # Mcp-Name names another tool than the body
    )
    assert (mismatch.status_code, mismatch.json()["error"]["message"]) == (
        400,
        "mcp-name header does not match the request body's 'name' parameter",
    )


def test_a_2025_06_18_client_keeps_the_handshake(server: BackgroundServer) -> None:
    """A client of the 2025-06-18 revision, as it speaks on the wire: initialize, then stateless calls."""
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"},
    }
    initialized = post_raw(server, "/mcp/demo", rpc("initialize", hello), bearer(DEMO_KEY))
    assert initialized.json()["result"]["protocolVersion"] == "2025-06-18"
    version = {**bearer(DEMO_KEY), "mcp-protocol-version": "2025-06-18"}
    tools = post_raw(server, "/mcp/demo", rpc("tools/list", {}, 2), version).json()["result"]["tools"]
    edit = next(tool for tool in tools if tool["name"] == "edit_file")
    assert "approval_token" in edit["inputSchema"]["properties"]  # it cannot be asked: the token flow
    read = post_raw(
        server,
        "/mcp/demo",
        rpc("tools/call", {"name": "read_file", "arguments": {"file_path": "src/app.py"}}, 3),
        version,
    ).json()["result"]
    observation = execute_action(server, "read_file", {"file_path": "src/app.py"})["observation"]
    assert read["content"] == [{"type": "text", "text": observation}]
    assert (read["structuredContent"], read["isError"]) == ({"observation": observation}, False)


READS = [
    ("read_file", {"file_path": "src/app.py"}, "return 42"),
    ("grep", {"pattern": "upper"}, "src/util/strings.py"),
    ("code_search", {"query": "shout a text in capitals"}, "src/util/strings.py"),
    ("find_definition", {"symbol": "shout"}, "src/util/strings.py"),
    ("list_files", {"path": "src"}, "app.py"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("tool", "args", "seen"), READS, ids=[read[0] for read in READS])
async def test_a_read_tool_answers_what_execute_action_answers(
    server: BackgroundServer, mode: str, tool: str, args: dict[str, Any], seen: str
) -> None:
    rest = execute_action(server, tool, args)
    async with mcp_session(f"{server.url}/mcp/demo", mode=mode) as client:
        result = await client.call_tool(tool, args)
    assert (texts(result), result.is_error) == ([rest["observation"]], False)
    assert result.structured_content == {"observation": rest["observation"]}
    assert seen in rest["observation"]


BAD_CALLS = [
    ("nope", {}, "Error: unknown tool 'nope'. Available tools: "),
    ("read_file", {"file_path": 3}, "Error: read_file: argument 'file_path'"),
    ("read_file", {}, "Error: read_file: argument 'file_path': Field required"),
    ("read_file", {f"a{n}": n for n in range(65)}, "Error: read_file: the call is not valid: "),
    ("read_file", {"file_path": "../other/secret.txt"}, "Error: "),
    (
        "grep",
        {"pattern": "x" * 1001},
        "Error: grep: argument 'pattern': String should have at most 1000 char",
    ),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("tool", "args", "start"), BAD_CALLS, ids=[str(n) for n in range(len(BAD_CALLS))])
async def test_a_bad_call_is_an_error_result_and_the_server_stays_up(
    server: BackgroundServer, mode: str, tool: str, args: dict[str, Any], start: str
) -> None:
    async with mcp_session(f"{server.url}/mcp/demo", mode=mode) as client:
        result = await client.call_tool(tool, args)
        assert result.is_error is True
        assert texts(result)[0].startswith(start), texts(result)
        assert (await client.call_tool("read_file", {"file_path": "src/app.py"})).is_error is False


@pytest.mark.parametrize("mode", MODES)
async def test_the_overview_is_a_resource(server: BackgroundServer, mode: str) -> None:
    rest = execute_action(server, "project_overview", {})["observation"]
    async with mcp_session(f"{server.url}/mcp/demo", mode=mode) as client:
        resources = (await client.list_resources()).resources
        assert [str(resource.uri) for resource in resources] == ["reactstep://projects/demo/overview"]
        contents = (await client.read_resource(resources[0].uri)).contents
    assert [(content.mime_type, getattr(content, "text", None)) for content in contents] == [
        ("text/markdown", rest)
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_the_react_prompt_is_the_system_prompt_and_the_question(
    server: BackgroundServer, mode: str
) -> None:
    async with mcp_session(f"{server.url}/mcp/demo", mode=mode) as client:
        prompts = (await client.list_prompts()).prompts
        got = await client.get_prompt("react", {"question": "Where is main defined?"})
    assert [(prompt.name, [a.name for a in prompt.arguments or []]) for prompt in prompts] == [
        ("react", ["question"])
    ]
    [message] = got.messages
    assert message.role == "user" and message.content.type == "text"
    assert message.content.text.startswith("You are a coding agent.")
    assert message.content.text.endswith("\n\nQuestion: Where is main defined?")
    assert "<observation>" in message.content.text


@pytest.mark.parametrize("mode", MODES)
async def test_many_calls_at_once_all_answer(server: BackgroundServer, mode: str) -> None:
    async with mcp_session(f"{server.url}/mcp/demo", mode=mode) as client:
        calls = [client.call_tool("read_file", {"file_path": "src/app.py"}) for _ in range(20)]
        results = await asyncio.gather(*calls)
    assert {(texts(result)[0].splitlines()[-1], result.is_error) for result in results} == {
        ("    2 |     return 42", False)
    }
