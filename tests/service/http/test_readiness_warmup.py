"""/readyz answers within its deadline from its first call: the `llm` verdict (litellm's tables,
seconds to import) is made in the background and reads `warming` until it is in."""

import os
import time
from pathlib import Path

import httpx

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
