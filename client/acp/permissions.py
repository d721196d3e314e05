"""The person decides on a write (and on a shell command): session/request_permission, and what the
session remembers of the answers.

    allow_once     this call runs (a server write: the approval token goes with the repeated call)
    allow_always   this call runs, and so will this tool's later calls in this session, unasked
    reject_once    this call does not run
    reject_always  this call does not run, nor this tool's later calls in this session, unasked
The token itself never leaves the loop (agent/loop.py): the model's history holds the observation.
"""

from dataclasses import dataclass, field
from typing import Any

from acp.schema import PermissionOption, ToolCallUpdate

OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
    PermissionOption(
        option_id="allow_always", name="Always allow this tool in this session", kind="allow_always"
    ),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(
        option_id="reject_always", name="Always reject this tool in this session", kind="reject_always"
    ),
]
ALLOWING = ("allow_once", "allow_always")


@dataclass
class Remembered:
    """A session's standing answers, by tool name."""

    allowed: set[str] = field(default_factory=set)
    rejected: set[str] = field(default_factory=set)

    def standing(self, tool_name: str) -> bool | None:
        """The answer given for every call of this tool, or None: ask."""
        if tool_name in self.allowed:
            return True
        return False if tool_name in self.rejected else None

    def keep(self, tool_name: str, option_id: str) -> bool:
        """Remember an `_always` answer for this tool; whether the option allows the call."""
        if option_id == "allow_always":
            self.allowed.add(tool_name)
        elif option_id == "reject_always":
            self.rejected.add(tool_name)
        return option_id in ALLOWING


async def ask_person(
    client: Any, session_id: str, remembered: Remembered, tool_name: str, tool_call: ToolCallUpdate
) -> bool:
    """Whether the call may run: the session's standing answer, else the person's (a cancelled
    question, or an option this agent did not offer, runs nothing)."""
    if (standing := remembered.standing(tool_name)) is not None:
        return standing
    answer = await client.request_permission(session_id=session_id, tool_call=tool_call, options=OPTIONS)
    outcome = answer.outcome
    if getattr(outcome, "outcome", "") != "selected":
        return False
    return remembered.keep(tool_name, outcome.option_id)
