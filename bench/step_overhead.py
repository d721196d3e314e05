"""react_step next to its floor: the same LLM call made with litellm directly.

Run: .venv/bin/python bench/step_overhead.py [--rounds 400]

Processes on 127.0.0.1: a fixed-reply OpenAI-compatible LLM, the service (as `reactstep serve` runs
it), a relay, and this one, which times, interleaved,
    A  POST /api/agent/react_step over HTTP (six earlier steps in the history)
    B  litellm.completion with the messages the service sends for that step
and prints the A/B ratio of medians (goal <= 1.25), the machine's load and the service's peak RSS.
B is litellm as anyone calls it, with its defaults: OpenAI-style calls go through the OpenAI SDK.
The service's gateway switches litellm to its own httpx route (completions.py), so A is also set against
D: B's call on that route, what the service's own LLM call costs bare.
Then, the same way, C: the same POST to a relay (a bare Starlette app that reads the body and makes
B's call on a worker thread, peers.py) against B: the least any HTTP server making this call adds.
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from peers import child, interleaved, load_average, side_by_side
from stats import machine, percentile

from reactstep.contract.step import ReactStepRequest
from reactstep.service.llm.gateway import OPENAI_ROUTE_FLAG
from reactstep.service.settings import Settings
from reactstep.service.step.prepare import PreparedStep, prepare_step
from reactstep.tools.catalog import default_registry

GOAL = 1.25
HISTORY = [
    {
        "thought": f"step {n}",
        "action_details": {
            "tool_name": "read_file",
            "tool_args": {"file_path": f"src/m{n}.py"},
            "raw_action_string": f'Action: read_file(file_path="src/m{n}.py")',
        },
        "observation": "\n".join(f"{i:>5} | line {i}" for i in range(1, 80)),
    }
    for n in range(6)
]
STEP = {
    "project_id": "bench",
    "session_id": "s",
    "user_query": "What does main return?",
    "conversation_history": HISTORY,
    "max_iterations_left": 5,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=400)
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.pop(OPENAI_ROUTE_FLAG, None)  # litellm's default route for B, here and in the relay
    import litellm

    with tempfile.TemporaryDirectory() as data, child("llm") as llm:
        settings = {"data_dir": data, "llm_model": "openai/bench", "llm_api_base": f"{llm.url}/v1"}
        with child("service", settings=settings) as service, httpx.Client(base_url=service.url) as client:
            client.put("/api/projects/bench").raise_for_status()
            arguments = _litellm_arguments(Settings(**settings))  # type: ignore[arg-type]

            def step() -> None:
                client.post("/api/agent/react_step", json=STEP, timeout=60).raise_for_status()

            def bare() -> None:
                litellm.completion(**arguments)

            def bare_own_route() -> None:
                os.environ[OPENAI_ROUTE_FLAG] = "true"
                try:
                    litellm.completion(**arguments)
                finally:
                    del os.environ[OPENAI_ROUTE_FLAG]

            interleaved(step, bare, 20)  # warm-up: imports, connection pools
            print(machine(), "|", load_average(), "before")
            a_ms, b_ms = interleaved(step, bare, args.rounds)
            print(side_by_side("react_step over HTTP", a_ms, "litellm.completion", b_ms, GOAL))
            print(f"service peak RSS {service.peak_rss_mib():.0f} MiB | {load_average()} after")
            interleaved(step, bare_own_route, 20)
            a_ms, d_ms = interleaved(step, bare_own_route, args.rounds)
            a50, d50 = percentile(a_ms, 0.5), percentile(d_ms, 0.5)
            print("\nthe service's own call, bare: D = B's call on litellm's httpx route")
            print(f"A react_step over HTTP: p50 {a50:.2f} ms")
            print(f"D litellm.completion, httpx route: p50 {d50:.2f} ms")
            print(f"A/D = {a50 / d50:.2f} (no goal: what the service adds over its own call)")
        arguments_file = Path(data) / "arguments.json"
        arguments_file.write_text(json.dumps(arguments))
        with child("relay", str(arguments_file)) as relay, httpx.Client(base_url=relay.url) as client:

            def relayed() -> None:
                client.post("/api/agent/react_step", json=STEP, timeout=60).raise_for_status()

            interleaved(relayed, bare, 20)
            c_ms, b_ms = interleaved(relayed, bare, args.rounds)
            print("\nthe floor of any server: C = a bare relay of the same call")
            print(side_by_side("relay over HTTP", c_ms, "litellm.completion", b_ms, GOAL, letters="CB"))


def _litellm_arguments(settings: Settings) -> dict[str, Any]:
    """The call the service makes for STEP, as plain litellm arguments."""
    prepared = prepare_step(ReactStepRequest.model_validate(STEP), settings, default_registry())
    assert isinstance(prepared, PreparedStep)
    call = prepared.llm_request
    return {
        "model": call.model,
        "messages": call.messages,
        "api_base": call.api_base,
        "api_key": "none",
        "temperature": call.temperature,
        "max_tokens": call.max_tokens,
        "stop": list(call.stop),
    }


if __name__ == "__main__":
    main()
