"""execute_action read_file next to its floors, on the local store and on S3.

Run: .venv/bin/python bench/read_file_latency.py [--rounds 400]

Every process on 127.0.0.1; the service runs as `reactstep serve` runs it. Interleaved, per store:
    local  A  POST /api/agent/execute_action read_file over HTTP
           B  a bare Starlette app (same uvicorn flags) answering a POST with the same JSON (goal <= 1.3)
    s3     A  the same call, the service on an S3 bucket (moto's server)
           B  boto3 get_object(...).read() of that file from this process (goal <= 1.2); also
              printed: read_file's own run inside A (the service's /metrics duration), next to B
           C  the same POST to a relay: a bare Starlette app that reads the object with boto3 on a
              worker thread and answers A's JSON (peers.py): the least any server adds around B's
              call (the service reads in one signed GET, tools/store/s3_get.py, so A can go below C)
S3 here is a loopback emulator: B is boto3's own cost plus one local round trip; a real bucket adds
network latency to both, so the ratio only gets closer to 1 there.
"""

import argparse
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from statistics import mean
from typing import Any

import boto3
import httpx

sys.path.insert(0, str(Path(__file__).parent))
from peers import child, interleaved, load_average, side_by_side
from stats import machine

from reactstep.tools.store.memos import ContentMemo

SOURCE = "".join(f"def function_{n}(value):\n    return value * {n}\n\n" for n in range(70)).encode()
READ = {
    "project_id": "bench",
    "session_id": "s",
    "tool_name": "read_file",
    "tool_args": {"file_path": "src/module.py"},
}
GOALS = {"local": 1.3, "s3": 1.2}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=400)
    args = parser.parse_args()
    print(machine(), "|", load_average(), "before")
    print(f"file: {len(SOURCE)} bytes, {len(SOURCE.splitlines())} lines")
    with tempfile.TemporaryDirectory() as data:
        local(data, args.rounds)
    with child("s3") as s3:
        on_s3(s3.url, args.rounds)
    print(load_average(), "after")


def local(data: str, rounds: int) -> None:
    """The service on the local store against a bare app giving the same answer."""
    with child("service", settings={"data_dir": data}) as service, httpx.Client() as client:
        answer = _project_with_file(client, service.url)
        # An agent reads files synced well before; the local store trusts a file's memo only once
        # it is older than the racy window (a write in the same mtime tick stays invisible otherwise).
        time.sleep(ContentMemo.RACY_S + 0.2)
        answer_file = Path(data) / "answer.json"
        answer_file.write_text(json.dumps(answer))
        with child("bare", str(answer_file)) as bare:
            a_ms, b_ms = _run(
                lambda: client.post(f"{service.url}/api/agent/execute_action", json=READ).raise_for_status(),
                lambda: client.post(f"{bare.url}/api/agent/execute_action", json=READ).raise_for_status(),
                rounds,
            )
        print("\n== local store")
        print(
            side_by_side("execute_action read_file", a_ms, "bare Starlette, same JSON", b_ms, GOALS["local"])
        )
        print(f"service peak RSS {service.peak_rss_mib():.0f} MiB")


def on_s3(endpoint: str, rounds: int) -> None:
    """The service on an S3 bucket against boto3 reading the same object."""
    bucket = f"bench-{uuid.uuid4().hex[:8]}"
    credentials = {"aws_access_key_id": "test", "aws_secret_access_key": "test"}
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", **credentials)
    s3.create_bucket(Bucket=bucket)
    settings = {
        "storage_backend": "s3",
        "s3_endpoint_url": endpoint,
        "s3_bucket": bucket,
        "s3_region": "us-east-1",
        "s3_access_key_id": "test",
        "s3_secret_access_key": "test",
    }
    with (
        tempfile.TemporaryDirectory() as data,
        httpx.Client() as client,
        child("service", settings={"data_dir": data, **settings}) as service,
    ):
        answer = _project_with_file(client, service.url)
        key = next(
            item["Key"]
            for item in s3.list_objects_v2(Bucket=bucket)["Contents"]
            if item["Key"].endswith("src/module.py")
        )

        def read_a() -> None:
            client.post(f"{service.url}/api/agent/execute_action", json=READ).raise_for_status()

        def read_b() -> None:
            s3.get_object(Bucket=bucket, Key=key)["Body"].read()

        interleaved(read_a, read_b, 30)  # warm-up, as _run
        before = _read_file_seconds(client, service.url)
        a_ms, b_ms = interleaved(read_a, read_b, rounds)
        after = _read_file_seconds(client, service.url)
        print("\n== s3 (moto on loopback)")
        print(side_by_side("execute_action read_file", a_ms, "boto3 get_object().read()", b_ms, GOALS["s3"]))
        own_ms = (after[0] - before[0]) / (after[1] - before[1]) * 1000
        print(
            f"inside A: read_file's run {own_ms:.2f} ms mean (its /metrics duration), B {mean(b_ms):.2f} ms"
            f" mean; the rest of A ({mean(a_ms) - own_ms:.2f} ms) is HTTP in and out"
        )
        print(f"service peak RSS {service.peak_rss_mib():.0f} MiB")
        job = {
            "endpoint": endpoint,
            "bucket": bucket,
            "key": key,
            "credentials": credentials,
            "answer": answer,
        }
        job_file = Path(data) / "relay.json"
        job_file.write_text(json.dumps(job))
        with child("s3_relay", str(job_file)) as relay:
            c_ms, b_ms = _run(
                lambda: client.post(f"{relay.url}/api/agent/execute_action", json=READ).raise_for_status(),
                read_b,
                rounds,
            )
        print("the floor of any server: C = a bare relay of the same read")
        print(side_by_side("relay over HTTP", c_ms, "boto3 get_object().read()", b_ms, GOALS["s3"], "CB"))


def _project_with_file(client: httpx.Client, url: str) -> dict[str, Any]:
    """Create the project and its file through the API; the read_file answer."""
    client.put(f"{url}/api/projects/bench").raise_for_status()
    client.put(f"{url}/api/projects/bench/files/src/module.py", content=SOURCE).raise_for_status()
    answer: dict[str, Any] = (
        client.post(f"{url}/api/agent/execute_action", json=READ).raise_for_status().json()
    )
    assert not answer["is_error"], answer
    return answer


def _read_file_seconds(client: httpx.Client, url: str) -> tuple[float, float]:
    """The service's read_file duration histogram: its sum (seconds) and count, from /metrics."""
    found = {}
    for line in client.get(f"{url}/metrics").raise_for_status().text.splitlines():
        name, _, value = line.rpartition(" ")
        if name.startswith("reactstep_tool_duration_seconds_") and 'tool="read_file"' in name:
            found[name.split("{")[0].rsplit("_", 1)[1]] = float(value)
    return found["sum"], found["count"]


def _run(a: Any, b: Any, rounds: int) -> tuple[list[float], list[float]]:
    interleaved(a, b, 30)  # warm-up: connection pools, first imports
    return interleaved(a, b, rounds)


if __name__ == "__main__":
    main()
