"""Writes over MCP at /mcp/{project_id} with the official SDK client: on 2026-07-28 the person approves
through input_required and a requestState bound to the caller; a client that cannot ask keeps the token."""

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.types import CallToolResult, ElicitResult, InputRequiredResult

from reactstep.service.http.app import create_app
from reactstep.service.http.auth import key_entry
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from tests.service.mcp.served import (
    ALL_KEY,
    APP_PY,
    DEMO_KEY,
    LEGACY,
    MODERN,
    WRITE_ARGS,
    Person,
    bearer,
    execute_action,
    mcp_session,
    texts,
)

pytestmark = pytest.mark.anyio
NOT_APPROVED = (
    "The user did not approve this change, so nothing was written. Ask the user what they want "
    "instead of proposing the same change again."
)
AGAIN = "Nothing was written. Propose the change again to get a fresh preview for the user to approve."
DIFF = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def main():\n-    return 42\n+    return 43\n"


def file_of(server: BackgroundServer) -> bytes:
    return httpx.get(f"{server.url}/api/projects/demo/files/src/app.py", headers=bearer(DEMO_KEY)).content


def changes_of(server: BackgroundServer) -> list[tuple[str, str]]:
    feed = httpx.get(f"{server.url}/api/projects/demo/changes?since=0", headers=bearer(DEMO_KEY)).json()
    return [(change["path"], change["origin"]) for change in feed["changes"]]


async def first_round(server: BackgroundServer, key: str = DEMO_KEY) -> InputRequiredResult:
    async with mcp_session(f"{server.url}/mcp/demo", key, elicitation=Person()) as client:
        asked = await client.session.call_tool("replace_in_file", WRITE_ARGS, allow_input_required=True)
    assert isinstance(asked, InputRequiredResult)
    return asked


async def retry(
    server: BackgroundServer, state: str, decision: str = "approve", key: str = DEMO_KEY, args: Any = None
) -> CallToolResult:
    answer = {"approve_write": ElicitResult(action="accept", content={"decision": decision})}
    async with mcp_session(f"{server.url}/mcp/demo", key, elicitation=Person()) as client:
        result = await client.session.call_tool(
            "replace_in_file", args or WRITE_ARGS, input_responses=answer, request_state=state
        )
    assert isinstance(result, CallToolResult)
    return result


async def test_the_person_approves_through_input_required(server: BackgroundServer) -> None:
    person = Person("approve")
    async with mcp_session(f"{server.url}/mcp/demo", elicitation=person) as client:
        wrote = await client.call_tool("replace_in_file", WRITE_ARGS)
        found = await client.call_tool("code_search", {"query": "main returns 43"})
    assert person.questions == [f"replace_in_file wants to change project demo. Apply this change?\n\n{DIFF}"]
    assert (texts(wrote), wrote.is_error) == (["Wrote src/app.py (+1 -1 lines)."], False)
    assert wrote.structured_content == {"observation": "Wrote src/app.py (+1 -1 lines)."}
    assert file_of(server) == APP_PY.replace(b"42", b"43")
    assert changes_of(server) == [("src/app.py", "tool")]
    assert "return 43" in texts(found)[0]  # re-indexed before the write answered


async def test_the_first_round_writes_nothing_and_asks(server: BackgroundServer) -> None:
    asked = await first_round(server)
    assert asked.request_state is not None and asked.input_requests is not None
    [(key, request)] = asked.input_requests.items()
    assert (key, request.method, request.params.mode) == ("approve_write", "elicitation/create", "form")
    assert request.params.requested_schema["properties"]["decision"]["enum"] == ["approve", "reject"]
    assert DIFF in request.params.message
    assert (file_of(server), changes_of(server)) == (APP_PY, [])


@pytest.mark.parametrize("decision", ["reject", "decline"])
async def test_a_rejected_change_writes_nothing(server: BackgroundServer, decision: str) -> None:
    async def person(context: Any, params: Any) -> ElicitResult:
        if decision == "decline":
            return ElicitResult(action="decline")
        return ElicitResult(action="accept", content={"decision": "reject"})

    async with mcp_session(f"{server.url}/mcp/demo", elicitation=person) as client:
        result = await client.call_tool("replace_in_file", WRITE_ARGS)
    assert (texts(result), result.is_error) == ([NOT_APPROVED], False)
    assert (file_of(server), changes_of(server)) == (APP_PY, [])


async def test_a_second_use_of_a_request_state_writes_nothing_more(server: BackgroundServer) -> None:
    state = (await first_round(server)).request_state
    assert state is not None
    assert texts(await retry(server, state)) == ["Wrote src/app.py (+1 -1 lines)."]
    replayed = await retry(server, state)
    assert texts(replayed) == ["Already applied: src/app.py is unchanged since this change was written."]
    assert changes_of(server) == [("src/app.py", "tool")]  # written once


async def test_a_request_state_after_the_file_moved_on_writes_nothing(server: BackgroundServer) -> None:
    state = (await first_round(server)).request_state
    assert state is not None
    put = httpx.put(
        f"{server.url}/api/projects/demo/files/src/app.py",
        content=b"def main():\n    return 42  # moved\n",
        headers=bearer(DEMO_KEY),
    )
    assert put.status_code in (200, 201), put.text
    refused = await retry(server, state)
    assert refused.is_error is True
    assert texts(refused)[0].startswith("Error: src/app.py changed since")
    assert file_of(server) == b"def main():\n    return 42  # moved\n"


def altered(state: str) -> str:
    return state[:-2] + ("AA" if not state.endswith("AA") else "BB")


async def test_an_altered_or_borrowed_request_state_writes_nothing_and_says_why(
    server: BackgroundServer,
) -> None:
    state = (await first_round(server)).request_state
    assert state is not None
    refusal = (
        f"Error: the requestState is not one this server issued to this caller, or it was altered. {AGAIN}"
    )
    tampered = await retry(server, altered(state))
    assert (texts(tampered), tampered.is_error) == ([refusal], True)
    borrowed = await retry(server, state, key=ALL_KEY)  # another key: bound to the one that was asked
    assert (texts(borrowed), borrowed.is_error) == ([refusal], True)
    other_args = await retry(server, state, args={**WRITE_ARGS, "replace": "return 44"})
    assert texts(other_args)[0].startswith("Error: the requestState was issued for other arguments;")
    rest = httpx.post(
        f"{server.url}/api/agent/execute_action",
        json={
            "project_id": "demo",
            "session_id": "s",
            "tool_name": "replace_in_file",
            "tool_args": WRITE_ARGS,
            "approval_token": state,
        },
        headers=bearer(DEMO_KEY),
    ).json()
    assert rest["observation"].startswith(
        "Error: the approval_token is not one this server issued, or it was"
    )
    assert (file_of(server), changes_of(server)) == (APP_PY, [])


async def test_no_text_the_model_sees_holds_a_token_where_the_client_asks(server: BackgroundServer) -> None:
    """On 2026-07-28 nothing the model reads (instructions, tools, results) carries a token that writes."""
    person = Person("reject")
    async with mcp_session(f"{server.url}/mcp/demo", elicitation=person) as client:
        seen = [
            client.instructions or "",
            json.dumps([tool.model_dump() for tool in (await client.list_tools()).tools]),
        ]
        result = await client.call_tool("replace_in_file", WRITE_ARGS)
        seen += [json.dumps(result.model_dump(mode="json"))]
        by_token = await client.call_tool("replace_in_file", {**WRITE_ARGS, "approval_token": "x"})
    assert "approval_token" not in seen[1]  # the tools take none
    assert (texts(by_token), by_token.is_error) == (
        [
            "Error: replace_in_file: approval_token is not taken here: this client asks the user to "
            "approve each change. Call replace_in_file without it."
        ],
        True,
    )
    asked = await first_round(server)
    assert asked.request_state is not None
    assert all(asked.request_state not in text for text in seen)
    assert all("approval_token=" not in text for text in seen)
    assert file_of(server) == APP_PY


@pytest.mark.parametrize("mode", [LEGACY, MODERN])
async def test_a_client_that_cannot_ask_keeps_the_token(server: BackgroundServer, mode: str) -> None:
    """The initialize handshake over stateless HTTP (the server cannot reach the person), or a
    2026-07-28 client without elicitation: the model gets the diff and a token, which writes once."""
    async with mcp_session(f"{server.url}/mcp/demo", mode=mode) as client:
        preview = await client.call_tool("replace_in_file", WRITE_ARGS)
        approval = (preview.structured_content or {})["approval"]
        observation, note = texts(preview)
        assert observation.startswith("Nothing was written yet.")
        assert note.endswith(f'approval_token="{approval["token"]}".')
        assert file_of(server) == APP_PY
        refused = await client.call_tool(
            "replace_in_file", {**WRITE_ARGS, "approval_token": altered(approval["token"])}
        )
        assert refused.is_error is True and file_of(server) == APP_PY
        wrote = await client.call_tool("replace_in_file", {**WRITE_ARGS, "approval_token": approval["token"]})
        again = await client.call_tool("replace_in_file", {**WRITE_ARGS, "approval_token": approval["token"]})
    assert texts(wrote) == ["Wrote src/app.py (+1 -1 lines)."]
    assert texts(again)[0].startswith("Already applied: src/app.py")
    assert changes_of(server) == [("src/app.py", "tool")]


async def test_the_token_of_a_rest_preview_writes_over_a_client_that_cannot_ask(
    server: BackgroundServer,
) -> None:
    token = execute_action(server, "replace_in_file", WRITE_ARGS)["approval"]["token"]
    async with mcp_session(f"{server.url}/mcp/demo", mode=LEGACY) as client:
        wrote = await client.call_tool("replace_in_file", {**WRITE_ARGS, "approval_token": token})
    assert texts(wrote) == ["Wrote src/app.py (+1 -1 lines)."]


def test_an_expired_request_state_or_token_writes_nothing(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "objects")
    store.put("demo", "src/app.py", APP_PY)
    settings = Settings(
        data_dir=tmp_path,
        api_keys=[key_entry(DEMO_KEY, "demo")],
        approval_secret="mcp-test-secret",
        approval_ttl_s=0,
    )

    async def both(server: BackgroundServer) -> tuple[CallToolResult, CallToolResult]:
        state = (await first_round(server)).request_state
        assert state is not None
        modern = await retry(server, state)
        async with mcp_session(f"{server.url}/mcp/demo", mode=LEGACY) as client:
            preview = await client.call_tool("replace_in_file", WRITE_ARGS)
            token = (preview.structured_content or {})["approval"]["token"]
            legacy = await client.call_tool("replace_in_file", {**WRITE_ARGS, "approval_token": token})
        return modern, legacy

    with BackgroundServer(create_app(settings, store=store)) as running:
        modern, legacy = asyncio.run(both(running))
    assert texts(modern)[0].startswith("Error: the requestState expired at ")
    assert texts(legacy)[0].startswith("Error: the approval_token expired at ")
    assert store.get("demo", "src/app.py") == APP_PY
