"""/readyz answers within its deadline from its first call: the `llm` verdict (litellm's tables,
seconds to import) is made in the background and reads `warming` until it is in."""

import os
import time
from pathlib import Path

import httpx

from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.service.http.readiness import READINESS_TIMEOUT_S
from tests.served import serving, settled_readiness
from tests.timing import LOAD_SLACK_S


def test_the_first_readyz_answers_within_its_deadline(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    env |= {"REACTSTEP_DATA_DIR": str(tmp_path)}
    env["REACTSTEP_LLM_API_KEY"] = "sk-test"  # a hosted model with its key: "configured", not probed
    with serving(env) as (url, _):
        started = time.monotonic()
        first = httpx.get(f"{url}/readyz", timeout=30)
        assert time.monotonic() - started < READINESS_TIMEOUT_S + LOAD_SLACK_S
        # A fresh process imports litellm for seconds: the verdict is still being made, unless it came
        # in within the deadline (a quiet machine).
        assert (first.status_code, first.json()) in [
            (503, {"status": "warming", "checks": {"storage": "ok", "llm": "warming"}}),
            (200, {"status": "ready", "checks": {"storage": "ok", "llm": "configured"}}),
        ]
        assert settled_readiness(url) == {"status": "ready", "checks": {"storage": "ok", "llm": "configured"}}


def test_a_first_step_after_ready_does_not_wait_for_litellm(tmp_path: Path) -> None:
    """With a model server to probe, /readyz still reads `warming` until litellm is loaded (it was
    imported by the first step, 1.4 s of a 1.6 s step); after `ready` the first step's time outside the
    model is well within a second."""
    with ScriptedLLMServer(["Final Answer: 42"]) as llm:
        env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
        env |= {"REACTSTEP_DATA_DIR": str(tmp_path), "REACTSTEP_LLM_MODEL": "openai/scripted"}
        env["REACTSTEP_LLM_API_BASE"] = llm.base_url
        with serving(env) as (url, _):
            first = httpx.get(f"{url}/readyz", timeout=30).json()
            assert first["checks"]["llm"] in ("warming", "ok")
            assert settled_readiness(url) == {"status": "ready", "checks": {"storage": "ok", "llm": "ok"}}
            httpx.put(f"{url}/api/projects/p", timeout=30).raise_for_status()
            body = {"project_id": "p", "session_id": "s", "user_query": "q"}
            timing = httpx.post(f"{url}/api/agent/react_step", json=body, timeout=60).json()["timing"]
            assert timing["total_ms"] - timing["llm_ms"] < 1000
