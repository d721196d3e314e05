"""One ```bash block as the whole action (mini-swe-agent, SWE-agent style), for a shell tool.

Read only when no other format found a step, the reply holds exactly one shell block, and the
request offers a shell tool; its command is the tool's one input, with a note.
"""

import re
from collections.abc import Mapping
from typing import Any

from reactstep.service.parsing.readers.reading import Reading
from reactstep.service.parsing.steps import Step
from reactstep.service.parsing.tool_args import ToolInput

SHELL_TOOLS = ("bash", "shell", "run_shell", "execute_bash", "run_command", "terminal")
_SHELL_BLOCK = re.compile(r"^[ \t]*```(?:bash|sh|shell|console)[ \t]*\n(.*?)^[ \t]*```", re.M | re.S)


def read(body: str, taken: list[Step], tools: Mapping[str, Any]) -> Reading:
    """The shell block's step, when it is the reply's only step."""
    tool = next((name for name in SHELL_TOOLS if name in tools), None)
    if taken or tool is None:
        return Reading()
    blocks = list(_SHELL_BLOCK.finditer(body))
    if len(blocks) != 1:
        return Reading()
    block = blocks[0]
    note = f"The ```bash block was read as a call of {tool}."
    given = ToolInput(text=block[1].strip(), notes=(note,))
    return Reading([Step(block.start(), block.end(), block.group().strip(), tool, given)])
