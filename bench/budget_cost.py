"""What a key's budget adds to a react_step: the hold before the model call and its settling after,
each a read and a conditional write of the key's day object.

Run: .venv/bin/python bench/budget_cost.py [--rounds 200]

Processes on 127.0.0.1: moto's S3 server (as the test suite runs it), a scripted OpenAI-compatible LLM
(an instant reply), and the service in this process (uvicorn on a loopback port, over S3, then over
the local store). Interleaved, one client times
    A  react_step with a key that has limits (tokens, dollars and requests)
    B  the same step with a key that has none
and prints each median and A - B: the latency a budget adds to a step, and the bytes of its day object.
"""

import argparse
import hashlib
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from stats import describe, machine, percentile

from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer
from reactstep.service.backends import s3_client
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings

LIMITED, FREE = "rsk_bench-limited-0123456789", "rsk_bench-free-0123456789"
LIMITS = "tokens_per_day=1000000000,usd_per_day=1000000,requests_per_minute=1000000"
STEP = {"project_id": "bench", "session_id": "s", "user_query": "What does main return?"}


def entry(key: str, limits: str = "") -> str:
    return f"sha256:{hashlib.sha256(key.encode()).hexdigest()}:*" + (f":{limits}" if limits else "")


def timed(client: httpx.Client, key: str) -> float:
    began = time.perf_counter()
    answer = client.post("/api/agent/react_step", json=STEP, headers={"authorization": f"Bearer {key}"})
    elapsed = (time.perf_counter() - began) * 1000
    answer.raise_for_status()
    return elapsed


def measure(settings: Settings, rounds: int, llm: ScriptedLLMServer) -> tuple[list[float], list[float]]:
    limited: list[float] = []
    free: list[float] = []
    llm.push(*[Reply(text="Thought: t\nFinal Answer: 42")] * (2 * rounds + 20))
    with (
        BackgroundServer(create_app(settings)) as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        client.put("/api/projects/bench", headers={"authorization": f"Bearer {FREE}"}).raise_for_status()
        for _ in range(10):  # warm: litellm, the tokenizer, the connections
            timed(client, LIMITED), timed(client, FREE)
        for _ in range(rounds):
            limited.append(timed(client, LIMITED))
            free.append(timed(client, FREE))
    return limited, free


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's server logs every request
    s3 = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    s3.start()
    host, port = s3.get_host_and_port()
    print(machine())
    try:
        with tempfile.TemporaryDirectory() as data, ScriptedLLMServer() as llm:
            common: dict[str, Any] = {
                "data_dir": data,
                "llm_model": "openai/gpt-4o-mini",
                "llm_api_base": llm.base_url,
                "api_keys": [entry(LIMITED, LIMITS), entry(FREE)],
                "approval_secret": "bench-secret-0123456789abcdef0123",
            }
            s3_settings = Settings(
                **common,
                storage_backend="s3",
                s3_endpoint_url=f"http://{host}:{port}",
                s3_bucket="bench",
                s3_region="us-east-1",
                s3_access_key_id="bench",
                s3_secret_access_key="bench",
            )
            s3_client(s3_settings).create_bucket(Bucket="bench")
            for name, settings in (("S3 (moto)", s3_settings), ("local store", Settings(**common))):
                limited, free = measure(settings, args.rounds, llm)
                added = percentile(limited, 0.5) - percentile(free, 0.5)
                print(f"{name}:")
                print("  " + describe("with limits", limited))
                print("  " + describe("without", free))
                print(f"  a budget adds {added:.2f} ms to a step's median")
            day = next(Path(data).rglob("_budgets/*.json"), None)
            if day is not None:
                print(f"the key's day object, no step in flight: {day.stat().st_size} bytes")
    finally:
        s3.stop()


if __name__ == "__main__":
    main()
