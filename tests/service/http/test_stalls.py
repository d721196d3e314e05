"""No body under the size limit stalls the server: against a real `reactstep serve`, every list and map of
the contract grown with its worst item (tests/hostile_bodies.py), once to the size limit and once to
the counts a body may hold, is answered within 2 s while /healthz, asked every 20 ms, answers within
0.5 s every time. Margins for a loaded 2-core machine: on a quiet one the worst answer takes ~0.3 s
and the worst /healthz ~0.15 s (bench/stalls.py prints them).
"""

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from tests.hostile_bodies import HOSTILE, PROJECT, Hostile
from tests.served import post_while_polling, serving, settled_readiness

BODY_LIMIT = 16_000_000  # REACTSTEP_MAX_BODY_BYTES's default
ANSWER_WITHIN_S = 2.0
HEALTH_WITHIN_S = 0.5
VALID_STEPS = sum(
    1 for hostile in HOSTILE if hostile.path.endswith("react_step") and hostile.within_bounds_status == 200
)


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A served app with a model that answers every valid step, its project made, litellm loaded."""
    with ScriptedLLMServer(["Final Answer: done."] * VALID_STEPS) as llm:
        env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
        data = Path(tmp_path_factory.mktemp("stalls"))
        env.update(REACTSTEP_DATA_DIR=str(data), REACTSTEP_LOG_LEVEL="warning")
        env.update(REACTSTEP_LLM_MODEL="openai/scripted", REACTSTEP_LLM_API_BASE=llm.base_url)
        with serving(env) as (served, _):
            assert settled_readiness(served)["status"] == "ready"
            httpx.put(f"{served}/api/projects/{PROJECT}", timeout=30).raise_for_status()
            yield served


@pytest.mark.parametrize("within_bounds", [False, True], ids=["size limit", "value bounds"])
@pytest.mark.parametrize("hostile", HOSTILE, ids=[hostile.name for hostile in HOSTILE])
def test_a_hostile_body_is_answered_quickly_and_never_stalls_healthz(
    url: str, hostile: Hostile, within_bounds: bool
) -> None:
    body = hostile.build(BODY_LIMIT, within_bounds)
    assert BODY_LIMIT - 100_000 < len(body) <= BODY_LIMIT or within_bounds
    answer = post_while_polling(url, hostile.path, body, timeout_s=30)
    expected = hostile.within_bounds_status if within_bounds else 413
    assert answer.status == expected, answer.text[:500]
    if expected == 413:
        assert "the limit is" in answer.text
    assert answer.seconds <= ANSWER_WITHIN_S
    assert answer.health_failures == []
    assert answer.slowest_health_s <= HEALTH_WITHIN_S
