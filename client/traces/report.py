"""What a replay found: the Report `reactstep replay` prints, writes with --report and `reactstep view` reads,
and the unified diffs it holds.

    {"ok": false,                        did the replay follow the recording to its end
     "format": 2, "steps": 2,            the trace's format; the react_step calls the replay made
     "diverged_at": 2,                   the first step (1-based, counting react_step calls) that
                                         differed; null when ok (or when it ended early, see message)
     "part": "system prompt",            what differed first (manifest, sampling, system prompt,
                                         message N, answer, observation, approval, call)
     "message": "the action differs",    one line a person reads first
     "diffs": [{"part": "system prompt", each part that differed, with its unified diff
                "diff": "--- recorded\\n+++ replayed\\n@@ ..."}],
     "status": "done", "live_from": null, how the replayed run ended; the first step a live LLM answered
     "live_tool_calling": null,          the tool-calling mode the live steps ran in (text, native)
     "notes": ["..."]}                   what was not compared, and why

Reading one, keys it does not know are ignored, so a later replay may say more.
"""

import difflib
from typing import Any

from pydantic import BaseModel, ConfigDict

SHOWN_DIFF_LINES = 40
FIRST_PARTS = ("manifest", "sampling", "system prompt")  # then the messages, in order


class PartDiff(BaseModel):
    """One part that differed, as a unified diff of the recorded and the replayed text."""

    model_config = ConfigDict(extra="ignore", defer_build=True)  # built on first use

    part: str
    diff: str


class Report(BaseModel):
    """A replay's verdict: ok, or the step it left the recording at, which part, and the diffs."""

    model_config = ConfigDict(extra="ignore", defer_build=True)  # built on first use

    ok: bool
    format: int | None = None
    steps: int = 0  # react_step calls the replay made
    diverged_at: int | None = None  # the step (from 1) where it left the recording
    part: str | None = None  # what differed first: manifest, sampling, system prompt, message N, ...
    message: str | None = None  # one line a person reads first
    diffs: list[PartDiff] = []
    status: str | None = None  # how the replayed run ended
    live_from: int | None = None  # the first step the live LLM answered
    live_tool_calling: str | None = None  # the tool-calling mode the live steps ran in
    notes: list[str] = []  # what was not compared, and why

    def to_json(self) -> dict[str, Any]:
        """The --report body."""
        return self.model_dump()

    def explain(self, max_diff_lines: int = SHOWN_DIFF_LINES) -> str:
        """A one-screen text summary: the verdict, the notes, the first diff."""
        if self.ok:
            lines = [f"replay matched: {self.status} after {self.steps} steps"]
            if self.live_from is not None:
                mode = f", in {self.live_tool_calling} mode" if self.live_tool_calling else ""
                lines[0] += f" (the live LLM answered from step {self.live_from}{mode})"
        else:
            lines = [f"replay diverged at step {self.diverged_at}: {self.message}"]
            others = [diff.part for diff in self.diffs[1:]]
            if others:
                lines.append(f"also differs: {', '.join(others)}")
        lines += [f"note: {note}" for note in self.notes]
        if self.diffs:
            diff_lines = self.diffs[0].diff.splitlines()
            lines += diff_lines[:max_diff_lines]
            if len(diff_lines) > max_diff_lines:
                lines.append(f"... {len(diff_lines) - max_diff_lines} more diff lines (see --report)")
        return "\n".join(lines)


def unified(part: str, recorded: str, replayed: str) -> str:
    """The unified diff of a part's recorded and replayed text."""
    lines = difflib.unified_diff(
        recorded.splitlines(keepends=True),
        replayed.splitlines(keepends=True),
        fromfile=f"recorded {part}",
        tofile=f"replayed {part}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def llm_request_diffs(
    recorded: dict[str, Any], replayed: dict[str, Any], known: dict[str, str] | None = None
) -> list[PartDiff]:
    """The parts of two llm_request answers whose hashes differ (the model aside), most telling first;
    `known`: texts by hash, for a recorded part whose text an earlier step holds."""
    was, now = recorded.get("parts", {}), replayed.get("parts", {})
    messages = sorted(
        {name for name in (*was, *now) if name.startswith("message ")}, key=lambda name: int(name.split()[1])
    )
    differing = [name for name in (*FIRST_PARTS, *messages) if was.get(name) != now.get(name)]
    texts_then = {name: (known or {}).get(digest, "") for name, digest in was.items()}
    texts_then.update(recorded.get("rendered") or {})
    texts_now = replayed.get("rendered") or {}
    return [
        PartDiff(part=name, diff=unified(name, texts_then.get(name, ""), texts_now.get(name, "")))
        for name in differing
    ]
