"""A step's prompt_fit over real HTTP: reported as counted, and pinned by a request it renders the same
prompt byte for byte on a model with another window, without counting; a pin past the history is a 422."""

from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from tests.service.step.test_budget import REACT, SEGMENT, read_step
from tests.service.step.test_react_step import step_body

RAMBLING = {"raw_output": "word " * 600, "format_error": "No action or final answer found."}


def fitted_request(history: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    return step_body(
        conversation_history=history,
        available_tools_prompt_segment=SEGMENT,
        llm_config={"max_tokens": 100},
        include_llm_request=True,
        **more,
    )


@pytest.mark.parametrize(
    ("window", "history", "fit", "notes"),
    [
        (
            1500,
            [RAMBLING, read_step(1, "word " * 600), RAMBLING],
            {"window": 1500, "elided": 2, "left_out": 0},
            [
                "The 1 oldest observation(s) were elided as the request's prompt_fit pinned.",
                "The 1 oldest unusable reply(ies) were elided as the request's prompt_fit pinned.",
            ],
        ),
        (
            450,  # every observation elided and the two oldest steps left out (one elided, not shown)
            [read_step(n, "word " * 600) for n in range(3)],
            {"window": 450, "elided": 3, "left_out": 2},
            [
                "The 3 oldest observation(s) were elided as the request's prompt_fit pinned.",
                "The 2 oldest history item(s) were left out as the request's prompt_fit pinned.",
            ],
        ),
        (
            600,  # the older steps left out, the newest observation kept whole
            [read_step(0, "word " * 600), read_step(1, "word " * 600), read_step(2, "word " * 120)],
            {"window": 600, "elided": 2, "left_out": 2},
            [
                "The 2 oldest observation(s) were elided as the request's prompt_fit pinned.",
                "The 2 oldest history item(s) were left out as the request's prompt_fit pinned.",
            ],
        ),
    ],
)
def test_a_pinned_fit_asks_the_model_the_counted_prompt_again(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    window: int,
    history: list[dict[str, Any]],
    fit: dict[str, int],
    notes: list[str],
) -> None:
    """Counted on a small window, the step says how it fitted; that fit sent back to a server whose
    window holds everything makes the same request to the model, and says it was pinned."""
    llm_server.push("Final Answer: a", "Final Answer: a")
    counted = make_client(llm_default_context_window=window).post(REACT, json=fitted_request(history)).json()
    assert counted["prompt_fit"] == fit
    pin = {"elided": fit["elided"], "left_out": fit["left_out"]}
    pinned = make_client().post(REACT, json=fitted_request(history, prompt_fit=pin)).json()
    assert pinned["llm_request"]["sha256"] == counted["llm_request"]["sha256"]
    assert llm_server.requests[1]["messages"] == llm_server.requests[0]["messages"]
    assert pinned["prompt_fit"] == pin  # no window: nothing was counted
    assert pinned["notes"] == notes


def test_a_pin_is_kept_even_over_the_window_and_nothing_fitted_reports_none(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    """A pin of nothing sends the history whole to a window it overflows: not counted, not refused."""
    llm_server.push("Final Answer: a")
    history = [read_step(n, "word " * 600) for n in range(3)]
    client = make_client(llm_default_context_window=450)
    body = client.post(REACT, json=fitted_request(history, prompt_fit={"elided": 0, "left_out": 0})).json()
    assert (body["status"], "prompt_fit" in body, "notes" in body) == ("final_answer", False, False)
    assert [m["content"] for m in llm_server.requests[0]["messages"]].count(
        f"Observation:\n<observation>\n{'word ' * 600}\n</observation>"
    ) == 3


@pytest.mark.parametrize(
    ("pin", "message"),
    [
        (
            {"elided": 3},
            "prompt_fit: elided is 3, but conversation_history holds 2 observations and unusable replies "
            "to elide",
        ),
        ({"left_out": 4}, "prompt_fit: left_out is 4, but conversation_history holds 3 items"),
        ({"elided": -1}, "prompt_fit.elided: Input should be greater than or equal to 0"),
        ({"left_out": 1, "window": 2048}, "prompt_fit.window: Extra inputs are not permitted"),
    ],
)
def test_a_pin_past_the_history_is_refused(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    pin: dict[str, int],
    message: str,
) -> None:
    history = [read_step(0, "a"), {"role": "user", "content": "hi"}, RAMBLING]
    response = make_client().post(REACT, json=fitted_request(history, prompt_fit=pin))
    assert (response.status_code, response.json()["error"]["code"]) == (422, "validation_failed")
    assert response.json()["error"]["message"] == f"the request body does not match the schema: {message}"
    assert llm_server.requests == []
