"""Replay a trace: the recorded model replies served back, the same loop run, each call compared.

Replay starts a scripted LLM on loopback that answers each step from the recording (the `raw_output`
to a text-mode request, the action as a native tool call to a native one, so a trace replays in
either tool-calling mode), drives the same loop (client tools run again; approvals are decided as
recorded, nobody is asked), and stops at the first step whose action, answer, observation or
decision differs from the recording.
"""

import json
from typing import Any

from reactstep.client.client import Client
from reactstep.client.loop import ApprovalRequest, LocalSide, Question, RunResult, ToolRunner, run_loop
from reactstep.client.scripted_llm import Recorded, ScriptedLLMServer
from reactstep.client.trace import ReplayMismatch

COMPARED_FIELDS = {
    "react_step": ("status", "thought", "action_details", "final_answer", "format_error"),
    "execute_action": ("tool_name", "observation", "is_error", "approval"),
    "client_action": ("observation", "is_error"),
    "approval": ("approved",),
}
VOLATILE_APPROVAL_FIELDS = ("token", "expires_at")  # new on every run; the diff is what must match


def recorded_replies(records: list[dict[str, Any]]) -> list[Recorded]:
    """The model replies of the recording, in order, as the steps that answered them."""
    return [
        Recorded(record["response"])
        for record in records
        if record["kind"] == "react_step" and "raw_output" in record["response"]
    ]


def replay(
    records: list[dict[str, Any]],
    server_url: str,
    llm: ScriptedLLMServer,
    tool_calling: str | None = None,
    stream: bool = False,
    run_tool: ToolRunner | None = None,
    api_key: str | None = None,
) -> RunResult:
    """Re-run the recorded loop against a server; raise ReplayMismatch at the first difference."""
    header = records[0]
    llm_config = {"model": "openai/replay", "api_base": llm.base_url}
    if tool_calling:
        llm_config["tool_calling"] = tool_calling
    # How plain text reads is part of what was recorded: the replay asks for it the same way.
    steps = [record["request"] for record in records if record["kind"] == "react_step"]
    if steps and (reply_format := steps[0].get("llm_config", {}).get("reply_format")):
        llm_config["reply_format"] = reply_format
    question = Question(
        project_id=header["project_id"],
        session_id=header["session_id"],
        user_query=header["user_query"],
        max_iterations=header["max_iterations"],
        llm_config=llm_config,
        stream=stream,
        client_tools=header.get("client_tools", []),
    )
    comparer = _Comparer(records[1:])
    local = LocalSide(run_tool, approve=comparer.recorded_decision, listeners=[comparer])
    with Client(server_url, api_key) as client:
        outcome = client.do(run_loop(question, local))
    left = comparer.remaining()
    if left:
        raise ReplayMismatch(f"the replay ended after {outcome.steps} steps; {left} recorded calls remain")
    return outcome


def _compared(response: dict[str, Any], name: str) -> Any:
    """A response field as replay compares it: an action by what it does, not how it was written
    (a native tool call is written canonically; a text-mode model wrote it its own way)."""
    value = response.get(name)
    if name == "action_details" and isinstance(value, dict):
        return {key: item for key, item in value.items() if key != "raw_action_string"}
    if name == "approval" and isinstance(value, dict):
        return {key: item for key, item in value.items() if key not in VOLATILE_APPROVAL_FIELDS}
    return value


class _Comparer:
    """A loop listener that checks each call against the next recorded one."""

    def __init__(self, expected: list[dict[str, Any]]) -> None:
        self._expected = expected
        self._position = 0

    def remaining(self) -> int:
        """How many recorded calls the replay has not reached."""
        return len(self._expected) - self._position

    def recorded_decision(self, call: ApprovalRequest) -> bool:
        """The user's recorded answer to the approval the replay is asking for now."""
        record = self._expected[self._position] if self.remaining() else None
        if record is None or record["kind"] != "approval":
            raise ReplayMismatch(
                f"call {self._position + 1}: the server asks to approve {call.tool_name}, "
                "which the recording did not"
            )
        return bool(record["response"]["approved"])

    def __call__(self, kind: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        self._position += 1
        if self._position > len(self._expected):
            raise ReplayMismatch(f"call {self._position} ({kind}) is past the end of the recording")
        record = self._expected[self._position - 1]
        if record["kind"] != kind:
            raise ReplayMismatch(f"call {self._position}: recorded {record['kind']}, replayed {kind}")
        for name in COMPARED_FIELDS[kind]:
            recorded, replayed = _compared(record["response"], name), _compared(response, name)
            if recorded != replayed:
                raise ReplayMismatch(
                    f"call {self._position} ({kind}): {name} differs\n"
                    f"  recorded: {json.dumps(recorded)[:500]}\n"
                    f"  replayed: {json.dumps(replayed)[:500]}"
                )
