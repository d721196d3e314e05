"""What a replay's JSON report says, as `reactstep view --report` reads it.

    {"ok": false,                        did the replay follow the recording to its end
     "diverged_at": 2,                   the first step (1-based, counting react_step calls) that
                                         differed; null when ok (or when it ended early, see message)
     "message": "the action differs",    optional: one line a person reads first
     "diffs": [{"part": "system prompt", what differed (a prompt part, "observation", "action", ...)
                "diff": "--- recorded\\n+++ replayed\\n@@ ..."}]}   its unified diff text

Other keys are kept out of the way (ignored), so a later replay may say more.
"""

from pydantic import BaseModel, ConfigDict


class PartDiff(BaseModel):
    """One part of a step that differed, as a unified diff."""

    model_config = ConfigDict(extra="ignore", defer_build=True)  # built when a report is read

    part: str
    diff: str


class ReplayReport(BaseModel):
    """A replay's verdict: ok, or the step it left the recording at and what differed there."""

    model_config = ConfigDict(extra="ignore", defer_build=True)  # built when a report is read

    ok: bool
    diverged_at: int | None = None
    message: str | None = None
    diffs: list[PartDiff] = []
