"""A client's loop recorded as JSON lines (replay.py runs one again; docs/traces.md, trace.schema.json).

A trace is one `session` line (format `version`, the project version it started from:
pinning.py, the reactstep version that recorded it), then one line per call in order:
`react_step`, `execute_action`, `client_action` (a tool the client ran itself) or `approval` (the
user's decision on a write, between the two execute_action calls of an approved one) or `step_error`
(a react_step answered with an error, or a stream ended by an `error` event: the run's last line), each with
its `step` (the react_step it belongs to, from 1), `at_ms` (since the session began), the request
sent (keys left out) and the response received (for a streamed step, the terminal `result` event;
format 2: with `llm_request`, the hashes and text of what the LLM was asked, each text written once:
a part an earlier line already holds has its hash alone).
What a run cost is the sum of its react_step answers' usage.cost_usd (CostSum, as the run goes;
trace_cost, from a trace's records); a step whose model has no price adds nothing, and is counted.
"""

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from reactstep.client.agent.loop import Question

TRACE_VERSION = 2
READ_VERSIONS = (1, 2)  # format 1 replays without the LLM request's hashes
KEY_FIELDS = ("user_api_keys", "llm_key", "api_key")


@dataclass
class CostSum:
    """What a run's steps cost, summed as they are heard (a listener of the loop): US dollars at the
    server's prices, and the steps whose model has none."""

    usd: float = 0.0
    priced_steps: int = 0
    unpriced_steps: int = 0

    def __call__(self, kind: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        """Add a react_step answer's cost."""
        if kind != "react_step" or not response.get("usage"):
            return
        cost = response["usage"].get("cost_usd")
        if isinstance(cost, int | float):
            self.usd += cost
            self.priced_steps += 1
        elif response.get("model"):  # the model was called, and has no price
            self.unpriced_steps += 1

    def total_usd(self) -> float | None:
        """The sum, rounded to a millionth of a cent; None when no step had a price."""
        return round(self.usd, 8) if self.priced_steps else None


def trace_cost(records: list[dict[str, Any]]) -> CostSum:
    """What the run a trace recorded cost."""
    total = CostSum()
    for record in records[1:]:
        total(str(record.get("kind")), record.get("request") or {}, record.get("response") or {})
    return total


class ReplayMismatch(Exception):
    """The replayed run left the recorded path."""


class TraceRecorder:
    """Appends each call of a loop to a JSON-lines file."""

    def __init__(self, stream: IO[str], question: Question, project_version: int | None = None) -> None:
        self._stream = stream
        self._started = time.monotonic()
        self._step = 0
        self._texts_written: set[str] = set()  # the hashes of the llm_request texts already in the file
        header = _without_keys(asdict(question))
        header.pop("include_llm_request", None)
        session = {"kind": "session", "version": TRACE_VERSION, "project_version": project_version}
        self._write({**session, "reactstep_version": _reactstep_version(), **header})

    def __call__(self, kind: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        """Record one call, without the keys the client lent."""
        self._step += kind in ("react_step", "step_error")
        at_ms = round((time.monotonic() - self._started) * 1000, 1)
        record = {"kind": kind, "step": self._step, "at_ms": at_ms}
        response = self._each_text_once(_without_keys(response))
        self._write({**record, "request": _without_keys(request), "response": response})

    def _each_text_once(self, response: dict[str, Any]) -> dict[str, Any]:
        """The response with only the llm_request texts no earlier line holds (the rest are known by
        their hash: the system prompt and the history are written once, not at every step)."""
        seen = response.get("llm_request")
        if not isinstance(seen, dict) or not isinstance(seen.get("rendered"), dict):
            return response
        parts: dict[str, str] = seen.get("parts") or {}
        rendered = {
            name: text
            for name, text in seen["rendered"].items()
            if parts.get(name) not in self._texts_written
        }
        self._texts_written.update(parts.get(name, "") for name in rendered)
        return {**response, "llm_request": {**seen, "rendered": rendered}}

    def _write(self, record: dict[str, Any]) -> None:
        self._stream.write(json.dumps(record) + "\n")  # key order kept: a tool schema's order is its prompt's
        self._stream.flush()


def load_trace(path: Path) -> list[dict[str, Any]]:
    """The records of a trace file; the first is the session header."""
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not records or records[0].get("kind") != "session":
        raise ReplayMismatch(f"{path} is not a reactstep trace (no session line)")
    if records[0].get("version") not in READ_VERSIONS:
        raise ReplayMismatch(
            f"{path} was recorded with trace format {records[0].get('version')}, this reactstep reads "
            f"{', '.join(map(str, READ_VERSIONS))}"
        )
    return records


def recorded_texts(records: list[dict[str, Any]]) -> dict[str, str]:
    """Every llm_request text a trace holds, by its SHA-256 (a text is written once, where first asked)."""
    texts: dict[str, str] = {}
    for record in records:
        seen = record.get("response", {}).get("llm_request") or {}
        for name, text in (seen.get("rendered") or {}).items():
            texts.setdefault(seen.get("parts", {}).get(name, ""), text)
    return texts


def _without_keys(value: Any) -> Any:
    """`value` without the fields that hold keys, at any depth."""
    if isinstance(value, dict):
        return {key: _without_keys(item) for key, item in value.items() if key not in KEY_FIELDS}
    if isinstance(value, list):
        return [_without_keys(item) for item in value]
    return value


def _reactstep_version() -> str | None:
    # imported here, when a trace is written: importlib.metadata costs every import of the client 6 ms
    from importlib.metadata import PackageNotFoundError, version

    for distribution in ("reactstep", "reactstep-client"):
        try:
            return version(distribution)
        except PackageNotFoundError:
            continue
    return None
