"""The worst stall one hostile body causes: each list and map of the contract grown to the limits.

Run: .venv/bin/python bench/stalls.py [--shape SUBSTRING] [--verbose]

Starts `reactstep serve` on 127.0.0.1 (a temporary data dir, dev mode, the default 16 MB body limit, a
model server that refuses connections), then sends every body of tests/hostile_bodies.py once in each of
its two sizes while a second thread asks /healthz every 20 ms. Per body: the answer's status and time,
and the slowest /healthz answer meanwhile (the stall: how long every other request on the replica
waited). Last line: the worst stall over all bodies and the machine's load. Goal (issue 43): 0.5 s.
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.hostile_bodies import HOSTILE, PROJECT, Hostile  # noqa: E402
from tests.served import free_port, post_while_polling, serving  # noqa: E402

BODY_LIMIT = 16_000_000
ANSWER_TIMEOUT_S = 120.0  # a shape not answered by then prints status 0


def send(url: str, hostile: Hostile, within_bounds: bool) -> tuple[int, float, float, str]:
    """The body sent once: its status, its time, the worst /healthz wait meanwhile, the answer."""
    answer = post_while_polling(url, hostile.path, hostile.build(BODY_LIMIT, within_bounds), ANSWER_TIMEOUT_S)
    return answer.status, answer.seconds, answer.slowest_health_s, answer.text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", default="", help="only the shapes whose name holds this")
    parser.add_argument("--verbose", action="store_true", help="print the start of each answer too")
    args = parser.parse_args()
    env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    with tempfile.TemporaryDirectory() as data:
        env.update(REACTSTEP_DATA_DIR=data, REACTSTEP_LOG_LEVEL="warning", REACTSTEP_LLM_MAX_RETRIES="0")
        env.update(
            REACTSTEP_LLM_MODEL="openai/none", REACTSTEP_LLM_API_BASE=f"http://127.0.0.1:{free_port()}/v1"
        )
        with serving(env) as (url, _):
            httpx.put(f"{url}/api/projects/{PROJECT}", timeout=30).raise_for_status()
            worst = ("", 0.0)
            print(f"{'body':<62} {'status':>6} {'answer s':>9} {'stall s':>8}")
            for hostile in HOSTILE:
                for within_bounds in (False, True):
                    name = f"{hostile.name} ({'value bounds' if within_bounds else 'size limit'})"
                    if args.shape not in name:
                        continue
                    status, took, stall, text = send(url, hostile, within_bounds)
                    shown = f"  {text[:70]}" if args.verbose else ""
                    print(f"{name:<62} {status:>6} {took:>9.2f} {stall:>8.2f}{shown}", flush=True)
                    worst = max(worst, (name, stall), key=lambda pair: pair[1])
    print(
        f"worst stall {worst[1]:.2f} s ({worst[0]}); load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
