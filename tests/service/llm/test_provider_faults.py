"""Provider faults over real HTTP: retried with backoff inside the deadline, then 502/503/504 with a code."""

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import Fault, Reply, ScriptedLLMServer, ScriptItem
from reactstep.service.errors import LLMBadResponse, LLMRateLimited, UpstreamError
from reactstep.service.llm.config import llm_timeout_s
from reactstep.service.settings import Settings
from reactstep.service.step.call import Attempts
from reactstep.service.step.prepare import RetryPolicy
from tests.service.step.test_react_step import step_body

REACT = "/api/agent/react_step"
ANSWER = "Final Answer: 42"
SLOW = Reply("Final Answer: too late", delay_s=0.6)


@pytest.mark.parametrize(
    ("script", "settings", "status", "code", "calls", "retries"),
    [
        ((Fault(status=429), ANSWER), {}, 200, None, 2, 1),
        ((Fault(status=500), Fault(status=503), ANSWER), {}, 200, None, 3, 2),
        # a 500 that comes back word for word is the server's answer to this call: not retried again
        ((Fault(status=500, message="tool choice is not supported"),) * 2, {}, 503, "llm_unavailable", 2, 1),
        ((Fault(status=500, message="one"), Fault(status=500, message="two"), ANSWER), {}, 200, None, 3, 2),
        ((SLOW, ANSWER), {"llm_timeout_s": 0.3}, 200, None, 2, 1),
        ((Fault(status=429),) * 3, {"llm_max_retries": 2}, 503, "llm_rate_limited", 3, 2),
        ((Fault(status=502),) * 2, {"llm_max_retries": 1}, 503, "llm_unavailable", 2, 1),
        (
            (SLOW, SLOW),
            {"llm_timeout_s": 0.3, "llm_max_retries": 1},
            504,
            "llm_timeout",
            2,
            1,
        ),
        # the retry stalls until the deadline: the answer names the fault that made it retry
        (
            (Fault(status=503), Reply(ANSWER, delay_s=4.0)),
            {"llm_timeout_s": 10.0, "llm_deadline_s": 3.0, "llm_retry_base_s": 0.05},
            503,
            "llm_unavailable",
            2,
            1,
        ),
        ((Fault(status=401), ANSWER), {}, 502, "llm_auth_failed", 1, 0),
        ((Fault(status=403), ANSWER), {}, 502, "llm_auth_failed", 1, 0),
        ((Fault(status=400), ANSWER), {}, 502, "llm_bad_response", 1, 0),
        ((Fault(status=404), ANSWER), {}, 502, "llm_bad_response", 1, 0),
    ],
)
def test_faults_are_retried_then_surface_with_a_code(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    script: tuple[ScriptItem, ...],
    settings: dict[str, Any],
    status: int,
    code: str | None,
    calls: int,
    retries: int,
) -> None:
    llm_server.push(*script)
    response = make_client(**settings).post(REACT, json=step_body())
    assert response.status_code == status
    body = response.json()
    if code is None:
        assert (body["status"], body["timing"]["retries"]) == ("final_answer", retries)
    else:
        assert body["error"]["code"] == code
        after = {0: "", 1: " (after 1 retry)"}.get(retries, f" (after {retries} retries)")
        assert body["error"]["message"].endswith(after)
        assert "(after " not in body["error"]["message"] or retries
    assert len(llm_server.requests) == calls


def test_retry_after_is_honoured(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(Fault(status=429, retry_after="0.3"), ANSWER)
    body = make_client().post(REACT, json=step_body()).json()
    assert (body["status"], body["timing"]["retries"]) == ("final_answer", 1)
    assert body["timing"]["llm_ms"] >= 300


def test_a_retry_after_past_the_deadline_gives_up_at_once(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(Fault(status=429, retry_after="30"), ANSWER)
    response = make_client(llm_deadline_s=2.0).post(REACT, json=step_body())
    assert (response.status_code, response.json()["error"]["code"]) == (503, "llm_rate_limited")
    assert len(llm_server.requests) == 1


def test_the_deadline_bounds_every_attempt(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(*[SLOW] * 5)
    client = make_client(llm_timeout_s=5.0, llm_deadline_s=0.4, llm_max_retries=5)
    response = client.post(REACT, json=step_body())
    assert (response.status_code, response.json()["error"]["code"]) == (504, "llm_timeout")
    assert len(llm_server.requests) == 1


def test_usage_reports_cached_tokens(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(Reply(ANSWER, cached_tokens=7))
    body = make_client().post(REACT, json=step_body()).json()
    assert body["usage"]["cached_tokens"] == 7
    assert body["usage"]["completion_tokens"] == len(ANSWER) // 4


@pytest.mark.parametrize(("said", "reported"), [(None, None), (0, 0)])
def test_cached_tokens_are_unknown_when_the_provider_does_not_say(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    said: int | None,
    reported: int | None,
) -> None:
    """null, not 0, when the usage names no cached tokens; a 0 the provider reports stays 0."""
    llm_server.push(Reply(ANSWER, cached_tokens=said), Reply(ANSWER, cached_tokens=said))
    client = make_client()
    assert client.post(REACT, json=step_body()).json()["usage"]["cached_tokens"] == reported
    events = client.post(REACT, json=step_body(stream=True)).text
    assert f'"cached_tokens":{json.dumps(reported)}' in events.replace(" ", "")


POLICY = RetryPolicy(max_retries=10, deadline_s=60.0, base_delay_s=1.0, max_delay_s=8.0)


@pytest.mark.parametrize(
    ("error", "bounds"),
    [
        (LLMRateLimited("x"), [(0.5, 1.0), (1.0, 2.0), (2.0, 4.0), (4.0, 8.0), (4.0, 8.0)]),
    ],
)
def test_backoff_doubles_with_bounded_jitter(error: UpstreamError, bounds: list[tuple[float, float]]) -> None:
    attempts = Attempts(POLICY, seed="s-1:0")
    delays = []
    for low, high in bounds:
        delay = attempts.delay_s(error)
        assert low <= delay <= high
        delays.append(delay)
        attempts.retries += 1
    assert _delays("s-1:0", error, len(bounds)) == delays  # the same request waits the same
    assert _delays("s-2:0", error, len(bounds)) != delays  # another spreads out


def _delays(seed: str, error: UpstreamError, count: int) -> list[float]:
    attempts = Attempts(POLICY, seed=seed)
    delays = []
    for _ in range(count):
        delays.append(attempts.delay_s(error))
        attempts.retries += 1
    return delays


def test_retry_after_replaces_the_backoff() -> None:
    error = LLMRateLimited("x")
    error.retry_after_s = 2.5
    assert Attempts(POLICY, seed="s").delay_s(error) == 2.5


def test_non_retryable_errors_are_raised_at_once() -> None:
    attempts = Attempts(POLICY, seed="s")
    error = LLMBadResponse("bad")
    with pytest.raises(LLMBadResponse) as raised:
        asyncio.run(attempts.back_off(error))
    assert raised.value is error
    assert attempts.retries == 0


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"llm_timeout_s": 0.3, "llm_max_retries": 0},
            "the LLM did not answer within 0.3 s; a slow model needs a larger REACTSTEP_LLM_TIMEOUT_S",
        ),
        (  # a deadline set below the timeout is what cut the model off
            {"llm_timeout_s": 5.0, "llm_deadline_s": 0.4},
            "the LLM did not answer within 0.4 s; a slow model needs a larger REACTSTEP_LLM_DEADLINE_S",
        ),
    ],
)
def test_a_timeout_names_the_setting_that_gives_a_slow_model_more_time(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    settings: dict[str, Any],
    message: str,
) -> None:
    llm_server.push(SLOW, SLOW)
    error = make_client(**settings).post(REACT, json=step_body()).json()["error"]
    assert (error["code"], error["message"]) == ("llm_timeout", message)


@pytest.mark.parametrize(
    ("timeout_s", "deadline_s", "api_base", "call_s", "step_s", "named"),
    [
        (None, None, "https://api.example.com/v1", 60.0, 60.0, "REACTSTEP_LLM_TIMEOUT_S"),
        (None, None, None, 60.0, 60.0, "REACTSTEP_LLM_TIMEOUT_S"),
        # a model server on this machine (a CPU model's cold first step takes minutes) gets 300 s
        (None, None, "http://127.0.0.1:8080/v1", 300.0, 300.0, "REACTSTEP_LLM_TIMEOUT_S"),
        (None, None, "http://localhost:11434/v1", 300.0, 300.0, "REACTSTEP_LLM_TIMEOUT_S"),
        (None, None, "http://[::1]:8000/v1", 300.0, 300.0, "REACTSTEP_LLM_TIMEOUT_S"),
        # one setting raised is enough: the step's deadline follows it
        (600.0, None, "https://api.example.com/v1", 600.0, 600.0, "REACTSTEP_LLM_TIMEOUT_S"),
        (10.0, None, "http://127.0.0.1:8080/v1", 10.0, 60.0, "REACTSTEP_LLM_TIMEOUT_S"),
        (600.0, 90.0, None, 600.0, 90.0, "REACTSTEP_LLM_DEADLINE_S"),
    ],
)
def test_one_setting_gives_a_slow_model_time(
    timeout_s: float | None,
    deadline_s: float | None,
    api_base: str | None,
    call_s: float,
    step_s: float,
    named: str,
) -> None:
    settings = Settings(llm_timeout_s=timeout_s, llm_deadline_s=deadline_s)
    assert llm_timeout_s(settings, api_base) == call_s
    policy = RetryPolicy.from_settings(settings, call_s)
    assert (policy.deadline_s, policy.deadline_setting) == (step_s, named)


def test_a_repeated_internal_error_reaches_the_answer_word_for_word(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    fault = Fault(status=500, message="Automatic streaming tool choice is not supported")
    llm_server.push(fault, fault, ANSWER)
    response = make_client().post(REACT, json=step_body())
    assert response.status_code == 503
    assert response.json()["error"]["message"] == (
        "the LLM provider is unavailable (HTTP 500): Automatic streaming tool choice is not supported "
        "(after 1 retry)"
    )
    assert len(llm_server.requests) == 2
