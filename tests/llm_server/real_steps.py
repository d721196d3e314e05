"""What every test against the real model sends and asserts (a 135M model reasons badly: what must hold
whatever it says: a valid status, usage counted, the stop sequence honoured, never a 5xx)."""

import json
from typing import Any

import httpx

from tests.llm_server.conftest import MODEL

REACT = "/api/agent/react_step"
QUESTION = "What does main in src/app.py return?"
MAX_TOKENS = 64  # short replies keep a step to seconds on two cores
STATUSES = {"action_proposed", "final_answer", "format_error", "truncated_output"}
ENDINGS = {"final_answer", "max_iterations_reached", "loop_detected"}  # how a run ends


def step_body(**fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"project_id": "demo", "session_id": "real-1", "user_query": QUESTION, **fields}
    body["llm_config"] = {"max_tokens": MAX_TOKENS, **body.get("llm_config", {})}
    return body


def step(url: str, **fields: Any) -> dict[str, Any]:
    response = httpx.post(f"{url}{REACT}", json=step_body(**fields), timeout=300)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    show(result)
    return result


def show(result: dict[str, Any]) -> None:
    """What the model did, for `pytest -s`."""
    print(json.dumps({key: result.get(key) for key in ("status", "raw_output", "usage", "timing")}))


def assert_plumbing(result: dict[str, Any]) -> None:
    """What holds whatever the model says."""
    assert result["status"] in STATUSES
    assert result["model"] == MODEL
    usage = result["usage"]
    assert usage["prompt_tokens"] > 0
    assert usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert result["timing"]["llm_ms"] > 0
    if result["status"] in ("format_error", "truncated_output"):
        assert result["format_error"]
        assert result["raw_output"] is not None
    if result["status"] == "action_proposed":
        assert result["action_details"]["tool_name"]
    if result["status"] == "final_answer":
        assert result["final_answer"]


def parse_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    """(name, data) of each event in an SSE body."""
    events = []
    for block in text.split("\n\n"):
        if block.strip():
            lines = dict(line.split(": ", 1) for line in block.splitlines())
            events.append((lines["event"], json.loads(lines["data"])))
    return events
