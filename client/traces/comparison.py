"""A replay's comparison: each call the loop makes, checked against the next recorded one.

The Comparer listens to the loop (replay.py drives it): while the replay follows the recording it
compares each step's LLM request (strict mode), its answer or error code, and each observation, and
raises Diverged at the first difference; from `from_step` on the live LLM answers and nothing is
compared. It also decides the approvals as recorded.
"""

import json
from typing import Any

from reactstep.client.agent.loop import ApprovalRequest, Approver, Question
from reactstep.client.traces.format import ReplayMismatch, recorded_texts
from reactstep.client.traces.report import PartDiff, llm_request_diffs, unified

ANSWER_FIELDS = ("status", "thought", "action_details", "final_answer", "format_error")
OBSERVATION_FIELDS = {
    "execute_action": ("tool_name", "observation", "is_error", "approval"),
    "client_action": ("observation", "is_error"),
    "approval": ("approved",),
}
VOLATILE_APPROVAL_FIELDS = ("token", "expires_at")  # new on every run; the diff is what must match


class Diverged(ReplayMismatch):
    """The replay left the recording at `step`; `part` differed."""

    def __init__(self, step: int, part: str, message: str, diffs: list[PartDiff]) -> None:
        super().__init__(f"step {step}: {message}")
        self.step, self.part, self.message, self.diffs = step, part, message, diffs


def _compared(response: dict[str, Any], name: str) -> Any:
    """A response field as replay compares it: an action by what it does, not how it was written
    (a native tool call is written canonically; a text-mode model wrote it its own way)."""
    value = response.get(name)
    if name == "action_details" and isinstance(value, dict):
        return {key: item for key, item in value.items() if key != "raw_action_string"}
    if name == "approval" and isinstance(value, dict):
        return {key: item for key, item in value.items() if key not in VOLATILE_APPROVAL_FIELDS}
    return value


def _said(kind: str, response: dict[str, Any]) -> str:
    """A replayed call as the verdict names it: a step error with its status, code and message."""
    if kind != "step_error":
        return kind
    return f"step_error {response.get('status')} {response.get('code')}: {response.get('message')}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=1, sort_keys=True) + "\n"


class Comparer:
    """A loop listener that checks each call against the next recorded one."""

    def __init__(
        self,
        expected: list[dict[str, Any]],
        strict: bool,
        question: Question,
        from_step: int | None,
        live: dict[str, Any] | None,
    ) -> None:
        self._expected = expected
        self._texts = recorded_texts(expected)
        self._position = 0
        self._strict = strict
        self._question = question
        self._from_step = from_step
        self._live = live
        self.step = 0
        self.live_from: int | None = None
        self.ended_in: str | None = None  # the error code of a recorded step_error the replay met too
        self.replayed_error: str | None = None  # the code of an error the replay met where it diverged
        self._live_modes: list[str] = []  # the tool-calling mode each live step ran in

    def _compared_now(self) -> bool:
        return self.live_from is None

    def live_mode(self) -> str | None:
        """The tool-calling mode the live steps ran in ("text", "native", or both as "text, native")."""
        return ", ".join(sorted(set(self._live_modes))) or None

    def finished(self, steps: int) -> None:
        """The run ended: every recorded call must have been reached (unless the live LLM took over)."""
        left = len(self._expected) - self._position
        if left and self._compared_now():
            message = f"the replay ended after {steps} steps; {left} recorded calls remain"
            raise Diverged(self.step, "end", message, [])

    def decision(self, approve: Approver) -> Approver:
        """The approver: the recorded decision while replaying, `approve` once the live LLM answers."""

        def decide(call: ApprovalRequest) -> Any:
            if not self._compared_now():
                return approve(call)
            record = self._expected[self._position] if self._position < len(self._expected) else None
            if record is None or record["kind"] != "approval":
                message = f"the server asks to approve {call.tool_name}, which the recording did not"
                raise Diverged(self.step, "approval", message, [])
            return bool(record["response"]["approved"])

        return decide

    def __call__(self, kind: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        if kind in ("react_step", "step_error"):
            self.step += 1
            if self._from_step is not None and self.step == self._from_step + 1:
                self.live_from = self.step
        if not self._compared_now():
            if kind == "react_step" and response.get("tool_calling"):
                self._live_modes.append(str(response["tool_calling"]))
            return
        self._position += 1
        if self._position > len(self._expected):
            raise Diverged(self.step, "end", f"{kind} is past the end of the recording", [])
        record = self._expected[self._position - 1]
        if kind == "step_error":
            self.replayed_error = str(response.get("code"))
        if record["kind"] != kind:
            message = f"recorded {record['kind']}, replayed {_said(kind, response)}"
            diffs = [PartDiff(part="call", diff=unified("call", record["kind"], kind))]
            raise Diverged(self.step, "call", message, diffs)
        if kind == "step_error":
            self._check_error(record["response"], response)
            self.ended_in = response["code"]
        elif kind == "react_step":
            self._check_llm_request(record["response"], response)
            self._check_fields(record["response"], response, ANSWER_FIELDS, "answer")
            if self.step == self._from_step and self._live is not None:
                self._question.llm_config = self.live_config()  # the next step asks the live LLM
        else:
            self._check_fields(record["response"], response, OBSERVATION_FIELDS[kind], "observation")

    def live_config(self) -> dict[str, Any]:
        """The replayed llm config (sampling, reply format, tool-calling mode) with the live model: the
        server's default LLM, or the one `live` names, instead of replay's scripted one."""
        replayed = {
            k: v
            for k, v in self._question.llm_config.items()
            if k not in ("model", "api_base", "tool_results")
        }
        return replayed | dict(self._live or {})

    def _check_error(self, recorded: dict[str, Any], replayed: dict[str, Any]) -> None:
        if recorded.get("code") != replayed.get("code"):
            message = f"recorded {recorded.get('code')}, replayed {_said('step_error', replayed)}"
            diff = unified("code", _text(recorded.get("code")), _text(replayed.get("code")))
            raise Diverged(self.step, "error", message, [PartDiff(part="code", diff=diff)])

    def _check_llm_request(self, recorded: dict[str, Any], replayed: dict[str, Any]) -> None:
        if not self._strict or "llm_request" not in recorded:
            return
        diffs = llm_request_diffs(recorded["llm_request"], replayed.get("llm_request") or {}, self._texts)
        if diffs:
            raise Diverged(self.step, diffs[0].part, f"the LLM was asked another {diffs[0].part}", diffs)

    def _check_fields(
        self, recorded: dict[str, Any], replayed: dict[str, Any], names: tuple[str, ...], part: str
    ) -> None:
        then, now = ({name: _compared(side, name) for name in names} for side in (recorded, replayed))
        diffs = [
            PartDiff(part=name, diff=unified(name, _text(then[name]), _text(now[name])))
            for name in names
            if then[name] != now[name]
        ]
        if diffs:
            what = diffs[0].part
            tool = f" of {replayed.get('tool_name')}" if replayed.get("tool_name") else ""
            named = part if part in ("observation", "error") else what
            raise Diverged(self.step, named, f"{what}{tool} differs", diffs)
