"""The workspace over HTTP: a no-op sync of a large manifest, and one changed file from sync to searchable.

Run: .venv/bin/python bench/sync_speed.py [--files 2000] [--chunks 1500] [--big-chunks 100000 --work-dir DIR]

Everything goes through the real app over loopback HTTP (a BackgroundServer on the embedded
defaults: local store, embedded Qdrant engine, the shipped MiniLM model) in a temporary data dir.
1. A project of --files small files is synced and uploaded once; then a no-op sync of the same
   manifest is timed (ms and the request's bytes).
2. A project of about --chunks chunks is indexed; one function of one file is changed, and the time
   from the sync plan (the whole manifest) through the PUT (which re-indexes the file before it
   answers) to a code_search that finds the new code is timed, each phase apart; a POST .../index
   after it is timed too (it should find nothing left to do). With --big-chunks, again at that size
   (building 100k chunks embeds them all once, about 12 minutes on 2 cores; --work-dir keeps them
   for the next run).
3. A directory of that project is renamed (sync with apply_deletes), and the re-index is timed with
   how many chunks it embedded (the embedding cache by content should make that 0).
"""

import argparse
import contextlib
import hashlib
import json
import re
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
    parser.add_argument("--big-chunks", type=int, default=0, help="also measure a project this large")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--work-dir",
        type=Path,
        help="keep the data dir here: a second run reuses the big project instead of embedding it again",
    )
    args = parser.parse_args()
    print(machine())
    with contextlib.ExitStack() as stack:
        data_dir = args.work_dir or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        settings = Settings(data_dir=data_dir, storage_backend="local", vector_backend="embedded")
        server = stack.enter_context(BackgroundServer(create_app(settings)))
        client = stack.enter_context(httpx.Client(base_url=server.url, timeout=3600))
        noop_sync(client, args.files, args.repeats)
        one_change(client, "change", args.chunks, args.repeats)
        renamed_directory(client, args.chunks)
        if args.big_chunks:
            one_change(client, "big", args.big_chunks, args.repeats)


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


def project_files(chunks: int) -> dict[str, bytes]:
    """About `chunks` chunks: files of ten small functions each."""
    per_file = 10
    return {
        f"app/part{n % 20}/service_{n}.py": module(n, per_file) for n in range(max(1, chunks // per_file))
    }


def build(client: httpx.Client, project: str, files: dict[str, bytes]) -> int:
    """Sync and index the project (a no-op when a kept work dir holds it already); its version."""
    client.put(f"/api/projects/{project}").raise_for_status()
    plan = sync_plan(client, project, files, None)
    started = time.perf_counter()
    upload(client, project, files, plan)
    if plan["upload"]:
        print(f"{project}: uploaded {len(plan['upload'])} files in {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    indexed = client.post(f"/api/projects/{project}/index", json={}).json()
    if indexed["embedded"]:
        seconds = time.perf_counter() - started
        print(f"{project}: first index, {indexed['embedded']} chunks embedded in {seconds:.1f} s")
    version: int = client.get(f"/api/projects/{project}").json()["version"]
    return version


def one_change(client: httpx.Client, project: str, chunks: int, repeats: int) -> None:
    files = project_files(chunks)
    version = build(client, project, files)
    described = client.get(f"/api/projects/{project}").json()
    timings: list[float] = []
    phases: dict[str, list[float]] = {"sync plan": [], "PUT (re-index included)": [], "code_search": []}
    index_runs: list[float] = []
    target = next(iter(files))
    report: dict = {}
    for _ in range(repeats):
        marker = f"zebra_marker_{time.time_ns()}"
        files[target] = re.sub(
            rb"def (handler_0_0|zebra_marker_\d+)\(", f"def {marker}(".encode(), files[target]
        )
        started = time.perf_counter()
        plan = sync_plan(client, project, files, version)
        assert plan["upload"] == [target], plan["upload"]
        planned = time.perf_counter()
        upload(client, project, files, plan)
        uploaded = time.perf_counter()
        found = search(client, project, marker)  # a PUT re-indexes its file before it answers
        searched = time.perf_counter()
        assert marker in found, found[:300]
        timings.append((searched - started) * 1000)
        for name, (begin, end) in zip(
            phases, ((started, planned), (planned, uploaded), (uploaded, searched)), strict=True
        ):
            phases[name].append((end - begin) * 1000)
        begun = time.perf_counter()
        report = client.post(f"/api/projects/{project}/index", json={}).json()  # finds nothing left to do
        index_runs.append((time.perf_counter() - begun) * 1000)
        version = report["indexed_version"]
    name = f"one-file change, sync to searchable, {described['chunks']} chunks in {described['files']} files"
    print(describe(name, timings))
    for phase, values in phases.items():
        print("  " + describe(phase, values))
    print("  " + describe("a POST .../index after it (nothing left to do)", index_runs))
    print(
        "  last run: "
        + json.dumps({k: report[k] for k in ("files", "chunks", "embedded", "reused", "incremental")})
    )


def renamed_directory(client: httpx.Client, chunks: int) -> None:
    """Rename app/part0/ to app/renamed/: the index run afterwards should embed nothing."""
    files = project_files(chunks)
    project = f"rename-{time.time_ns()}"  # a new project each run, so a kept work dir measures it again
    version = build(client, project, files)
    moved = {path.replace("app/part0/", "app/renamed/", 1): data for path, data in files.items()}
    plan = sync_plan(client, project, moved, version)
    upload(client, project, moved, plan)
    body = {"files": {p: hashlib.sha256(d).hexdigest() for p, d in moved.items()}, "base_version": version}
    applied = client.post(f"/api/projects/{project}/sync", json={**body, "apply_deletes": True}).json()
    started = time.perf_counter()
    report = client.post(f"/api/projects/{project}/index", json={}).json()
    seconds = time.perf_counter() - started
    print(
        f"directory rename ({len(plan['upload'])} files moved, {len(applied['deleted'])} deleted): "
        f"re-index in {seconds:.2f} s, {report['embedded']} chunks embedded, {report['reused']} reused"
    )


def search(client: httpx.Client, project: str, query: str) -> str:
    body = {
        "project_id": project,
        "session_id": "b",
        "tool_name": "code_search",
        "tool_args": {"query": query},
    }
    observation: str = client.post("/api/agent/execute_action", json=body).json()["observation"]
    return observation


if __name__ == "__main__":
    main()
