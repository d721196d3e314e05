"""The workspace over HTTP: a no-op sync of a large manifest, and one changed file from sync to searchable.

Run: .venv/bin/python bench/sync_speed.py [--files 2000] [--chunks 1500]

Everything goes through the real app over loopback HTTP (a BackgroundServer on the embedded
defaults: local store, embedded Qdrant engine, the shipped MiniLM model) in a temporary data dir.
1. A project of --files small files is synced and uploaded once; then a no-op sync of the same
   manifest is timed (ms and the request's bytes).
2. A project of about --chunks chunks is indexed; one function of one file is changed, and the time
   from the sync plan through the PUT, POST .../index and a code_search that finds the new code is
   timed.
"""

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from stats import describe, machine

from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings


def module(number: int, functions: int) -> bytes:
    body = "".join(
        f"def handler_{number}_{n}(value):\n    '''Handle case {n} of module {number}.'''\n"
        f"    return value * {n} + {number}\n\n\n"
        for n in range(functions)
    )
    return body.encode()


def sync_plan(client: httpx.Client, project: str, files: dict[str, bytes], base: int | None) -> dict:
    manifest = {path: hashlib.sha256(data).hexdigest() for path, data in files.items()}
    response = client.post(f"/api/projects/{project}/sync", json={"files": manifest, "base_version": base})
    response.raise_for_status()
    plan: dict = response.json()
    plan["_sent"] = len(response.request.content)
    return plan


def upload(client: httpx.Client, project: str, files: dict[str, bytes], plan: dict) -> None:
    for path in plan["upload"]:
        etag = plan["etags"].get(path)
        headers = {"if-match": f'"{etag}"'} if etag else {"if-none-match": "*"}
        client.put(
            f"/api/projects/{project}/files/{path}", content=files[path], headers=headers
        ).raise_for_status()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--chunks", type=int, default=1500)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as data_dir:
        settings = Settings(data_dir=Path(data_dir), storage_backend="local", vector_backend="embedded")
        with (
            BackgroundServer(create_app(settings)) as server,
            httpx.Client(base_url=server.url, timeout=600) as client,
        ):
            noop_sync(client, args.files, args.repeats)
            one_change(client, args.chunks, args.repeats)


def noop_sync(client: httpx.Client, count: int, repeats: int) -> None:
    files = {f"pkg/sub{n % 40}/module_{n}.py": module(n, 1) for n in range(count)}
    client.put("/api/projects/bigsync").raise_for_status()
    plan = sync_plan(client, "bigsync", files, None)
    upload(client, "bigsync", files, plan)
    version = sync_plan(client, "bigsync", files, None)["version"]
    timings, sent = [], 0
    for _ in range(repeats):
        started = time.perf_counter()
        plan = sync_plan(client, "bigsync", files, version)
        timings.append((time.perf_counter() - started) * 1000)
        sent = plan["_sent"]
        assert plan["upload"] == [] and plan["delete"] == [] and plan["version"] == version
    print(describe(f"no-op sync of {count} files ({sent / 1000:.0f} kB sent)", timings))


def one_change(client: httpx.Client, chunks: int, repeats: int) -> None:
    per_file = 10
    files = {
        f"app/part{n % 20}/service_{n}.py": module(n, per_file) for n in range(max(1, chunks // per_file))
    }
    client.put("/api/projects/change").raise_for_status()
    upload(client, "change", files, sync_plan(client, "change", files, None))
    started = time.perf_counter()
    indexed = client.post("/api/projects/change/index", json={}).json()
    print(f"first index: {indexed['chunks']} chunks in {time.perf_counter() - started:.1f} s")
    version = client.get("/api/projects/change").json()["version"]
    timings = []
    target = next(iter(files))
    for round_number in range(repeats):
        marker = f"zebra_marker_{round_number}"
        files[target] = files[target].replace(b"def handler_0_0(value):", f"def {marker}(value):".encode(), 1)
        files[target] = files[target].replace(f"zebra_marker_{round_number - 1}".encode(), marker.encode())
        started = time.perf_counter()
        plan = sync_plan(client, "change", files, version)
        assert plan["upload"] == [target], plan["upload"]
        upload(client, "change", files, plan)
        report = client.post("/api/projects/change/index", json={}).json()
        body = {
            "project_id": "change",
            "session_id": "b",
            "tool_name": "code_search",
            "tool_args": {"query": marker},
        }
        found = client.post("/api/agent/execute_action", json=body).json()["observation"]
        timings.append((time.perf_counter() - started) * 1000)
        assert marker in found, found[:300]
        version = report["indexed_version"]
    print(describe(f"one-file change to searchable at {indexed['chunks']} chunks (embedded 1 each)", timings))
    print(json.dumps({k: report[k] for k in ("files", "chunks", "embedded", "reused")}))


if __name__ == "__main__":
    main()
