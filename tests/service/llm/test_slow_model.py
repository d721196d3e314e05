"""A model that takes 90 s to answer (a CPU model's cold first step), on a real loopback server: with no
setting a model server on this machine gets its time; one raised setting gives any model its time; the
hosted default (60 s) answers 504 naming the one setting to raise. The three run side by side (~90 s)."""

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer
from tests.service.step.test_react_step import step_body

SLOW_S = 90.0
REACT = "/api/agent/react_step"
CASES: dict[str, dict[str, Any]] = {
    "no setting, a loopback model server": {"llm_timeout_s": None},
    "REACTSTEP_LLM_TIMEOUT_S=120": {"llm_timeout_s": 120.0},
    "REACTSTEP_LLM_TIMEOUT_S=60, the hosted default": {"llm_timeout_s": 60.0},
}


def test_a_90_s_model_answers_within_one_setting(make_client: Callable[..., TestClient]) -> None:
    def ask(settings: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        with ScriptedLLMServer([Reply("Final Answer: slow but sure", delay_s=SLOW_S)]) as llm:
            client = make_client(llm_api_base=llm.base_url, **settings)
            started = time.monotonic()
            response = client.post(REACT, json=step_body(), timeout=SLOW_S * 3)
            return response.status_code, response.json(), time.monotonic() - started

    with ThreadPoolExecutor(len(CASES)) as pool:
        answers = dict(zip(CASES, pool.map(ask, CASES.values()), strict=True))
    for name in list(CASES)[:2]:
        status, body, took = answers[name]
        assert (status, body["status"], body["final_answer"]) == (200, "final_answer", "slow but sure"), name
        assert took >= SLOW_S
    status, body, took = answers["REACTSTEP_LLM_TIMEOUT_S=60, the hosted default"]
    assert (status, body["error"]["code"]) == (504, "llm_timeout")
    assert body["error"]["message"] == (
        "the LLM did not answer within 60 s; a slow model needs a larger REACTSTEP_LLM_TIMEOUT_S"
    )
    assert 60 <= took < SLOW_S
