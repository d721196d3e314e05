"""`reactstep ask --allow-shell` end to end: the shell tools are declared only with the flag, run on the
client, recorded as client_action, replayed by running them again, and stopped when the client ends."""

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from reactstep.client.cli.main import main
from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer, ScriptItem, ToolCall
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from tests.client.test_shell_tools import gone, read_pid

SHELL_TOOLS = ["bash", "bash_output", "kill_bash"]
FINAL = "Thought: It printed hello.\nFinal Answer: The command printed hello."
TEXT_REPLIES: list[ScriptItem] = ['Thought: Let me run it.\nAction: bash(command="echo hello")', FINAL]
NATIVE_REPLIES: list[ScriptItem] = [
    Reply("Let me run it.", (ToolCall("bash", '{"command": "echo hello"}'),)),
    FINAL,
]


@pytest.fixture
def server(tmp_path: Path, llm_server: ScriptedLLMServer, local_store: LocalStore) -> Iterator[str]:
    settings = Settings(
        data_dir=tmp_path,
        llm_model="openai/scripted",
        llm_api_base=llm_server.base_url,
        llm_api_base_allowlist=["http://127.0.0.1:*"],
    )
    with BackgroundServer(create_app(settings, store=local_store)) as running:
        yield running.url


def records_of(trace: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in trace.read_text().splitlines()]


@pytest.mark.parametrize(("tool_calling", "replies"), [("text", TEXT_REPLIES), ("native", NATIVE_REPLIES)])
def test_ask_runs_bash_locally_records_and_replays(
    server: str,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    tool_calling: str,
    replies: list[ScriptItem],
) -> None:
    llm_server.push(*replies)
    trace = tmp_path / "trace.jsonl"
    ask = ["ask", "What does echo print?", "--project", "demo", "--server", server, "--record", str(trace)]
    assert main([*ask, "--allow-shell", "--cwd", str(tmp_path), "--tool-calling", tool_calling]) == 0
    printed = capsys.readouterr().out
    assert "    $ echo hello\n    Output:\n    hello\n    Exit code: 0\n" in printed
    assert "Final Answer: The command printed hello." in printed

    records = records_of(trace)
    assert [record["kind"] for record in records] == ["session", "react_step", "client_action", "react_step"]
    assert records[2]["request"] == {"tool_name": "bash", "tool_args": {"command": "echo hello"}}
    assert records[2]["response"] == {"observation": "hello\nExit code: 0", "is_error": False}
    step_requests = [record["request"] for record in records if record["kind"] == "react_step"]
    assert all([tool["name"] for tool in request["client_tools"]] == SHELL_TOOLS for request in step_requests)
    assert step_requests[1]["conversation_history"][0]["observation"] == "hello\nExit code: 0"
    assert any("hello\nExit code: 0" in str(m["content"]) for m in llm_server.requests[1]["messages"])

    assert main(["replay", str(trace), "--server", server, "--allow-shell", "--cwd", str(tmp_path)]) == 0
    assert "replay matched: final_answer after 2 steps" in capsys.readouterr().out


def test_without_the_flag_no_shell_tool_is_offered(
    server: str, llm_server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.push(*TEXT_REPLIES)
    trace = tmp_path / "trace.jsonl"
    ask = ["ask", "What does echo print?", "--project", "demo", "--server", server, "--record", str(trace)]
    assert main(ask) == 0
    records = records_of(trace)
    assert "client_tools" not in records[1]["request"]
    assert records[0]["client_tools"] == []
    assert "**bash(" not in json.dumps(llm_server.requests[0]["messages"])
    # The model asked for a tool nobody offered: its reply goes back as a format error; nothing runs.
    assert [record["kind"] for record in records] == ["session", "react_step", "react_step"]
    assert records[1]["response"]["status"] == "format_error"
    assert "Unknown tool 'bash'" in records[1]["response"]["format_error"]


def test_replay_runs_shell_commands_only_when_allowed(
    server: str, llm_server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.push(*TEXT_REPLIES)
    trace = tmp_path / "trace.jsonl"
    ask = ["ask", "What does echo print?", "--project", "demo", "--server", server, "--record", str(trace)]
    assert main([*ask, "--allow-shell", "--cwd", str(tmp_path)]) == 0
    assert "**bash(command: string" in json.dumps(llm_server.requests[0]["messages"])
    capsys.readouterr()
    assert main(["replay", str(trace), "--server", server]) == 1
    assert "runs client tools (bash, bash_output, kill_bash) on this machine; pass --allow-shell" in (
        capsys.readouterr().err
    )

    records = records_of(trace)
    records[2]["response"] = {"observation": "goodbye\nExit code: 0", "is_error": False}
    trace.write_text("".join(json.dumps(record) + "\n" for record in records))
    assert main(["replay", str(trace), "--server", server, "--allow-shell", "--cwd", str(tmp_path)]) == 1
    assert capsys.readouterr().out == (
        "replay diverged at step 1: observation differs\n--- recorded observation\n+++ replayed observation\n"
        "@@ -1,2 +1,2 @@\n-goodbye\n+hello\n Exit code: 0\n"
    )


BACKGROUND = (
    'Thought: Start it.\nAction: bash(command="echo $$ > bg.pid; exec sleep 300", run_in_background=true)'
)
FOREGROUND = 'Thought: Wait.\nAction: bash(command="echo $$ > fg.pid; exec sleep 60")'


@pytest.mark.parametrize(
    ("replies", "pid_files", "terminate", "exit_code"),
    [
        ([BACKGROUND, FINAL], ["bg.pid"], False, 0),
        ([BACKGROUND, FOREGROUND, FINAL], ["bg.pid", "fg.pid"], True, 128 + signal.SIGTERM),
    ],
)
def test_the_commands_of_a_client_end_with_it(
    server: str,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    replies: list[ScriptItem],
    pid_files: list[str],
    terminate: bool,
    exit_code: int,
) -> None:
    llm_server.push(*replies)
    ask = [
        "ask",
        "Start a server",
        "--project",
        "demo",
        "--server",
        server,
        "--allow-shell",
        "--cwd",
        str(tmp_path),
    ]
    client = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from reactstep.client.cli.main import main; sys.exit(main(sys.argv[1:]))",
            *ask,
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    pids = [read_pid(tmp_path / name, timeout_s=60) for name in pid_files]  # the first step imports litellm
    if terminate:
        client.send_signal(signal.SIGTERM)
    assert client.wait(timeout=20) == exit_code
    assert all(gone(pid) for pid in pids)


def test_ask_with_native_text_takes_plain_text_as_the_answer_and_replays_it(
    server: str, llm_server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.push("<think>No tool is needed.</think>It prints hello.")
    trace = tmp_path / "trace.jsonl"
    ask = ["ask", "What does echo print?", "--project", "demo", "--server", server, "--record", str(trace)]
    assert main([*ask, "--reply-format", "native_text"]) == 0
    assert "Final Answer: It prints hello." in capsys.readouterr().out
    step = next(record for record in records_of(trace) if record["kind"] == "react_step")
    assert step["request"]["llm_config"]["reply_format"] == "native_text"  # type: ignore[index]

    assert main(["replay", str(trace), "--server", server]) == 0
    assert "replay matched: final_answer after 1 steps" in capsys.readouterr().out
