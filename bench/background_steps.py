"""What keeping a step costs: a background stream (its answer and events kept in the object store, so
any replica can answer for it) next to the same stream not kept, on an S3 bucket (moto on loopback).

Run: .venv/bin/python bench/background_steps.py [--rounds 100]

Processes on 127.0.0.1: moto's S3 server, the service on a bucket of it (as `reactstep serve` runs
it), and this one, with the scripted OpenAI-compatible model streaming the same reply (its thought in
8-character chunks) to every step. Interleaved, the whole stream of
    A  POST react_step {"stream": true, "background": true}   (two records written: running, done)
    B  POST react_step {"stream": true}
read to its `result`; A/B medians say what keeping a step adds to it. Then: the bytes the store holds
per kept step, the time to a background step's 202 (its running record written), and GET
/api/agent/steps/{id} of an ended step (a read of its record, as any replica answers it).
"""

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import boto3
import httpx

sys.path.insert(0, str(Path(__file__).parent))
from peers import child, interleaved, load_average, side_by_side
from stats import describe, machine

from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer

THOUGHT = "I should read the app first, then the module it imports, to see what main returns."
REPLY = f'Thought: {THOUGHT}\nAction: read_file(file_path="src/app.py")'
STEP = {"project_id": "bench", "session_id": "s", "user_query": "What does main return?", "stream": True}
GOAL = 1.25


def streamed(client: httpx.Client, body: dict[str, object]) -> str:
    """POST a streamed step and read it to its end; the step id when it named one."""
    step_id = ""
    with client.stream("POST", "/api/agent/react_step", json=body, timeout=60) as answer:
        answer.raise_for_status()
        for line in answer.iter_lines():
            if line.startswith('data: {"step_id"'):
                step_id = line.split('"')[3]
    return step_id


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()
    bucket = f"bench-{uuid.uuid4().hex[:8]}"
    with child("s3") as s3_child, ScriptedLLMServer() as llm, tempfile.TemporaryDirectory() as data:
        s3 = boto3.client(
            "s3",
            endpoint_url=s3_child.url,
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )
        s3.create_bucket(Bucket=bucket)
        settings = {
            "data_dir": data,
            "llm_model": "openai/bench",
            "llm_api_base": llm.base_url,
            "storage_backend": "s3",
            "s3_endpoint_url": s3_child.url,
            "s3_bucket": bucket,
            "s3_region": "us-east-1",
            "s3_access_key_id": "test",
            "s3_secret_access_key": "test",
        }
        llm.push(*[Reply(text=REPLY)] * (3 * args.rounds + 40))
        with child("service", settings=settings) as service, httpx.Client(base_url=service.url) as client:
            client.put("/api/projects/bench").raise_for_status()
            kept: list[str] = []

            def background() -> None:
                kept.append(streamed(client, {**STEP, "background": True}))

            def plain() -> None:
                streamed(client, STEP)

            interleaved(background, plain, 10)  # warm-up
            a_ms, b_ms = interleaved(background, plain, args.rounds)
            sizes = [
                item["Size"]
                for item in s3.list_objects_v2(Bucket=bucket)["Contents"]
                if "/step-" in item["Key"]
            ]
            accepted_ms = []
            for _ in range(args.rounds):
                started = time.perf_counter()
                answer = client.post(
                    "/api/agent/react_step", json={**STEP, "stream": False, "background": True}
                )
                assert answer.status_code == 202, answer.text
                accepted_ms.append((time.perf_counter() - started) * 1000)
                kept.append(answer.json()["step_id"])
            time.sleep(2)  # the last of them end
            reads_ms = []
            for step_id in kept[-2 * args.rounds : -args.rounds]:
                started = time.perf_counter()
                client.get(f"/api/agent/steps/{step_id}").raise_for_status()
                reads_ms.append((time.perf_counter() - started) * 1000)
    print(machine(), "|", load_average())
    print(side_by_side("background stream (kept)", a_ms, "the same stream, not kept", b_ms, GOAL))
    print(
        f"added per step: {statistics.median(a_ms) - statistics.median(b_ms):.2f} ms at the median "
        "(the running record is written beside the model call, the done one after the stream's end)"
    )
    print(describe("202 of react_step with background (waits for the running record)", accepted_ms))
    print(
        f"kept per step: {statistics.fmean(sizes):.0f} bytes mean, {max(sizes)} max (n={len(sizes)}; "
        f"a {len(REPLY)}-character reply, its thought in {len(THOUGHT) // 8 + 1} events)"
    )
    print(describe("GET /api/agent/steps/{id} of an ended step (its record read)", reads_ms))


if __name__ == "__main__":
    main()
