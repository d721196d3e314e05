"""`reactstep mcp` as a subprocess, driven by the official MCP SDK's stdio client: on a local data dir,
and as a bridge to a running service on 127.0.0.1."""

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, ElicitResult, InputRequiredResult, TextContent
from starlette.testclient import TestClient

from reactstep.service.http.app import create_app
from reactstep.service.http.auth import key_entry
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.service.step.prompt import describe_tools
from reactstep.tools.catalog import default_registry
from reactstep.tools.projects.journal import Projects
from reactstep.tools.store.local import LocalStore

pytestmark = pytest.mark.anyio

REACTSTEP = str(Path(sys.executable).parent / "reactstep")
DEMO_KEY = "rsk_mcp-stdio-demo-key-0123456789"
VERSION_ARGS = {"path": "src/version.py", "find": "VERSION = 1", "replace": "VERSION = 2"}
MODERN, ASKING_2025, TOKEN_2025 = "2026-07-28", "2025 with elicitation", "2025 without"
CLIENTS = [MODERN, ASKING_2025, TOKEN_2025]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def seed(store: LocalStore) -> None:
    store.put("demo", "src/app.py", b"def main():\n    return 42\n")
    store.put("demo", "src/util/strings.py", b"def shout(text):\n    return text.upper()\n")
    store.put("demo", "src/version.py", b"VERSION = 1\n")
    store.put("other", "secret.txt", b"another tenant\n")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A local data dir with project demo indexed (the app closes its embedded store at the end)."""
    data = tmp_path / "mcp-data"
    seed(LocalStore(data / "objects"))
    with TestClient(create_app(Settings(data_dir=data))) as client:
        assert client.post("/api/projects/demo/index").status_code == 200
    return data


def environment(**extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("REACTSTEP_")}
    return {**env, **extra}


class Person:
    """The person behind the IDE: approves each change, and keeps what it was asked."""

    def __init__(self) -> None:
        self.questions: list[str] = []

    async def __call__(self, context: Any, params: Any) -> ElicitResult:
        self.questions.append(params.message)
        return ElicitResult(action="accept", content={"decision": "approve"})


@asynccontextmanager
async def stdio_session(
    args: list[str], env: dict[str, str], errlog: Path, kind: str = MODERN, person: Person | None = None
) -> AsyncIterator[Client]:
    """The SDK's client on `reactstep mcp ...`: 2026-07-28, or the handshake with or without elicitation."""
    parameters = StdioServerParameters(command=REACTSTEP, args=["mcp", *args], env=env)
    mode = MODERN if kind == MODERN else "legacy"
    asking = person if kind != TOKEN_2025 else None
    with errlog.open("w") as errors:
        transport = stdio_client(parameters, errlog=errors)
        async with Client(transport, mode=mode, elicitation_callback=asking) as client:
            yield client


async def approved_write(client: Client, kind: str) -> CallToolResult:
    """A write the way each kind of client approves it: the person asked, or the token sent back."""
    if kind != TOKEN_2025:
        return await client.call_tool("replace_in_file", VERSION_ARGS)
    preview = await client.call_tool("replace_in_file", VERSION_ARGS)
    token = (preview.structured_content or {})["approval"]["token"]
    return await client.call_tool("replace_in_file", {**VERSION_ARGS, "approval_token": token})


def texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


READS = [
    ("read_file", {"file_path": "src/app.py"}, "2 |     return 42"),
    ("grep", {"pattern": "upper"}, "src/util/strings.py"),
    ("code_search", {"query": "shout a text in capitals"}, "src/util/strings.py"),
    ("find_definition", {"symbol": "shout"}, "src/util/strings.py"),
]


@pytest.mark.parametrize("kind", CLIENTS)
async def test_local_tools_reads_and_an_approved_edit(data_dir: Path, tmp_path: Path, kind: str) -> None:
    env = environment(REACTSTEP_DATA_DIR=str(data_dir))
    person = Person()
    async with stdio_session(["--project", "demo"], env, tmp_path / "stderr.log", kind, person) as client:
        tools = (await client.list_tools()).tools
        manifest = describe_tools(default_registry())["tools"]
        assert [(tool.name, tool.description) for tool in tools] == [
            (entry["name"], entry["description"]) for entry in manifest
        ]
        edit = next(tool for tool in tools if tool.name == "replace_in_file")
        assert ("approval_token" in edit.input_schema["properties"]) is (kind == TOKEN_2025)
        for tool, args, seen in READS:
            result = await client.call_tool(tool, args)
            assert result.is_error is False, texts(result)
            assert seen in texts(result)[0], (tool, texts(result))
        outside = await client.call_tool("read_file", {"file_path": "../other/secret.txt"})
        assert texts(outside)[0].startswith("Error: ")
        wrote = await approved_write(client, kind)
        found = await client.call_tool("code_search", {"query": "VERSION = 2"})
    store = LocalStore(data_dir / "objects")
    assert texts(wrote) == ["Wrote src/version.py (+1 -1 lines)."]
    assert len(person.questions) == (0 if kind == TOKEN_2025 else 1)
    assert store.get("demo", "src/version.py") == b"VERSION = 2\n"
    _, changes = Projects(store).changes_since("demo", 0)
    assert [(change.path, change.origin) for change in changes] == [("src/version.py", "tool")]
    assert "VERSION = 2" in texts(found)[0]


def test_an_unknown_project_stops_before_serving(data_dir: Path) -> None:
    finished = subprocess.run(
        [REACTSTEP, "mcp", "--project", "nope"],
        env=environment(REACTSTEP_DATA_DIR=str(data_dir)),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (finished.returncode, finished.stdout) == (1, "")
    assert "error: project 'nope' does not exist" in finished.stderr


@pytest.fixture
def service(tmp_path: Path) -> Iterator[BackgroundServer]:
    store = LocalStore(tmp_path / "objects")
    seed(store)
    settings = Settings(data_dir=tmp_path, api_keys=[key_entry(DEMO_KEY, "demo")], approval_secret="s")
    with BackgroundServer(create_app(settings, store=store)) as running:
        yield running


@pytest.mark.parametrize("kind", CLIENTS)
async def test_the_bridge_runs_each_call_on_the_service(
    service: BackgroundServer, tmp_path: Path, kind: str
) -> None:
    env = environment(REACTSTEP_CLIENT_API_KEY=DEMO_KEY, REACTSTEP_DATA_DIR=str(tmp_path / "unused"))
    args = ["--project", "demo", "--server", service.url]
    person = Person()
    async with stdio_session(args, env, tmp_path / "stderr.log", kind, person) as client:
        tools = (await client.list_tools()).tools
        read = await client.call_tool("read_file", {"file_path": "src/app.py"})
        wrote = await approved_write(client, kind)
        unknown = await client.call_tool("nope", {})
    assert [tool.name for tool in tools] == [
        entry["name"] for entry in describe_tools(default_registry())["tools"]
    ]
    edit = next(tool for tool in tools if tool.name == "replace_in_file")
    assert ("approval_token" in edit.input_schema["properties"]) is (kind == TOKEN_2025)
    assert "2 |     return 42" in texts(read)[0]
    assert texts(wrote) == ["Wrote src/version.py (+1 -1 lines)."]
    if kind != TOKEN_2025:  # the model saw no token: not in the tools, not in the result
        seen = json.dumps([tool.model_dump() for tool in tools]) + json.dumps(wrote.model_dump())
        assert "approval_token" not in seen
        assert [question.splitlines()[0] for question in person.questions] == [
            "replace_in_file wants to change project demo. Apply this change?"
        ]
        assert "-VERSION = 1\n+VERSION = 2" in person.questions[0]
    assert LocalStore(tmp_path / "objects").get("demo", "src/version.py") == b"VERSION = 2\n"
    assert (unknown.is_error, texts(unknown)[0].startswith("Error: unknown tool 'nope'")) == (True, True)


async def test_the_bridge_refuses_a_replayed_or_altered_request_state(
    service: BackgroundServer, tmp_path: Path
) -> None:
    env = environment(REACTSTEP_CLIENT_API_KEY=DEMO_KEY, REACTSTEP_DATA_DIR=str(tmp_path / "unused"))
    args = ["--project", "demo", "--server", service.url]
    approve = {"approve_write": ElicitResult(action="accept", content={"decision": "approve"})}
    async with stdio_session(args, env, tmp_path / "stderr.log", MODERN, Person()) as client:
        asked = await client.session.call_tool("replace_in_file", VERSION_ARGS, allow_input_required=True)
        assert isinstance(asked, InputRequiredResult) and asked.request_state is not None
        state = asked.request_state
        altered = await client.call_tool(
            "replace_in_file", VERSION_ARGS, input_responses=approve, request_state=state[:-2] + "AA"
        )
        wrote = await client.call_tool(
            "replace_in_file", VERSION_ARGS, input_responses=approve, request_state=state
        )
        replayed = await client.call_tool(
            "replace_in_file", VERSION_ARGS, input_responses=approve, request_state=state
        )
    assert altered.is_error is True
    assert texts(altered)[0].startswith(
        "Error: the requestState is not one this server issued to this caller"
    )
    assert texts(wrote) == ["Wrote src/version.py (+1 -1 lines)."]
    assert texts(replayed) == ["Already applied: src/version.py is unchanged since this change was written."]
    _, changes = Projects(LocalStore(tmp_path / "objects")).changes_since("demo", 0)
    assert [(change.path, change.origin) for change in changes] == [("src/version.py", "tool")]


def test_a_2025_06_18_ide_with_elicitation_is_asked_through_the_bridge(
    service: BackgroundServer, tmp_path: Path
) -> None:
    """Raw JSON-RPC as a 2025-06-18 IDE writes it: the relay asks it elicitation/create for the server."""
    env = environment(REACTSTEP_CLIENT_API_KEY=DEMO_KEY, REACTSTEP_DATA_DIR=str(tmp_path / "unused"))
    with subprocess.Popen(
        [REACTSTEP, "mcp", "--project", "demo", "--server", service.url],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as relay:
        assert relay.stdin is not None and relay.stdout is not None

        def send(message: dict[str, Any]) -> None:
            assert relay.stdin is not None
            relay.stdin.write(json.dumps(message).encode() + b"\n")
            relay.stdin.flush()

        def read() -> dict[str, Any]:
            assert relay.stdout is not None
            message: dict[str, Any] = json.loads(relay.stdout.readline())
            return message

        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "ide", "version": "1"},
        }
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
        assert read()["result"]["protocolVersion"] == "2025-06-18"
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "replace_in_file", "arguments": VERSION_ARGS},
            }
        )
        question = read()
        assert (question["method"], question["params"]["requestedSchema"]["required"]) == (
            "elicitation/create",
            ["decision"],
        )
        assert "-VERSION = 1\n+VERSION = 2" in question["params"]["message"]
        assert LocalStore(tmp_path / "objects").get("demo", "src/version.py") == b"VERSION = 1\n"  # not yet
        send(
            {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "accept", "content": {"decision": "approve"}},
            }
        )
        result = read()
        relay.stdin.close()
        relay.wait(timeout=60)
    assert result["id"] == 2
    assert result["result"]["content"] == [{"type": "text", "text": "Wrote src/version.py (+1 -1 lines)."}]
    assert "resultType" not in result["result"]
    assert LocalStore(tmp_path / "objects").get("demo", "src/version.py") == b"VERSION = 2\n"


@pytest.mark.parametrize(
    ("project", "key", "said"),
    [("other", DEMO_KEY, "403 forbidden_project"), ("demo", "rsk_wrong-key-0123456789", "401 unauthorized")],
)
def test_the_bridge_stops_on_a_refused_key_or_project(
    service: BackgroundServer, tmp_path: Path, project: str, key: str, said: str
) -> None:
    finished = subprocess.run(
        [REACTSTEP, "mcp", "--project", project, "--server", service.url],
        env=environment(REACTSTEP_CLIENT_API_KEY=key, REACTSTEP_DATA_DIR=str(tmp_path / "unused")),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (finished.returncode, finished.stdout) == (1, "")
    assert said in finished.stderr
