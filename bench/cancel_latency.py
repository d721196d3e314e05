"""How soon a model server hears that a react_step's client left: from the client's close to the moment
the model server sees its request closed, for steps answered whole and streamed.

Run: .venv/bin/python bench/cancel_latency.py [--rounds 20]

Starts `reactstep serve` on 127.0.0.1 (a temporary data dir, its LLM the scripted OpenAI-compatible
server of this process, which watches its connections while it waits: client/traces/scripted_llm.py).
Each round sends one step on a connection of its own, waits until the model server holds the request
(a whole step; a model that would think for a minute) or the first thought event has arrived (a stream
that sends a chunk every 0.3 s), closes the connection, and times the model server's close. Prints
p50, p95 and the worst per kind, and the machine's load. The promise (issue 42): within 1 s.
"""

import argparse
import json
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer  # noqa: E402
from tests.served import serving  # noqa: E402

WHOLE = Reply("Thought: I know it.\nFinal Answer: 42", delay_s=60)
STREAMED = Reply("Thought: " + "word " * 400 + "\nFinal Answer: x", chunk_chars=5, chunk_delay_s=0.3)
STEP = {"project_id": "demo", "session_id": "bench", "user_query": "What does main return?"}


def close_mid_step(url: str, llm: ScriptedLLMServer, streamed: bool) -> float:
    """One step opened and closed while the model works: seconds from the close to the model's seeing it."""
    asked, closed_before = len(llm.requests), len(llm.closes)
    data = json.dumps({**STEP, "stream": streamed}).encode()
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as connection:
        head = f"POST /api/agent/react_step HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        connection.sendall(f"{head}Content-Length: {len(data)}\r\n\r\n".encode() + data)
        if streamed:
            while b"event: thought" not in connection.recv(65536):
                pass
        else:
            while len(llm.requests) == asked:
                time.sleep(0.001)
    closed = time.monotonic()
    deadline = closed + 30
    while len(llm.closes) == closed_before:
        if time.monotonic() > deadline:
            return float("inf")
        time.sleep(0.0005)
    return llm.closes[closed_before] - closed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20, help="closes per kind")
    args = parser.parse_args()
    env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    with tempfile.TemporaryDirectory() as data, ScriptedLLMServer() as llm:
        env.update(REACTSTEP_DATA_DIR=data, REACTSTEP_LOG_LEVEL="warning")
        env.update(REACTSTEP_LLM_MODEL="openai/scripted", REACTSTEP_LLM_API_BASE=llm.base_url)
        with serving(env) as (url, _):
            httpx.put(f"{url}/api/projects/demo", timeout=30).raise_for_status()
            print(f"{'kind':<10} {'rounds':>6} {'p50 ms':>8} {'p95 ms':>8} {'worst ms':>9}")
            for kind, reply in (("whole", WHOLE), ("streamed", STREAMED)):
                llm.push(*[reply] * args.rounds)
                seconds = sorted(close_mid_step(url, llm, kind == "streamed") for _ in range(args.rounds))
                p95 = seconds[min(len(seconds) - 1, round(0.95 * (len(seconds) - 1)))]
                print(
                    f"{kind:<10} {len(seconds):>6} {statistics.median(seconds) * 1000:>8.1f} "
                    f"{p95 * 1000:>8.1f} {seconds[-1] * 1000:>9.1f}"
                )
            cancelled = [
                line for line in httpx.get(f"{url}/metrics").text.splitlines() if "cancelled_total{" in line
            ]
            print(*cancelled, sep="\n")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
