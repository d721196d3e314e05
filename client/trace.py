"""A client's loop recorded as JSON lines (replay.py runs one again).

A trace is one `session` line (with the project version it started from: trace_version.py), then
one line per call in order: `react_step`, `execute_action`,
`client_action` (a tool the client ran itself) or `approval` (the user's decision on a write, between
the two execute_action calls of an approved one), each with the request sent (keys left out) and the
response received (for a streamed step, the terminal `result` event).
"""

import json
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from reactstep.client.loop import Question

TRACE_VERSION = 1


class ReplayMismatch(Exception):
    """The replayed run left the recorded path."""


class TraceRecorder:
    """Appends each call of a loop to a JSON-lines file."""

    def __init__(self, stream: IO[str], question: Question, project_version: int | None = None) -> None:
        self._stream = stream
        header = asdict(question)
        header.pop("llm_key")
        self._write(
            {"kind": "session", "version": TRACE_VERSION, "project_version": project_version, **header}
        )

    def __call__(self, kind: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        """Record one call, without the keys the client lent."""
        shown = {key: value for key, value in request.items() if key != "user_api_keys"}
        self._write({"kind": kind, "request": shown, "response": response})

    def _write(self, record: dict[str, Any]) -> None:
        self._stream.write(json.dumps(record, sort_keys=True) + "\n")
        self._stream.flush()


def load_trace(path: Path) -> list[dict[str, Any]]:
    """The records of a trace file; the first is the session header."""
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not records or records[0].get("kind") != "session":
        raise ReplayMismatch(f"{path} is not a reactstep trace (no session line)")
    if records[0].get("version") != TRACE_VERSION:
        raise ReplayMismatch(f"{path} has trace version {records[0].get('version')}")
    return records
