"""The client installs and runs without the server: importing it (and building the CLI) loads none of the
server's heavy libraries, and a fresh venv holding only `pip install ./client` runs the command (sync,
index, the stdio MCP relay, ask and replay against a `reactstep serve` it finds by its note) and the
library against a real server on 127.0.0.1. Installing the client leaves nothing in the checkout.

The fresh venv is cached under .cache/client-venv/<hash of client/pyproject.toml's dependencies and the
Python version>, so only the first run downloads the client's dependencies from the package registry; each
run installs the checkout's client code in it again, straight from client/ (its build backend builds in
a copy of it).
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from tests.served import serving

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "client-venv"
HEAVY = (
    "litellm",
    "boto3",
    "botocore",
    "qdrant_client",
    "qdrant_edge",
    "onnxruntime",
    "tree_sitter",
    "starlette",
    "uvicorn",
)
SEEN_HEAVY = f"""
import sys
heavy = {HEAVY!r}
print(sorted(name for name in heavy if name in sys.modules))
"""
REPLIES = [
    'Thought: Let me read it.\nAction: read_file(file_path="src/app.py")',
    "Thought: main returns 42.\nFinal Answer: `main()` returns 42.",
]
SEARCH = """
import sys
from reactstep.client import Client

with Client(sys.argv[1]) as rs:
    answer = rs.execute(
        {"project_id": "demo", "session_id": "s", "tool_name": "code_search",
         "tool_args": {"query": "shout a text in capitals"}}
    )
print(answer.observation)
"""

MCP_SESSION = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"file_path": "src/app.py"}},
    },
]


def dev_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "load",
    [
        "import reactstep.client",
        "import reactstep.client.cli.main",
        "from reactstep.client.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass",
    ],
)
def test_the_client_loads_none_of_the_servers_libraries(load: str) -> None:
    finished = dev_python(f"{load}\n{SEEN_HEAVY}")
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.splitlines()[-1] == "[]"


def venv_key() -> str:
    """What the cached venv's contents depend on: the client's dependencies and this Python."""
    project = tomllib.loads((ROOT / "client" / "pyproject.toml").read_text())["project"]
    digest = hashlib.sha256(json.dumps([project["dependencies"], sys.version]).encode())
    return digest.hexdigest()[:16]


def run(*command: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command, run to the end; it must succeed."""
    arguments = [str(part) for part in command]
    finished = subprocess.run(arguments, env=env, capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr[-3000:]
    return finished


@pytest.fixture(scope="module")
def client_venv() -> Path:
    """A venv with only the client distribution, its code this checkout's."""
    venv = CACHE / venv_key()
    source = ROOT / "client"
    if not (venv / "ready").exists():
        shutil.rmtree(CACHE, ignore_errors=True)  # an older one is of no further use
        run(sys.executable, "-m", "venv", venv)
        run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", source)  # from the registry
        (venv / "ready").touch()
    # the checkout's code, built in isolation (setuptools from the registry, cached by pip after once)
    run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", source)
    return venv


def client_env(tmp_path: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "REACTSTEP_DATA_DIR": str(tmp_path / "data")}


def test_the_client_alone_installs_only_its_dependencies(client_venv: Path) -> None:
    listed = run(client_venv / "bin" / "python", "-m", "pip", "list", "--format", "json").stdout
    names = {entry["name"].lower().replace("_", "-") for entry in json.loads(listed)} - {"pip", "setuptools"}
    assert names == {
        "reactstep-client",
        "httpx",
        "httpx-sse",
        "pydantic",
        # what those bring
        "anyio",
        "certifi",
        "h11",
        "httpcore",
        "idna",
        "pydantic-core",
        "annotated-types",
        "typing-extensions",
        "typing-inspection",
    }


def test_the_client_alone_runs_against_a_real_server(client_venv: Path, url: str, tmp_path: Path) -> None:
    reactstep = client_venv / "bin" / "reactstep"
    env = client_env(tmp_path)
    version = run(reactstep, "--version", env=env)
    assert version.stdout == "reactstep-client 0.1.0\n"

    for command in (["serve"], ["serve", "--port", "8000"], ["hash-key", "--projects", "demo"]):
        refused = subprocess.run([reactstep, *command], env=env, capture_output=True, text=True, timeout=60)
        assert (refused.returncode, refused.stdout, refused.stderr) == (
            2,
            "",
            f"error: {command[0]} needs the server package: pip install reactstep\n",
        )
    alone = subprocess.run(
        [reactstep, "index", str(tmp_path), "--project", "demo"], env=env, capture_output=True, text=True
    )
    assert alone.returncode == 1
    assert alone.stderr.endswith("a server in this process needs the server package: pip install reactstep\n")

    folder = tmp_path / "repo"
    (folder / "src" / "util").mkdir(parents=True)
    (folder / "src" / "util" / "strings.py").write_text("def shout(text):\n    return text.upper()\n")
    (folder / "src" / "app.py").write_text("def main():\n    return 42\n")
    indexed = run(reactstep, "index", folder, "--project", "demo", "--server", url, env=env)
    assert indexed.stderr.startswith(f"using the server at {url} (--server)\n")
    assert "indexed 2 files" in indexed.stdout

    (folder / "src" / "version.py").write_text("VERSION = 1\n")
    synced = run(reactstep, "sync", folder, "--project", "demo", env={**env, "REACTSTEP_SERVER": url})
    assert synced.stderr.startswith(f"using the server at {url} (REACTSTEP_SERVER)\n")
    assert "uploaded 1 files" in synced.stdout

    found = run(client_venv / "bin" / "python", "-c", SEARCH, url, env=env)
    assert "src/util/strings.py" in found.stdout

    relayed = subprocess.run(
        [reactstep, "mcp", "--project", "demo", "--server", url],
        input="".join(json.dumps(message) + "\n" for message in MCP_SESSION),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert relayed.returncode == 0, relayed.stderr
    answers = {answer["id"]: answer for answer in map(json.loads, relayed.stdout.splitlines())}
    assert sorted(answers) == [1, 2, 3]  # the notification has no answer
    assert answers[1]["result"]["serverInfo"]["name"] == "reactstep"
    assert "read_file" in [tool["name"] for tool in answers[2]["result"]["tools"]]
    assert "2 |     return 42" in answers[3]["result"]["content"][0]["text"]


def checkout_files() -> list[str]:
    """What git sees in client/ and contract/ beyond the committed files, ignored ones included
    (bytecode caches aside: Python's own, written by whatever imported the code)."""
    listed = run(
        "git", "-C", ROOT, "status", "--porcelain", "--ignored", "--untracked-files=all", "client", "contract"
    )
    return [line for line in listed.stdout.splitlines() if "__pycache__" not in line]


def test_installing_the_client_leaves_nothing_in_the_checkout(client_venv: Path, tmp_path: Path) -> None:
    before = checkout_files()
    pip = [client_venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-deps"]
    run(*pip, "--target", tmp_path / "site", ROOT / "client")
    assert checkout_files() == before
    assert not (ROOT / "client" / "build").exists()
    assert list((ROOT / "client").glob("*.egg-info")) == []
    installed = tmp_path / "site" / "reactstep"
    assert sorted(path.name for path in installed.iterdir()) == ["client", "contract"]
    assert (installed / "client" / "traces" / "viewer_page.html").is_file()
    assert not (installed / "client" / "build_backend").exists()


def test_the_client_alone_replays_against_the_server_it_finds(client_venv: Path, tmp_path: Path) -> None:
    """`reactstep serve` (the server package, in its own process) on a data dir; the client-only venv's
    reactstep finds it by its note, asks with --record, and replays the trace there, then again through
    REACTSTEP_SERVER from another data dir."""
    reactstep = client_venv / "bin" / "reactstep"
    env = client_env(tmp_path)
    folder = tmp_path / "repo"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text("def main():\n    return 42\n")
    trace = tmp_path / "trace.jsonl"
    clean = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    with ScriptedLLMServer(REPLIES) as llm:
        server_env = clean | {
            "REACTSTEP_DATA_DIR": env["REACTSTEP_DATA_DIR"],
            "HF_HUB_OFFLINE": "1",
            "REACTSTEP_LLM_MODEL": "openai/scripted",
            "REACTSTEP_LLM_API_BASE": llm.base_url,
            "REACTSTEP_LLM_API_BASE_ALLOWLIST": '["http://127.0.0.1:*"]',  # replay's scripted LLM
        }
        with serving(server_env) as (url, _):
            using = f"using the server running on {env['REACTSTEP_DATA_DIR']} at {url}\n"
            synced = run(reactstep, "sync", folder, "--project", "demo", env=env)
            assert synced.stderr == using
            asked = run(
                reactstep, "ask", "What does main return?", "--project", "demo", "--record", trace, env=env
            )
            assert (asked.stderr, asked.stdout.splitlines()[-1]) == (using, "final_answer after 2 steps")
            replayed = run(reactstep, "replay", trace, env=env)
            assert (replayed.stderr, replayed.stdout) == (
                using,
                "replay matched: final_answer after 2 steps\n",
            )
            elsewhere = env | {"REACTSTEP_DATA_DIR": str(tmp_path / "elsewhere"), "REACTSTEP_SERVER": url}
            replayed = run(reactstep, "replay", trace, env=elsewhere)
            assert (replayed.stderr, replayed.stdout) == (
                f"using the server at {url} (REACTSTEP_SERVER)\n",
                "replay matched: final_answer after 2 steps\n",
            )
    assert len(llm.requests) == 2  # the ask; each replay answered from its own scripted LLM
