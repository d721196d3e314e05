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
from dataclasses import dataclass
from typing import Any

from reactstep.service.parsing.readers.reading import Reading
from reactstep.service.parsing.steps import Step
from reactstep.service.parsing.tool_args import ToolInput

SHELL_TOOLS = ("bash", "shell", "run_shell", "execute_bash", "run_command", "terminal")
_FENCE_LINE = re.compile(r"^[ \t]*```([\w+-]*)[ \t]*$", re.MULTILINE)
_SHELL_TAG = re.compile(r"bash|sh|shell|console|zsh|\w*_bash_command", re.IGNORECASE)


def read(body: str, taken: list[Step], tools: Mapping[str, Any]) -> Reading:
    """The shell command's step, when it is the reply's only step."""
    tool = next((name for name in SHELL_TOOLS if name in tools), None)
    if taken or tool is None:
        return Reading()
    found = _shell_fence(body) or _command_tags(body)
    if found is None:
        return Reading()
    (start, end), command, how = found
    given = ToolInput(text=command, notes=(f"The {how} was read as a call of {tool}.",))
    return Reading([Step(start, end, body[start:end].strip(), tool, given)])


@dataclass(frozen=True)
class _Fence:
    tag: str
    start: int  # where the opening line starts
    end: int  # where the closing line ends
    content: str


def _fences(body: str) -> list[_Fence]:
    """The closed ``` blocks, in one pass over the fence lines (an opener with a tag never closes)."""
    fences, opened = [], None
    for line in _FENCE_LINE.finditer(body):
        if opened is None:
            opened = line
        elif not line[1]:
            fences.append(
                _Fence(opened[1], opened.start(), line.end(), body[opened.end() + 1 : line.start()])
            )
            opened = None
    return fences


def _shell_fence(body: str) -> tuple[tuple[int, int], str, str] | None:
    fences = _fences(body)
    tagged = [fence for fence in fences if _SHELL_TAG.fullmatch(fence.tag)]
    if len(tagged) == 1:
        return (tagged[0].start, tagged[0].end), tagged[0].content.strip(), f"```{tagged[0].tag} block"
    last = fences[-1] if fences else None
    if not tagged and last is not None and not last.tag and not body[last.end :].strip():
        return (last.start, last.end), last.content.strip(), "``` block ending the reply"
    return None


def _command_tags(body: str) -> tuple[tuple[int, int], str, str] | None:
    """The one <command>...</command> of the reply (SWE-agent's XML format)."""
    start = body.find("<command>")
    if start < 0 or body.find("<command>", start + 1) >= 0:
        return None
    close = body.find("</command>", start)
    if close < 0:
        return None
    command = html.unescape(body[start + len("<command>") : close]).strip()
    return (start, close + len("</command>")), command, "<command> block"
