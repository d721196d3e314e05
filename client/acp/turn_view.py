"""What the editor is shown of one turn: the loop's calls (kind, request, response, as a trace records
them) turned into ACP session updates. A live turn and a loaded one (session_load.py) are drawn alike.

    thought delta                      ─► agent_thought_chunk
    react_step action_proposed         ─► tool_call (kind, title, locations, pending), usage_update
    execute_action with an approval    ─► tool_call_update: the diff (diff content), awaiting the person
    approval {approved: false}         ─► tool_call_update failed: rejected, nothing written
    execute_action / client_action     ─► tool_call_update completed | failed, the observation
    react_step final_answer            ─► agent_message_chunk
    react_step loop_detected           ─► agent_message_chunk saying why the run stopped
"""

from pathlib import Path
from typing import Any

from acp import start_tool_call, update_agent_message_text, update_agent_thought_text, update_tool_call
from acp.schema import ToolCallStatus, UsageUpdate

from reactstep.client.acp.tool_view import (
    diff_content,
    kind_of,
    locations_of,
    path_of,
    text_content,
    title_of,
)
from reactstep.client.agent.loop import REJECTED

Update = Any  # one of the SDK's session update models
# Stop reasons by the loop's last status (stop_reason_of); a truncated reply at the end: max_tokens.
STOP_REASONS = {
    "final_answer": "end_turn",
    "max_iterations_reached": "max_turn_requests",
    "loop_detected": "refusal",
}
LOOP_STOPPED = "Stopped: the model kept proposing what it had already tried."


class TurnView:
    """The session updates of one turn's calls, in order; `before` is the file text a write's diff was
    made from (the server's copy, fetched by the caller), for its diff content."""

    def __init__(self, root: Path, turn: int, window: int) -> None:
        self.root = root
        self.turn = turn
        self.window = window  # the context window the usage meter shows (the server's when it says)
        self.step = 0
        self.call_id = ""
        self.tool_name = ""
        self._thought_streamed = False

    def thought(self, delta: str) -> Update:
        """A piece of the step's thought as the model writes it."""
        self._thought_streamed = True
        return update_agent_thought_text(delta)

    def updates(
        self, kind: str, request: dict[str, Any], response: dict[str, Any], before: str | None = None
    ) -> list[Update]:
        """The updates one call of the loop brings."""
        if kind == "react_step":
            return self._step(response)
        if kind == "execute_action":
            return self._executed(request, response, before)
        if kind == "approval" and not response.get("approved"):
            return [update_tool_call(self.call_id, status="failed", content=text_content(REJECTED))]
        if kind == "client_action":
            return [self._finished(response)]
        return []

    def _step(self, response: dict[str, Any]) -> list[Update]:
        self.step += 1
        shown: list[Update] = []
        thought = response.get("thought") or ""
        if thought and not self._thought_streamed:
            shown.append(update_agent_thought_text(thought))
        self._thought_streamed = False
        shown.extend(self._usage(response))
        status = response.get("status")
        action = response.get("action_details")
        if status == "action_proposed" and action:
            self.call_id = f"{self.turn}.{self.step}"
            self.tool_name = action["tool_name"]
            args = action.get("tool_args") or {}
            shown.append(
                start_tool_call(
                    self.call_id,
                    title_of(self.tool_name, args),
                    kind=kind_of(self.tool_name),
                    status="pending",
                    locations=locations_of(self.root, args),
                    raw_input=args,
                )
            )
        elif status == "final_answer":
            shown.append(update_agent_message_text(response.get("final_answer") or ""))
        elif status == "loop_detected":
            shown.append(update_agent_message_text(LOOP_STOPPED))
        return shown

    def _executed(
        self, request: dict[str, Any], response: dict[str, Any], before: str | None
    ) -> list[Update]:
        approval = response.get("approval") or {}
        if not approval.get("required"):
            return [self._finished(response)]
        path = path_of(request.get("tool_args") or {}) or ""
        content = diff_content(self.root, path, before, approval.get("diff") or "")
        return [update_tool_call(self.call_id, status="pending", content=content)]

    def _finished(self, observed: dict[str, Any]) -> Update:
        status: ToolCallStatus = "failed" if observed.get("is_error") else "completed"
        text = str(observed.get("observation", ""))
        return update_tool_call(self.call_id, status=status, content=text_content(text), raw_output=text)

    def _usage(self, response: dict[str, Any]) -> list[Update]:
        usage = response.get("usage") or {}
        used = int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
        if not used:
            return []  # the LLM was not called
        self.window = int((response.get("prompt_fit") or {}).get("window") or self.window)
        return [UsageUpdate(session_update="usage_update", used=used, size=max(self.window, used))]


def stop_reason_of(status: str, last_step_status: str | None) -> str:
    """The ACP stop reason of a run that ended with `status` (its last step's status beside it)."""
    if status == "max_iterations_reached" and last_step_status == "truncated_output":
        return "max_tokens"
    return STOP_REASONS.get(status, "end_turn")
