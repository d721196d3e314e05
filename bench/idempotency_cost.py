"""What Idempotency-Key costs: the bytes kept per call, and the latency it adds to a write.

Run: .venv/bin/python bench/idempotency_cost.py [--rounds 300]

Every process on 127.0.0.1; the service runs as `reactstep serve` runs it, on the local store and on
an S3 bucket (moto's server). Per store, interleaved (ABBA):
    A  PUT /api/projects/bench/files/src/module.py, 1 KiB of new bytes each time, no key
    B  the same with a fresh Idempotency-Key: the claim (a conditional write), the write, the
       answer kept (a second conditional write)
then the records kept (the store's .reactstep-records/): bytes per PUT answer, and per react_step
answer (a non-streamed step against a loopback model that always proposes read_file).
S3 here is a loopback emulator: a real bucket adds a network round trip to each of B's two extra
writes, so B's added time there is about two PutObject round trips.
"""

import argparse
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from statistics import fmean
from typing import Any

import boto3
import httpx

sys.path.insert(0, str(Path(__file__).parent))
from peers import child, interleaved, load_average
from stats import describe, machine, percentile

RECORDS = ".reactstep-records"
FILE = "/api/projects/bench/files/src/module.py"
STEP = {
    "project_id": "bench",
    "session_id": "s",
    "user_query": "What does module.py do?",
    "conversation_history": [],
    "max_iterations_left": 5,
}
STEPS_KEPT = 20
SETTLE_S = 1.0  # an answer is kept just after it is sent: the last one lands this long after


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    print(machine(), "|", load_average(), "before")
    with child("llm", "0") as llm:
        with tempfile.TemporaryDirectory() as data:
            root = Path(data) / "objects"
            settings = {"data_dir": data, "storage_backend": "local"}
            measure("local", settings, llm.url, args.rounds, lambda: _local_sizes(root))
        with child("s3") as s3:
            bucket = f"bench-{uuid.uuid4().hex[:8]}"
            client = boto3.client(
                "s3",
                endpoint_url=s3.url,
                region_name="us-east-1",
                aws_access_key_id="test",
                aws_secret_access_key="test",
            )
            client.create_bucket(Bucket=bucket)
            on_s3 = {
                "storage_backend": "s3",
                "s3_endpoint_url": s3.url,
                "s3_bucket": bucket,
                "s3_region": "us-east-1",
                "s3_access_key_id": "test",
                "s3_secret_access_key": "test",
            }
            with tempfile.TemporaryDirectory() as data:
                sizes = lambda: _s3_sizes(client, bucket)  # noqa: E731
                measure("s3 (moto on loopback)", {"data_dir": data, **on_s3}, llm.url, args.rounds, sizes)
    print(load_average(), "after")


def measure(
    name: str, settings: dict[str, Any], llm_url: str, rounds: int, sizes: Callable[[], list[int]]
) -> None:
    """Time A and B on one store, then the bytes its records hold per call."""
    settings = {
        **settings,
        "llm_model": "openai/bench",
        "llm_api_base": f"{llm_url}/v1",
        "llm_api_key": "sk-x",
    }
    with (
        child("service", settings=settings) as service,
        httpx.Client(base_url=service.url, timeout=60) as http,
    ):
        http.put("/api/projects/bench").raise_for_status()
        counter = iter(range(10**9))

        def plain() -> None:
            http.put(FILE, content=_source(next(counter))).raise_for_status()

        def keyed() -> None:
            key = {"idempotency-key": str(uuid.uuid4())}
            http.put(FILE, content=_source(next(counter)), headers=key).raise_for_status()

        interleaved(plain, keyed, 30)  # warm-up
        a_ms, b_ms = interleaved(plain, keyed, rounds)
        time.sleep(SETTLE_S)
        put_sizes = sizes()
        for _ in range(STEPS_KEPT):
            http.post("/api/agent/react_step", json=STEP, headers={"idempotency-key": str(uuid.uuid4())})
        time.sleep(SETTLE_S)
        step_sizes = sizes()
    print(f"\n== {name}")
    print(describe("A PUT, no key", a_ms))
    print(describe("B PUT with a key", b_ms))
    a50, b50 = percentile(a_ms, 0.5), percentile(b_ms, 0.5)
    print(f"added by the key: {b50 - a50:.2f} ms at the median ({b50 / a50:.2f}x)")
    print(f"kept per PUT answer: {fmean(put_sizes):.0f} B mean over {len(put_sizes)} records")
    steps = len(step_sizes) - len(put_sizes)
    step_bytes = sum(step_sizes) - sum(put_sizes)
    print(f"kept per react_step answer: {step_bytes / steps:.0f} B mean over {steps} records")


def _source(n: int) -> bytes:
    """1 KiB of Python, different for every n."""
    line = f"VALUE_{n:08d} = {n}  # a line of the module being edited, padded to a fixed width....\n"
    return (line * 16)[:1024].encode()


def _local_sizes(root: Path) -> list[int]:
    folder = root / RECORDS
    return [file.stat().st_size for file in sorted(folder.iterdir())] if folder.is_dir() else []


def _s3_sizes(client: Any, bucket: str) -> list[int]:
    sizes: list[int] = []
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"projects/{RECORDS}/")
    for page in pages:
        sizes.extend(int(item["Size"]) for item in page.get("Contents", []))
    return sizes


if __name__ == "__main__":
    main()
