"""The client-side shell tools of seeds/003 (`bash`, `bash_output`, `kill_bash`), run on the client's machine.

    reactstep ask --allow-shell ─► react_step(client_tools=shell_tool_declarations())
    ─► action_details.executor == "client" ─► LocalShell.run(tool_name, tool_args)
        args validated (model output is untrusted) ─► foreground run | background start | read | stop
    ─► {observation, is_error}: all the server ever sees of it, inside the next step's history

Background commands get ids `bash_1`, `bash_2`, ... per LocalShell; closing it (or the client exiting)
stops them all (see processes.py).
"""

from collections.abc import Callable
from pathlib import Path
from signal import Signals
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reactstep.client.shell.line_filter import UnsafeFilter, compile_filter
from reactstep.client.shell.processes import Captured, ShellProcess
from reactstep.contract.validation import describe_validation_error

MAX_OUTPUT_CHARS = 30_000
MAX_FILTER_CHARS = 1_000


class BashArgs(BaseModel):
    """Arguments of bash."""

    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, max_length=20_000, description="The shell command to run (bash -c).")
    timeout: float = Field(
        120,
        gt=0,
        le=600,
        description="Seconds to wait before a foreground command is killed (default 120, max 600).",
    )
    run_in_background: bool = Field(
        False,
        description="Start it and return at once with an id, for servers, watchers and long builds; "
        "read its output with bash_output and stop it with kill_bash.",
    )


class BashOutputArgs(BaseModel):
    """Arguments of bash_output."""

    model_config = ConfigDict(extra="forbid")

    bash_id: str = Field(min_length=1, max_length=32, description="The id bash returned, e.g. 'bash_1'.")
    filter: str | None = Field(
        None,
        max_length=MAX_FILTER_CHARS,
        description="Only show new lines matching this regular expression (Python syntax, without "
        "backreferences, lookarounds or repeated groups that repeat inside); the other new lines are "
        "dropped.",
    )


class KillBashArgs(BaseModel):
    """Arguments of kill_bash."""

    model_config = ConfigDict(extra="forbid")

    bash_id: str = Field(min_length=1, max_length=32, description="The id bash returned, e.g. 'bash_1'.")


DESCRIPTIONS: dict[str, tuple[type[BaseModel], str]] = {
    "bash": (
        BashArgs,
        "Run a shell command in the user's working directory and return its combined stdout and "
        "stderr and its exit code; long output is cut in the middle. Processes it leaves behind are "
        "stopped when it returns: use run_in_background for anything that should keep running.",
    ),
    "bash_output": (
        BashOutputArgs,
        "Read the new output of a background command started with bash(run_in_background=true), "
        "and whether it still runs or its exit code.",
    ),
    "kill_bash": (KillBashArgs, "Stop a background command and everything it started."),
}


def shell_tool_declarations() -> list[dict[str, Any]]:
    """The three tools as react_step's `client_tools` declares them."""
    return [
        {
            "name": name,
            "description": description,
            "category": "execution",
            "parameters": _without_titles(args_model.model_json_schema()),
        }
        for name, (args_model, description) in DESCRIPTIONS.items()
    ]


def _without_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_titles(v) for k, v in schema.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(schema, list):
        return [_without_titles(item) for item in schema]
    return schema


class ToolFailure(Exception):
    """A call the model can fix; its message becomes an error observation."""


Result = tuple[str, bool]  # observation, is_error


class LocalShell:
    """Runs the shell tools in one working directory; a context manager that stops its background commands."""

    def __init__(self, cwd: Path, max_output_chars: int = MAX_OUTPUT_CHARS) -> None:
        self._cwd = str(cwd)
        self._limit = max_output_chars
        self._background: dict[str, ShellProcess] = {}
        # A running command's last line, read before its end arrived: kept until it does, so that a
        # filter sees it whole (a line split across two reads matched neither half).
        self._unfinished: dict[str, str] = {}
        self._handlers: dict[str, Callable[[Any], Result]] = {
            "bash": self._bash,
            "bash_output": self._bash_output,
            "kill_bash": self._kill_bash,
        }

    def run(self, tool_name: str, tool_args: dict[str, Any]) -> dict[str, Any]:
        """One tool call's observation, as execute_action would answer it."""
        try:
            observation, is_error = self._call(tool_name, tool_args)
        except ToolFailure as exc:
            observation, is_error = f"Error: {exc}", True
        return {"observation": observation, "is_error": is_error}

    def _call(self, tool_name: str, tool_args: dict[str, Any]) -> Result:
        if tool_name not in self._handlers:
            raise ToolFailure(f"this client has no tool {tool_name!r}; it runs {', '.join(self._handlers)}")
        args_model = DESCRIPTIONS[tool_name][0]
        try:
            args = args_model.model_validate(tool_args)
        except ValidationError as exc:
            raise ToolFailure(f"{tool_name}: {describe_validation_error(exc)}") from exc
        return self._handlers[tool_name](args)

    def close(self) -> None:
        """Stop every background command still running."""
        for process in self._background.values():
            process.stop()

    def __enter__(self) -> "LocalShell":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _bash(self, args: BashArgs) -> Result:
        process = self._start(args.command)
        if args.run_in_background:
            bash_id = f"bash_{len(self._background) + 1}"
            self._background[bash_id] = process
            started = (
                f"Started {bash_id} in the background. Read its output with "
                f'bash_output(bash_id="{bash_id}") and stop it with kill_bash(bash_id="{bash_id}").'
            )
            return started, False
        try:
            code = process.wait(args.timeout)
        finally:
            process.stop()  # the stragglers of a finished command, or all of it when it timed out
        output = _joined(process.output.take()).rstrip("\n") or "(no output)"
        if code is None:
            return f"{output}\nTimed out after {args.timeout:g} s: the command was killed.", True
        ending = f"Exit code: {code}" if code >= 0 else f"Exit code: {code} (killed by {_signal_name(-code)})"
        return f"{output}\n{ending}", code != 0

    def _start(self, command: str) -> ShellProcess:
        try:
            return ShellProcess(command, self._cwd, self._limit)
        except OSError as exc:
            raise ToolFailure(f"bash could not start in {self._cwd}: {exc.strerror}") from exc

    def _bash_output(self, args: BashOutputArgs) -> Result:
        process = self._find(args.bash_id)
        pattern = _compile_filter(args.filter) if args.filter else None
        code = process.exit_code
        if code is not None:
            process.finish_reading()  # the last lines may still be in the pipe
        captured = self._whole_lines(args.bash_id, process.output.take(), finished=code is not None)
        if pattern is not None:
            head, tail = _matching(captured.head, pattern), _matching(captured.tail, pattern)
            captured = Captured(head, tail, captured.omitted)
        matching = f" matching {args.filter!r}" if pattern is not None else ""
        output = _joined(captured).rstrip("\n") or f"(no new output{matching})"
        status = "is running" if code is None else _ending(code)
        return f"{args.bash_id} {status}.\n{output}", False

    def _whole_lines(self, bash_id: str, captured: Captured, finished: bool) -> Captured:
        """The output read now after the line kept from the last read; its own unfinished last line is
        kept for the next read while the command runs."""
        head, tail, kept = self._unfinished.pop(bash_id, "") + captured.head, captured.tail, ""
        if not finished and (tail or captured.omitted):
            tail, kept = _unfinished_split(tail)
        elif not finished:
            head, kept = _unfinished_split(head)
        if kept:
            self._unfinished[bash_id] = kept
        return Captured(head, tail, captured.omitted)

    def _kill_bash(self, args: KillBashArgs) -> Result:
        process = self._find(args.bash_id)
        if process.exit_code is not None:
            raise ToolFailure(f"{args.bash_id} is not running: it {_ending(process.exit_code)}")
        return f"Stopped {args.bash_id}: it {_ending(process.stop())}.", False

    def _find(self, bash_id: str) -> ShellProcess:
        process = self._background.get(bash_id)
        if process is None:
            started = ", ".join(self._background) or "none has been started"
            raise ToolFailure(f"no background command {bash_id!r} (started: {started})")
        return process


def _unfinished_split(text: str) -> tuple[str, str]:
    """The text's whole lines, and what follows its last line break."""
    cut = text.rfind("\n") + 1
    return text[:cut], text[cut:]


def _ending(code: int) -> str:
    """'exited with code 1', or 'was killed by SIGTERM (exit code -15)'."""
    if code >= 0:
        return f"exited with code {code}"
    return f"was killed by {_signal_name(-code)} (exit code {code})"


def _signal_name(number: int) -> str:
    try:
        return Signals(number).name
    except ValueError:
        return f"signal {number}"


def _joined(captured: Captured) -> str:
    if not captured.omitted:
        return captured.head + captured.tail
    start = "" if captured.head.endswith("\n") else "\n"
    note = f"{start}[... {captured.omitted} characters of output omitted ...]\n"
    return captured.head + note + captured.tail


def _compile_filter(pattern: str) -> Any:
    try:
        return compile_filter(pattern)
    except UnsafeFilter as exc:
        raise ToolFailure(f"bash_output: filter {pattern!r} cannot be used: {exc}") from exc


def _matching(text: str, pattern: Any) -> str:
    # Matched without the line break, so `$` means the end of the line.
    return "".join(line for line in text.splitlines(keepends=True) if pattern.search(line.rstrip("\r\n")))
