"""The shell tool `bash` run in the editor's terminal (terminal/* offered): the person sees the command
run where they work, and says yes first (permissions.py). Only foreground commands: bash_output and
kill_bash need a process this agent keeps, which an editor's terminal is not.

    terminal/create (bash -c COMMAND, in the session's folder) ─► the call's content shows the terminal
    terminal/wait_for_exit, at most `timeout` s ─► terminal/kill when it runs over
    terminal/output ─► the observation: the output and how it ended; terminal/release
"""

import asyncio
from pathlib import Path
from typing import Any

from acp import tool_terminal_ref, update_tool_call
from pydantic import ValidationError

from reactstep.client.shell.tools import BashArgs, shell_tool_declarations
from reactstep.contract.validation import describe_validation_error

OUTPUT_BYTES = 30_000


def terminal_tool_declarations() -> list[dict[str, Any]]:
    """`bash` as react_step's client_tools declares it, without run_in_background."""
    [bash] = [tool for tool in shell_tool_declarations() if tool["name"] == "bash"]
    parameters = dict(bash["parameters"])
    parameters["properties"] = {k: v for k, v in parameters["properties"].items() if k != "run_in_background"}
    return [{**bash, "parameters": parameters}]


async def run_in_terminal(
    editor: Any, session_id: str, root: Path, call_id: str, tool_args: dict[str, Any]
) -> dict[str, Any]:
    """One bash call in a terminal of the editor, as {observation, is_error}."""
    try:
        args = BashArgs.model_validate(tool_args)
    except ValidationError as exc:
        return {"observation": f"Error: {describe_validation_error(exc)}", "is_error": True}
    if args.run_in_background:
        return {
            "observation": "Error: run_in_background is not available in the editor's terminal",
            "is_error": True,
        }
    created = await editor.create_terminal(
        session_id=session_id,
        command="bash",
        args=["-c", args.command],
        cwd=str(root),
        output_byte_limit=OUTPUT_BYTES,
    )
    terminal = created.terminal_id
    await editor.session_update(
        session_id, update_tool_call(call_id, status="in_progress", content=[tool_terminal_ref(terminal)])
    )
    try:
        try:
            ended = await asyncio.wait_for(
                editor.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal), args.timeout
            )
        except TimeoutError:
            await editor.kill_terminal(session_id=session_id, terminal_id=terminal)
            ended = None
        shown = await editor.terminal_output(session_id=session_id, terminal_id=terminal)
    finally:
        await editor.release_terminal(session_id=session_id, terminal_id=terminal)
    output = shown.output.rstrip("\n") or "(no output)"
    if ended is None:
        return {
            "observation": f"{output}\nTimed out after {args.timeout:g} s: the command was killed.",
            "is_error": True,
        }
    if ended.exit_code is None:
        return {"observation": f"{output}\nKilled by {ended.signal}", "is_error": True}
    return {"observation": f"{output}\nExit code: {ended.exit_code}", "is_error": ended.exit_code != 0}
