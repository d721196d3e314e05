"""react_step overhead beyond the LLM call, with a scripted OpenAI-compatible LLM on loopback.

Run: .venv/bin/python bench/step_overhead.py [--requests 300]
Prints the client-observed round trip, the server's own work (total_ms - llm_ms: validation,
prompt rendering, parsing) and the LLM call as litellm sees it, next to a bare HTTP call to the fake.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from stats import describe, machine

from reactstep.client.scripted_llm import ScriptedLLMServer
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings

REPLY = 'Thought: I should read the app.\nAction: read_file(file_path="src/app.py", start_line=1)'
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data, ScriptedLLMServer() as llm:
        llm.push(*[REPLY] * (args.requests * 2 + 20))
        settings = Settings(data_dir=Path(data), llm_model="openai/bench", llm_api_base=llm.base_url)
        with BackgroundServer(create_app(settings)) as server, httpx.Client() as client:
            bare = [_bare_llm_call(client, llm.base_url) for _ in range(args.requests)]
            round_trips, own, llm_ms = _react_steps(client, server.url, args.requests)
    print(machine())
    print(describe("bare HTTP call to the fake LLM", bare))
    print(describe("react_step round trip (client view)", round_trips))
    print(describe("LLM call inside react_step (litellm + fake)", llm_ms))
    print(describe("react_step server work beyond the LLM call", own))


def _bare_llm_call(client: httpx.Client, base_url: str) -> float:
    started = time.perf_counter()
    body = {"model": "bench", "messages": [{"role": "user", "content": "hi"}]}
    client.post(f"{base_url}/chat/completions", json=body).raise_for_status()
    return (time.perf_counter() - started) * 1000


def _react_steps(client: httpx.Client, url: str, count: int) -> tuple[list[float], list[float], list[float]]:
    body = {
        "project_id": "bench",
        "session_id": "s",
        "user_query": "What does main return?",
        "conversation_history": HISTORY,
        "max_iterations_left": 5,
    }
    for _ in range(10):  # warm-up: litellm's first import and call are slow
        client.post(f"{url}/api/agent/react_step", json=body, timeout=60).raise_for_status()
    round_trips, own, llm_ms = [], [], []
    for _ in range(count):
        started = time.perf_counter()
        reply = client.post(f"{url}/api/agent/react_step", json=body, timeout=60)
        round_trips.append((time.perf_counter() - started) * 1000)
        timing = reply.json()["timing"]
        own.append(timing["total_ms"] - timing["llm_ms"])
        llm_ms.append(timing["llm_ms"])
    return round_trips, own, llm_ms


if __name__ == "__main__":
    main()
