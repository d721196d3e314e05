"""Every command picks its server in one order: --server, then REACTSTEP_SERVER, then the live
`reactstep serve` of the data dir's note (waited for while it builds its app), and only then one in
its own process, never on a data dir a live server serves. Real `reactstep` processes against a real
`reactstep serve` on 127.0.0.1, its LLM a scripted server of this test."""

import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from reactstep.client.cli.servers import ServedElsewhere, in_process_server
from reactstep.client.settings import ClientSettings
from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from tests.served import REACTSTEP, serving

REPLIES = [
    'Thought: Let me read it.\nAction: read_file(file_path="src/app.py")',
    "Thought: main returns 42.\nFinal Answer: `main()` returns 42.",
]
MCP_LIST = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]
STARTING_S = 6.0  # longer than one /healthz attempt (servers.ATTEMPT_MAX_S): a server still building its app


@pytest.fixture
def served(env: dict[str, str]) -> Iterator[tuple[str, ScriptedLLMServer]]:
    """`reactstep serve` on the data dir, its LLM a scripted server; replay's scripted LLM allowed."""
    with ScriptedLLMServer(REPLIES) as llm:
        server_env = env | {
            "REACTSTEP_LLM_MODEL": "openai/scripted",
            "REACTSTEP_LLM_API_BASE": llm.base_url,
            "REACTSTEP_LLM_API_BASE_ALLOWLIST": '["http://127.0.0.1:*"]',
        }
        with serving(server_env) as (url, _):
            yield url, llm


def reactstep(
    env: dict[str, str], *arguments: str | Path, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [REACTSTEP, *map(str, arguments)], env=env, input=stdin, capture_output=True, text=True, timeout=180
    )


def test_every_command_uses_the_server_of_the_note(
    served: tuple[str, ScriptedLLMServer], env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    url, llm = served
    using = f"using the server running on {env['REACTSTEP_DATA_DIR']} at {url}"
    trace = tmp_path / "trace.jsonl"
    mcp_input = "".join(json.dumps(message) + "\n" for message in MCP_LIST)
    commands: list[tuple[list[str | Path], str]] = [
        (["sync", project, "--project", "demo"], ""),
        (["index", project, "--project", "demo"], ""),
        (["pull", project, "--project", "demo"], ""),
        (["ask", "What does main return?", "--project", "demo", "--record", trace], ""),
        (["replay", trace], ""),
        (["mcp", "--project", "demo"], mcp_input),
    ]
    for arguments, stdin in commands:
        finished = reactstep(env, *arguments, stdin=stdin)
        assert (arguments[0], finished.returncode, finished.stderr) == (arguments[0], 0, using + "\n")
    assert len(llm.requests) == 2  # ask's two steps; the replay answered from its own scripted LLM
    replayed = reactstep(env, "replay", trace)
    assert replayed.stdout == "replay matched: final_answer after 2 steps\n"


def test_server_then_environment_then_note(
    served: tuple[str, ScriptedLLMServer], env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    url, _ = served
    trace = tmp_path / "trace.jsonl"
    assert reactstep(env, "sync", project, "--project", "demo").returncode == 0
    assert (
        reactstep(env, "ask", "What does main return?", "--project", "demo", "--record", trace).returncode
        == 0
    )
    elsewhere = env | {"REACTSTEP_DATA_DIR": str(tmp_path / "elsewhere")}  # no note there
    nothing = "http://127.0.0.1:9"  # nothing listens there
    cases = [
        (elsewhere | {"REACTSTEP_SERVER": url}, [], f"using the server at {url} (REACTSTEP_SERVER)"),
        (env | {"REACTSTEP_SERVER": url}, [], f"using the server at {url} (REACTSTEP_SERVER)"),
        (
            elsewhere | {"REACTSTEP_SERVER": nothing},
            ["--server", url],
            f"using the server at {url} (--server)",
        ),
    ]
    for case_env, options, said in cases:
        replayed = reactstep(case_env, "replay", trace, *options)
        assert (replayed.returncode, replayed.stderr, replayed.stdout) == (
            0,
            said + "\n",
            "replay matched: final_answer after 2 steps\n",
        )
    assert not (tmp_path / "elsewhere").exists()  # no server ran in a command's process


class _SlowStart(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'{"status":"ok"}' if self.path == "/healthz" else b'{"error":{"code":"not_found"}}'
        self.send_response(200 if self.path == "/healthz" else 404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_server_still_building_its_app_is_waited_for(env: dict[str, str], project: Path) -> None:
    """As `reactstep serve` does, the port listens and the note is there before anything is answered:
    the command waits, and no server starts in its process on that data dir."""
    data_dir = Path(env["REACTSTEP_DATA_DIR"])
    data_dir.mkdir(parents=True)
    listening = socket.create_server(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listening.getsockname()[1]}"
    (data_dir / "server.json").write_text(json.dumps({"url": url, "pid": os.getpid()}))
    server = HTTPServer(("127.0.0.1", 0), _SlowStart, bind_and_activate=False)
    server.socket.close()
    server.socket = listening

    def start_late() -> None:
        time.sleep(STARTING_S)
        server.serve_forever()

    threading.Thread(target=start_late, daemon=True).start()
    try:
        synced = reactstep(env, "sync", project, "--project", "demo")
    finally:
        server.shutdown()
        listening.close()
    said = synced.stderr.splitlines()
    assert said[:2] == [
        f"waiting for the server at {url} (pid {os.getpid()}) to answer",
        f"using the server running on {data_dir} at {url}",
    ]
    assert synced.returncode == 1  # the stand-in answers nothing but /healthz
    assert sorted(path.name for path in data_dir.iterdir()) == ["server.json"]  # no server opened it


def test_a_note_whose_address_nothing_listens_at_is_passed_over(env: dict[str, str], project: Path) -> None:
    """A live pid (this test's) but nothing at the note's URL: a note outliving its server."""
    data_dir = Path(env["REACTSTEP_DATA_DIR"])
    data_dir.mkdir(parents=True)
    (data_dir / "server.json").write_text(json.dumps({"url": "http://127.0.0.1:9", "pid": os.getpid()}))
    synced = reactstep(env, "sync", project, "--project", "demo")
    assert synced.returncode == 0, synced.stderr
    assert synced.stderr == (
        f"running in this process on {data_dir} (no --server, and nothing listens at http://127.0.0.1:9, "
        f"where the note of pid {os.getpid()} says it serves)\n"
    )


def test_no_server_starts_in_this_process_on_a_served_data_dir(
    served: tuple[str, ScriptedLLMServer], env: dict[str, str]
) -> None:
    """The pytest plugin's way in (in_process_server itself): refused while the note's server answers."""
    url, _ = served
    data_dir = Path(env["REACTSTEP_DATA_DIR"])
    with ExitStack() as stack, pytest.raises(ServedElsewhere) as refused:
        in_process_server(stack, ClientSettings(data_dir=data_dir), {})
    assert str(refused.value) == (
        f"{data_dir} is served by the server at {url}: use it (--server or REACTSTEP_SERVER), or stop it, "
        "or set REACTSTEP_DATA_DIR to another data dir"
    )
