"""react_step in text mode against a real model (SmolLM2-135M on llama-cpp-python's server), plain and
streamed. The text tests run before the native ones: the server keeps the last prompt's prefix evaluated."""

import time

import httpx
import pytest

from reactstep.service.llm.config import TEXT_STOP
from tests.llm_server.real_steps import REACT, assert_plumbing, parse_events, show, step, step_body

pytestmark = pytest.mark.llm_server


def test_a_text_step_is_parsed_or_answered_with_a_format_error(reactstep_url: str) -> None:
    result = step(reactstep_url, llm_config={"tool_calling": "text"})
    assert_plumbing(result)
    assert result["tool_calling"] == "text"
    for stop in TEXT_STOP:  # the server stops before the model writes an observation of its own
        assert stop not in (result.get("raw_output") or "")
        assert stop not in result.get("thought", "")


def test_a_streamed_text_step_sends_thought_deltas_then_its_result(reactstep_url: str) -> None:
    started = time.perf_counter()
    first_event = None
    body = ""
    request = step_body(stream=True, llm_config={"tool_calling": "text"})
    with httpx.stream("POST", f"{reactstep_url}{REACT}", json=request, timeout=300) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
        for chunk in response.iter_text():
            first_event = first_event or time.perf_counter() - started
            body += chunk
    *thoughts, (last, result) = parse_events(body)
    show(result)
    print(f"first event after {first_event:.2f} s, {len(thoughts)} thought deltas")
    assert last == "result"
    assert_plumbing(result)
    assert {name for name, _ in thoughts} <= {"thought"}
    assert "".join(data["delta"] for _, data in thoughts) == result["thought"]
