"""A background step's event stream, picked up again where it broke off.

POST react_step {"stream": true, "background": true}
  id: 0  event: step  {step_id}      ─► the step to resume, remembered
  id: n  event: ...                  ─► the last id received, remembered
  the connection breaks (or the stream ends) before `result` / `error`
    ─► GET /api/agent/steps/{step_id}/events, Last-Event-ID: n  ─► the events after n
(at most `attempts` times in all, with the retry policy's waits between; the model is not asked
again). A stream that never named its step (another route, an older server) is not resumed.
"""

import json
from dataclasses import dataclass
from urllib.parse import quote

from reactstep.client.api.calls import Call
from reactstep.client.api.retries import Safety

STEPS = "/api/agent/steps/"
TERMINAL = frozenset({"result", "error"})


@dataclass
class Resumption:
    """What one streamed call has received so far, and the call that resumes it."""

    attempts: int
    step_id: str | None = None
    last_id: str | None = None
    ended: bool = False
    resumed: int = 0

    def saw(self, name: str, data: str, event_id: str | None) -> bool:
        """Note one event as it arrives; whether to hand it on (the `step` event is this module's own)."""
        if event_id:
            self.last_id = event_id
        if name in TERMINAL:
            self.ended = True
        if name != "step":
            return True
        try:
            found = json.loads(data).get("step_id")
        except (ValueError, AttributeError):
            found = None
        self.step_id = found if isinstance(found, str) else self.step_id
        return False

    def abandoned_path(self) -> str | None:
        """The step to DELETE when the stream is left before its end (None: nothing runs on)."""
        if self.ended or self.step_id is None:
            return None
        return f"{STEPS}{quote(self.step_id, safe='~')}"

    def next_call(self) -> Call | None:
        """The call that gets the rest of the events, or None when the stream cannot be resumed."""
        if self.ended or self.step_id is None or self.resumed + 1 >= self.attempts:
            return None
        self.resumed += 1
        headers = {} if self.last_id is None else {"last-event-id": self.last_id}
        return Call("GET", f"{STEPS}{quote(self.step_id, safe='~')}/events", Safety.SAFE, headers=headers)
