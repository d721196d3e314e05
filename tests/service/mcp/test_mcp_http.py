"""The official MCP SDK client against the real app on uvicorn at 127.0.0.1: tools, approvals, resources
and prompts at /mcp/{project_id}, answering as execute_action does."""

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.types import CallToolResult, TextContent

from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from tests.service.mcp.served import (
    APP_PY,
    DEMO_KEY,
    WRITE_ARGS,
    bearer,
    execute_action,
    mcp_session,
    texts,
)

pytestmark = pytest.mark.anyio


async def test_tools_are_the_rest_manifest_with_annotations(server: BackgroundServer) -> None:
    manifest = httpx.get(f"{server.url}/api/agent/tools", headers=bearer(DEMO_KEY)).json()["tools"]
    async with mcp_session(f"{server.url}/mcp/demo") as session:
        tools = (await session.list_tools()).tools
    assert [tool.name for tool in tools] == [entry["name"] for entry in manifest]
    for tool, entry in zip(tools, manifest, strict=True):
        assert tool.description == entry["description"]
        expected = entry["parameters"]
        if entry["requires_approval"]:
            properties = {
                **expected["properties"],
                "approval_token": tool.inputSchema["properties"]["approval_token"],
            }
            expected = {**expected, "properties": properties}
            assert tool.inputSchema["properties"]["approval_token"]["type"] == "string"
        assert tool.inputSchema == expected
        assert tool.annotations is not None
        hints = (
            tool.annotations.readOnlyHint,
            tool.annotations.destructiveHint,
            tool.annotations.idempotentHint,
        )
        assert hints == (entry["read_only"], not entry["read_only"], True), tool.name
    by_name = {tool.name: tool for tool in tools}
    assert by_name["read_file"].annotations.readOnlyHint is True  # type: ignore[union-attr]
    assert by_name["edit_file"].annotations.destructiveHint is True  # type: ignore[union-attr]


READS = [
    ("read_file", {"file_path": "src/app.py"}, "return 42"),
    ("grep", {"pattern": "upper"}, "src/util/strings.py"),
    ("code_search", {"query": "shout a text in capitals"}, "src/util/strings.py"),
    ("find_definition", {"symbol": "shout"}, "src/util/strings.py"),
    ("list_files", {"path": "src"}, "app.py"),
]


@pytest.mark.parametrize(("tool", "args", "seen"), READS, ids=[read[0] for read in READS])
async def test_a_read_tool_answers_what_execute_action_answers(
    server: BackgroundServer, tool: str, args: dict[str, Any], seen: str
) -> None:
    rest = execute_action(server, tool, args)
    async with mcp_session(f"{server.url}/mcp/demo") as session:
        result = await session.call_tool(tool, args)
    assert (texts(result), result.isError) == ([rest["observation"]], False)
    assert seen in rest["observation"]
    assert result.structuredContent is None


async def test_an_approved_edit_end_to_end(server: BackgroundServer) -> None:
    changes = f"{server.url}/api/projects/demo/changes?since=0"
    file_url = f"{server.url}/api/projects/demo/files/src/app.py"
    async with mcp_session(f"{server.url}/mcp/demo") as session:
        preview = await session.call_tool("replace_in_file", WRITE_ARGS)
        assert preview.isError is False
        approval = (preview.structuredContent or {})["approval"]
        assert approval["required"] is True
        assert "-    return 42\n+    return 43" in approval["diff"]
        observation, note = texts(preview)
        assert observation.startswith("Nothing was written yet.")
        assert note.endswith(f'approval_token="{approval["token"]}".')
        assert httpx.get(file_url, headers=bearer(DEMO_KEY)).content == APP_PY  # nothing written
        assert httpx.get(changes, headers=bearer(DEMO_KEY)).json()["changes"] == []

        altered = approval["token"][:-2] + ("AA" if not approval["token"].endswith("AA") else "BB")
        refused = await session.call_tool("replace_in_file", {**WRITE_ARGS, "approval_token": altered})
        assert refused.isError is True
        assert httpx.get(file_url, headers=bearer(DEMO_KEY)).content == APP_PY

        wrote = await session.call_tool(
            "replace_in_file", {**WRITE_ARGS, "approval_token": approval["token"]}
        )
        assert (texts(wrote), wrote.isError) == (["Wrote src/app.py (+1 -1 lines)."], False)
        again = await session.call_tool(
            "replace_in_file", {**WRITE_ARGS, "approval_token": approval["token"]}
        )
        assert texts(again)[0].startswith("Already applied: src/app.py")
        found = await session.call_tool("code_search", {"query": "main returns 43"})
    assert httpx.get(file_url, headers=bearer(DEMO_KEY)).content == APP_PY.replace(b"42", b"43")
    feed = httpx.get(changes, headers=bearer(DEMO_KEY)).json()["changes"]
    assert [(change["path"], change["origin"]) for change in feed] == [("src/app.py", "tool")]
    assert "return 43" in texts(found)[0]  # re-indexed before the write answered


async def test_the_token_of_a_rest_preview_writes_over_mcp(server: BackgroundServer) -> None:
    token = execute_action(server, "replace_in_file", WRITE_ARGS)["approval"]["token"]
    async with mcp_session(f"{server.url}/mcp/demo") as session:
        wrote = await session.call_tool("replace_in_file", {**WRITE_ARGS, "approval_token": token})
    assert texts(wrote) == ["Wrote src/app.py (+1 -1 lines)."]


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
    ("edit_file", {"path": "src/app.py", "content": "x", "approval_token": 7}, "Error: edit_file: the call"),
]


@pytest.mark.parametrize(("tool", "args", "start"), BAD_CALLS, ids=[str(n) for n in range(len(BAD_CALLS))])
async def test_a_bad_call_is_an_error_result_and_the_server_stays_up(
    server: BackgroundServer, tool: str, args: dict[str, Any], start: str
) -> None:
    async with mcp_session(f"{server.url}/mcp/demo") as session:
        result = await session.call_tool(tool, args)
        assert result.isError is True
        assert texts(result)[0].startswith(start), texts(result)
        assert (await session.call_tool("read_file", {"file_path": "src/app.py"})).isError is False


async def test_the_overview_is_a_resource(server: BackgroundServer) -> None:
    rest = execute_action(server, "project_overview", {})["observation"]
    async with mcp_session(f"{server.url}/mcp/demo") as session:
        resources = (await session.list_resources()).resources
        assert [str(resource.uri) for resource in resources] == ["reactstep://projects/demo/overview"]
        contents = (await session.read_resource(resources[0].uri)).contents
    assert [(content.mimeType, getattr(content, "text", None)) for content in contents] == [
        ("text/markdown", rest)
    ]


async def test_the_react_prompt_is_the_system_prompt_and_the_question(server: BackgroundServer) -> None:
    async with mcp_session(f"{server.url}/mcp/demo") as session:
        prompts = (await session.list_prompts()).prompts
        got = await session.get_prompt("react", {"question": "Where is main defined?"})
    assert [(prompt.name, [a.name for a in prompt.arguments or []]) for prompt in prompts] == [
        ("react", ["question"])
    ]
    [message] = got.messages
    assert message.role == "user" and isinstance(message.content, TextContent)
    assert message.content.text.startswith("You are a coding agent.")
    assert message.content.text.endswith("\n\nQuestion: Where is main defined?")
    assert "<observation>" in message.content.text


async def test_many_calls_at_once_all_answer(server: BackgroundServer) -> None:
    async with mcp_session(f"{server.url}/mcp/demo") as session:
        calls = [session.call_tool("read_file", {"file_path": "src/app.py"}) for _ in range(20)]
        results = await asyncio.gather(*calls)
    assert {(texts(result)[0].splitlines()[-1], result.isError) for result in results} == {
        ("    2 |     return 42", False)
    }


def test_an_expired_token_writes_nothing(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "objects")
    store.put("demo", "src/app.py", APP_PY)
    settings = Settings(data_dir=tmp_path, approval_secret="mcp-test-secret", approval_ttl_s=0)

    async def preview_then_approve(url: str) -> CallToolResult:
        async with mcp_session(f"{url}/mcp/demo") as session:
            preview = await session.call_tool("replace_in_file", WRITE_ARGS)
            token = (preview.structuredContent or {})["approval"]["token"]
            return await session.call_tool("replace_in_file", {**WRITE_ARGS, "approval_token": token})

    with BackgroundServer(create_app(settings, store=store)) as running:
        refused = asyncio.run(preview_then_approve(running.url))
    assert refused.isError is True
    assert "the approval_token expired at " in texts(refused)[0]
    assert store.get("demo", "src/app.py") == APP_PY
