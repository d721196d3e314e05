"""The client's shell tools on real processes: foreground runs, background lifecycle, errors, cleanup."""

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reactstep.client.shell.tools import LocalShell, shell_tool_declarations
from tests.timing import LOAD_SLACK_S

PRINT_LINES = (
    "python3 -u -c 'import time\n"
    "for n in range(1, 1000):\n"
    '    print("error" if n % 10 == 0 else "line", n)\n'
    "    time.sleep(0.01)'"
)
BAD_ARGS = "Error: bash: argument "


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[LocalShell]:
    with LocalShell(tmp_path, max_output_chars=200) as local:
        yield local


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie, dead but not yet reaped by its new parent, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def gone(pid: int, timeout_s: float = 10.0) -> bool:
    """Whether the process has ended, or does within timeout_s (an orphan's end is not instant)."""
    deadline = time.monotonic() + timeout_s
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def read_pid(path: Path, timeout_s: float = 10.0) -> int:
    """The pid a command wrote to `path`, once it has."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        text = path.read_text().strip() if path.exists() else ""
        if text:
            return int(text)
        time.sleep(0.02)
    raise AssertionError(f"{path} was not written")


@pytest.mark.parametrize(
    ("args", "observation", "is_error"),
    [
        ({"command": "echo hello"}, "hello\nExit code: 0", False),
        ({"command": "echo out; echo err >&2; exit 3"}, "out\nerr\nExit code: 3", True),
        ({"command": "true"}, "(no output)\nExit code: 0", False),
        ({"command": "pwd"}, "{cwd}\nExit code: 0", False),
        ({"command": "kill -9 $$"}, "(no output)\nExit code: -9 (killed by SIGKILL)", True),
        (
            {"command": "seq -w 1 100"},  # 100 lines of 4 characters; 200 characters are kept
            "\n".join(f"{n:03}" for n in range(1, 26))
            + "\n[... 200 characters of output omitted ...]\n"
            + "\n".join(f"{n:03}" for n in range(76, 101))
            + "\nExit code: 0",
            False,
        ),
        (
            {"command": "echo started; sleep 30", "timeout": 0.5},
            "started\nTimed out after 0.5 s: the command was killed.",
            True,
        ),
        ({"command": "cat"}, "(no output)\nExit code: 0", False),  # stdin is closed, so nothing waits on it
        (
            {"command": "x", "timeout": 601},
            f"{BAD_ARGS}'timeout': Input should be less than or equal to 600",
            True,
        ),
        ({"command": "x", "shell": "zsh"}, f"{BAD_ARGS}'shell': Extra inputs are not permitted", True),
        ({}, f"{BAD_ARGS}'command': Field required", True),
    ],
)  # fmt: skip
def test_bash_in_the_foreground(
    shell: LocalShell, tmp_path: Path, args: dict[str, Any], observation: str, is_error: bool
) -> None:
    assert shell.run("bash", args) == {
        "observation": observation.format(cwd=tmp_path.resolve()),
        "is_error": is_error,
    }


def test_a_timeout_kills_the_whole_process_group(shell: LocalShell, tmp_path: Path) -> None:
    started = time.monotonic()
    command = "(echo $BASHPID > inner.pid; exec sleep 30) & sleep 30"
    result = shell.run("bash", {"command": command, "timeout": 1})
    assert time.monotonic() - started < 1 + LOAD_SLACK_S  # the timeout, not the 30 s sleeps
    assert result == {
        "observation": "(no output)\nTimed out after 1 s: the command was killed.",
        "is_error": True,
    }
    assert gone(read_pid(tmp_path / "inner.pid"))


def test_a_foreground_command_leaves_no_process_behind(shell: LocalShell, tmp_path: Path) -> None:
    leave = "(echo $BASHPID > left.pid; exec sleep 30) > /dev/null &"
    result = shell.run("bash", {"command": f"{leave} until [ -s left.pid ]; do sleep 0.01; done; echo ok"})
    assert result == {"observation": "ok\nExit code: 0", "is_error": False}
    assert gone(read_pid(tmp_path / "left.pid"))


def wait_for_output(shell: LocalShell, bash_id: str, wanted: str, filter: str | None = None) -> str:
    """bash_output's observations joined, read until `wanted` shows up in them."""
    seen = ""
    deadline = time.monotonic() + 10
    while wanted not in seen and time.monotonic() < deadline:
        args = {"bash_id": bash_id} | ({"filter": filter} if filter else {})
        result = shell.run("bash_output", args)
        assert result["is_error"] is False
        seen += result["observation"] + "\n"
        time.sleep(0.05)
    return seen


def test_background_lifecycle(shell: LocalShell) -> None:
    started = shell.run("bash", {"command": PRINT_LINES, "run_in_background": True})
    assert started == {
        "observation": 'Started bash_1 in the background. Read its output with bash_output(bash_id="bash_1") '
        'and stop it with kill_bash(bash_id="bash_1").',
        "is_error": False,
    }
    filtered = wait_for_output(shell, "bash_1", "error 30", filter=r"^error \d+$")
    assert "bash_1 is running." in filtered
    assert "line" not in filtered
    assert "error 10\n" in filtered
    assert "error 20\n" in filtered

    unfiltered = wait_for_output(shell, "bash_1", "line 4")  # only what came since the last read
    assert "error 10" not in unfiltered
    assert "bash_1 is running." in unfiltered

    assert shell.run("kill_bash", {"bash_id": "bash_1"}) == {
        "observation": "Stopped bash_1: it was killed by SIGTERM (exit code -15).",
        "is_error": False,
    }
    after = shell.run("bash_output", {"bash_id": "bash_1"})["observation"]
    assert after.startswith("bash_1 was killed by SIGTERM (exit code -15).\n")
    assert shell.run("kill_bash", {"bash_id": "bash_1"}) == {
        "observation": "Error: bash_1 is not running: it was killed by SIGTERM (exit code -15)",
        "is_error": True,
    }


def test_a_filter_sees_a_line_that_reaches_the_pipe_in_two_pieces(shell: LocalShell) -> None:
    # The writer stops in the middle of the line; a read then finds half of it, the next the rest.
    shell.run(
        "bash",
        {"command": "printf 'err'; sleep 1; printf 'or 10\\nline\\n'; sleep 30", "run_in_background": True},
    )
    time.sleep(0.5)
    first = shell.run("bash_output", {"bash_id": "bash_1", "filter": r"^error \d+$"})["observation"]
    assert first == "bash_1 is running.\n(no new output matching '^error \\\\d+$')"
    assert "error 10\n" in wait_for_output(shell, "bash_1", "error 10", filter=r"^error \d+$")
    assert (
        shell.run("bash_output", {"bash_id": "bash_1"})["observation"]
        == "bash_1 is running.\n(no new output)"
    )


def test_a_background_command_that_ends_reports_its_exit_code(shell: LocalShell) -> None:
    shell.run("bash", {"command": "echo first", "run_in_background": True})
    shell.run("bash", {"command": "echo second; exit 4", "run_in_background": True})
    for bash_id, output, ending in [
        ("bash_2", "second", "exited with code 4."),
        ("bash_1", "first", "exited with code 0."),
    ]:
        reads = wait_for_output(shell, bash_id, "exited")  # it may still run at the first read
        assert reads.endswith(f"{bash_id} {ending}\n{output}\n") or reads.endswith(
            f"{output}\n{bash_id} {ending}\n(no new output)\n"
        )
        assert reads.count(output) == 1
    again = shell.run("bash_output", {"bash_id": "bash_1", "filter": "first"})
    assert again == {
        "observation": "bash_1 exited with code 0.\n(no new output matching 'first')",
        "is_error": False,
    }


@pytest.mark.parametrize(
    ("tool_name", "args", "observation"),
    [
        ("bash_output", {"bash_id": "bash_9"}, "Error: no background command 'bash_9' (started: bash_1)"),
        ("kill_bash", {"bash_id": "bash_9"}, "Error: no background command 'bash_9' (started: bash_1)"),
        (
            "bash_output",
            {"bash_id": "bash_1", "filter": "(unclosed"},
            "Error: bash_output: filter '(unclosed' cannot be used: "
            "missing ), unterminated subpattern at position 0",
        ),
        (
            "bash_output",
            {"bash_id": "bash_1", "filter": "(a+)+$"},
            "Error: bash_output: filter '(a+)+$' cannot be used: the repeated group ending at position 3 "
            "repeats or alternates inside (e.g. (a+)+): it could take exponential time",
        ),
        (
            "bash_output",
            {"bash_id": "bash_1", "filter": "x" * 1001},
            "Error: bash_output: argument 'filter': String should have at most 1000 characters",
        ),
        ("rm_rf", {}, "Error: this client has no tool 'rm_rf'; it runs bash, bash_output, kill_bash"),
    ],
)
def test_calls_the_model_must_fix(
    shell: LocalShell, tool_name: str, args: dict[str, Any], observation: str
) -> None:
    shell.run("bash", {"command": "sleep 30", "run_in_background": True})
    assert shell.run(tool_name, args) == {"observation": observation, "is_error": True}


def test_no_background_command_started_yet(shell: LocalShell) -> None:
    assert shell.run("bash_output", {"bash_id": "bash_1"}) == {
        "observation": "Error: no background command 'bash_1' (started: none has been started)",
        "is_error": True,
    }


def test_the_declarations_are_valid_client_tools() -> None:
    from reactstep.contract.step import ClientTool

    tools = [ClientTool.model_validate(tool) for tool in shell_tool_declarations()]
    assert [(tool.name, tool.category) for tool in tools] == [
        ("bash", "execution"),
        ("bash_output", "execution"),
        ("kill_bash", "execution"),
    ]
    assert tools[0].parameters["required"] == ["command"]
    assert set(tools[0].parameters["properties"]) == {"command", "timeout", "run_in_background"}
    assert tools[1].parameters["required"] == ["bash_id"]


CLIENT_SCRIPT = """
import sys, time
from pathlib import Path
from reactstep.client.shell.tools import LocalShell
from reactstep.client.shell.processes import exit_on_termination_signals

how = sys.argv[1]
shell = LocalShell(Path.cwd())
shell.run("bash", {"command": "echo $$ > sleep.pid; exec sleep 300", "run_in_background": True})
pid_file = Path("sleep.pid")
while not (pid_file.exists() and pid_file.read_text().strip()):
    time.sleep(0.01)
with exit_on_termination_signals():
    print("ready", flush=True)
    sys.stdin.readline()  # the test has seen the command run
    if how == "raises":
        raise RuntimeError("the client crashed")
    if how == "sigterm":
        # Short sleeps: a signal that lands between CPython's last check and the start of one long sleep
        # would wait for that sleep to end.
        while True:
            time.sleep(0.05)
"""


@pytest.mark.parametrize(
    ("how", "exit_code"),
    [("returns", 0), ("raises", 1), ("sigterm", 128 + signal.SIGTERM)],
)
def test_background_commands_die_with_the_client(tmp_path: Path, how: str, exit_code: int) -> None:
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT_SCRIPT, how],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert client.stdin is not None
    assert client.stdout is not None
    assert client.stdout.readline() == "ready\n"
    pid = read_pid(tmp_path / "sleep.pid")
    assert alive(pid)
    client.stdin.write("go\n")
    client.stdin.flush()
    if how == "sigterm":
        client.send_signal(signal.SIGTERM)
    assert client.wait(timeout=10) == exit_code
    assert gone(pid)
