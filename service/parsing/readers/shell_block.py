"""A shell command written as the reply's whole action (mini-swe-agent, SWE-agent), for a shell tool.

    exactly one ```bash (sh, shell, console, *_bash_command) block anywhere
    | else an untagged ``` block that ends the reply (SWE-agent: discussion, then the command)
    | else exactly one <command>...</command> (SWE-agent's XML format)

Read only when no other format found a step and the request offers a shell tool; the command
is the tool's one input, with a note saying how it was read.
"""

import html
import re
from collections.abc import Mapping
from typing import Any

from reactstep.service.parsing.readers.reading import Reading
from reactstep.service.parsing.steps import Step
from reactstep.service.parsing.tool_args import ToolInput

SHELL_TOOLS = ("bash", "shell", "run_shell", "execute_bash", "run_command", "terminal")
_FENCE = re.compile(r"^[ \t]*```([\w+-]*)[ \t]*\n(.*?)^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)
_SHELL_TAG = re.compile(r"bash|sh|shell|console|zsh|\w*_bash_command", re.IGNORECASE)
_COMMAND = re.compile(r"<command>\n?(.*?)\n?</command>", re.DOTALL)


def read(body: str, taken: list[Step], tools: Mapping[str, Any]) -> Reading:
    """The shell command's step, when it is the reply's only step."""
    tool = next((name for name in SHELL_TOOLS if name in tools), None)
    if taken or tool is None:
        return Reading()
    found = _shell_fence(body) or _command_tags(body)
    if found is None:
        return Reading()
    block, command, how = found
    given = ToolInput(text=command, notes=(f"The {how} was read as a call of {tool}.",))
    return Reading([Step(block.start(), block.end(), block.group().strip(), tool, given)])


def _shell_fence(body: str) -> tuple[re.Match[str], str, str] | None:
    fences = list(_FENCE.finditer(body))
    tagged = [fence for fence in fences if _SHELL_TAG.fullmatch(fence[1])]
    if len(tagged) == 1:
        return tagged[0], tagged[0][2].strip(), f"```{tagged[0][1]} block"
    last = fences[-1] if fences else None
    if not tagged and last is not None and not last[1] and not body[last.end() :].strip():
        return last, last[2].strip(), "``` block ending the reply"
    return None


def _command_tags(body: str) -> tuple[re.Match[str], str, str] | None:
    commands = list(_COMMAND.finditer(body))
    if len(commands) != 1:
        return None
    return commands[0], html.unescape(commands[0][1]).strip(), "<command> block"
