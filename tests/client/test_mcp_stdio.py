"""`reactstep mcp` as a subprocess, driven by the official MCP SDK's stdio client: on a local data dir,
and as a bridge to a running service on 127.0.0.1."""

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent
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


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def seed(store: LocalStore) -> None:
    store.put("demo", "src/app.py", b"def main():\n    return 42\n")
    store.put("demo", "src/util/strings.py", b"def shout(text):\n    return text.upper()\n")
    store.put("demo", "src/version.py", b"VERSION = 1\n")
    store.put("other", "secret.txt", b"another tenant\n")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local data dir with project demo indexed (the app closes its embedded store at the end)."""
    data = tmp_path_factory.mktemp("mcp-data")
    seed(LocalStore(data / "objects"))
    with TestClient(create_app(Settings(data_dir=data))) as client:
        assert client.post("/api/projects/demo/index").status_code == 200
    return data


def environment(**extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("REACTSTEP_")}
    return {**env, **extra}


@asynccontextmanager
async def stdio_session(args: list[str], env: dict[str, str], errlog: Path) -> AsyncIterator[ClientSession]:
    parameters = StdioServerParameters(command=REACTSTEP, args=["mcp", *args], env=env)
    with errlog.open("w") as errors:
        async with (
            stdio_client(parameters, errlog=errors) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


READS = [
    ("read_file", {"file_path": "src/app.py"}, "2 |     return 42"),
    ("grep", {"pattern": "upper"}, "src/util/strings.py"),
    ("code_search", {"query": "shout a text in capitals"}, "src/util/strings.py"),
    ("find_definition", {"symbol": "shout"}, "src/util/strings.py"),
]


async def test_local_tools_reads_and_an_approved_edit(data_dir: Path, tmp_path: Path) -> None:
    env = environment(REACTSTEP_DATA_DIR=str(data_dir))
    async with stdio_session(["--project", "demo"], env, tmp_path / "stderr.log") as session:
        tools = (await session.list_tools()).tools
        manifest = describe_tools(default_registry())["tools"]
        assert [(tool.name, tool.description) for tool in tools] == [
            (entry["name"], entry["description"]) for entry in manifest
        ]
        for tool, args, seen in READS:
            result = await session.call_tool(tool, args)
            assert result.isError is False, texts(result)
            assert seen in texts(result)[0], (tool, texts(result))
        assert texts(await session.call_tool("read_file", {"file_path": "../other/secret.txt"}))[
            0
        ].startswith("Error: ")

        preview = await session.call_tool("replace_in_file", VERSION_ARGS)
        token = (preview.structuredContent or {})["approval"]["token"]
        store = LocalStore(data_dir / "objects")
        assert store.get("demo", "src/version.py") == b"VERSION = 1\n"  # nothing written yet
        wrote = await session.call_tool("replace_in_file", {**VERSION_ARGS, "approval_token": token})
        assert texts(wrote) == ["Wrote src/version.py (+1 -1 lines)."]
        found = await session.call_tool("code_search", {"query": "VERSION = 2"})
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


async def test_the_bridge_runs_each_call_on_the_service(service: BackgroundServer, tmp_path: Path) -> None:
    env = environment(REACTSTEP_CLIENT_API_KEY=DEMO_KEY, REACTSTEP_DATA_DIR=str(tmp_path / "unused"))
    args = ["--project", "demo", "--server", service.url]
    async with stdio_session(args, env, tmp_path / "stderr.log") as session:
        names = [tool.name for tool in (await session.list_tools()).tools]
        read = await session.call_tool("read_file", {"file_path": "src/app.py"})
        preview = await session.call_tool("replace_in_file", VERSION_ARGS)
        token = (preview.structuredContent or {})["approval"]["token"]
        wrote = await session.call_tool("replace_in_file", {**VERSION_ARGS, "approval_token": token})
        unknown = await session.call_tool("nope", {})
    assert names == [entry["name"] for entry in describe_tools(default_registry())["tools"]]
    assert "2 |     return 42" in texts(read)[0]
    assert texts(wrote) == ["Wrote src/version.py (+1 -1 lines)."]
    assert LocalStore(tmp_path / "objects").get("demo", "src/version.py") == b"VERSION = 2\n"
    assert (unknown.isError, texts(unknown)[0].startswith("Error: unknown tool 'nope'")) == (True, True)


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
