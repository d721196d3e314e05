"""Two service processes on one S3 bucket (moto on loopback), each with a vector store of its own,
interleave uploads, deletes-on-sync and approved tool writes: no write is lost, and the journal has
no gap and no duplicate version; the files are what the journal's last entry for each path says."""

import hashlib
import os
import random
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from reactstep.service.backends import s3_client
from reactstep.service.settings import Settings
from tests.served import free_port, wait_until_up

PROJECT = "shared"
FILES = [f"pkg/m{n}.py" for n in range(6)]
ROUNDS = 12


@pytest.fixture
def replicas(s3_server: str, tmp_path: Path) -> Iterator[list[str]]:
    """Two `reactstep serve` processes on one fresh bucket, each with its own data dir."""
    bucket = f"replicas-{uuid.uuid4().hex[:12]}"
    env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    env |= {
        "REACTSTEP_STORAGE_BACKEND": "s3",
        "REACTSTEP_S3_ENDPOINT_URL": s3_server,
        "REACTSTEP_S3_BUCKET": bucket,
        "REACTSTEP_S3_REGION": "us-east-1",
        "REACTSTEP_S3_ACCESS_KEY_ID": "test",
        "REACTSTEP_S3_SECRET_ACCESS_KEY": "test",
        "REACTSTEP_APPROVAL_SECRET": "replicas-secret-0123456789abcdef",  # tokens work on either
        "HF_HUB_OFFLINE": "1",
    }
    creator = Settings(
        storage_backend="s3",
        s3_endpoint_url=s3_server,
        s3_region="us-east-1",
        s3_access_key_id="test",
        s3_secret_access_key="test",
    )
    s3_client(creator).create_bucket(Bucket=bucket)
    processes, urls = [], []
    for name in ("a", "b"):
        port = free_port()
        command = [
            str(Path(sys.executable).parent / "reactstep"),
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ]
        replica_env = env | {"REACTSTEP_DATA_DIR": str(tmp_path / name)}
        processes.append(
            subprocess.Popen(command, env=replica_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
        urls.append(f"http://127.0.0.1:{port}")
    try:
        for url, process in zip(urls, processes, strict=True):
            wait_until_up(url, process)
        yield urls
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Ledger:
    """What the clients were told was written: (origin, version or None, path, sha256)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: list[tuple[str, int | None, str, str | None]] = []

    def add(self, origin: str, version: int | None, path: str, digest: str | None) -> None:
        with self.lock:
            self.entries.append((origin, version, path, digest))


def uploader(url: str, worker: int, ledger: Ledger) -> None:
    """Unconditional uploads: every one that changes the bytes is a journaled change."""
    for round_number in range(ROUNDS):
        path = FILES[(worker + round_number) % len(FILES)]
        data = f"VALUE = {worker * 1000 + round_number}  # from {url[-5:]}\n".encode()
        reply = httpx.put(f"{url}/api/projects/{PROJECT}/files/{path}", content=data, timeout=60)
        assert reply.status_code == 200, reply.text
        stored = reply.json()
        if stored["changed"]:
            ledger.add("sync", stored["version"], path, sha(data))


def tool_writer(url: str, worker: int, ledger: Ledger) -> None:
    """create_file of new files through the approval flow: each approved write is a tool change."""
    for round_number in range(ROUNDS // 2):
        path = f"tool/w{worker}_{round_number}.py"
        content = f"def written_{worker}_{round_number}():\n    return {round_number}\n"
        body = {
            "project_id": PROJECT,
            "session_id": f"w{worker}",
            "tool_name": "create_file",
            "tool_args": {"path": path, "content": content},
        }
        preview = httpx.post(f"{url}/api/agent/execute_action", json=body, timeout=60).json()
        done = httpx.post(
            f"{url}/api/agent/execute_action",
            json={**body, "approval_token": preview["approval"]["token"]},
            timeout=60,
        ).json()
        assert done["is_error"] is False, done
        ledger.add("tool", None, path, sha(content.encode()))


def deleting_syncer(url: str, worker: int, ledger: Ledger) -> None:
    """Upload a scratch file, then a sync whose manifest lacks it, with apply_deletes (409: retry)."""
    rng = random.Random(worker)
    for round_number in range(ROUNDS // 3):
        path = f"scratch/s{worker}_{round_number}.py"
        data = f"SCRATCH = {rng.random()}\n".encode()
        stored = httpx.put(f"{url}/api/projects/{PROJECT}/files/{path}", content=data, timeout=60).json()
        ledger.add("sync", stored["version"], path, sha(data))
        for _attempt in range(50):
            manifest = current_manifest(url)
            if manifest.pop(path, None) is None:
                break  # another syncer's deletes took it (and told its ledger entry)
            reply = httpx.post(
                f"{url}/api/projects/{PROJECT}/sync",
                json={"files": manifest, "apply_deletes": True},
                timeout=60,
            )
            if reply.status_code == 409:
                assert reply.json()["error"]["code"] == "conflict"
                continue
            assert reply.status_code == 200, reply.text
            for deleted in reply.json()["deleted"]:  # files created since the manifest was read go too
                ledger.add("sync", None, deleted, None)
        else:
            raise AssertionError("the deleting sync never got through")


def current_manifest(url: str) -> dict[str, str]:
    """Every file the project holds now, as a manifest (from the change feed and the files)."""
    feed = httpx.get(f"{url}/api/projects/{PROJECT}/changes", params={"since": 0}, timeout=60).json()
    last: dict[str, str | None] = {}
    for change in feed["changes"]:
        last[change["path"]] = change["sha256"]
    return {path: digest for path, digest in last.items() if digest is not None}


def test_two_processes_interleave_syncs_and_tool_writes_without_a_gap(replicas: list[str]) -> None:
    a, b = replicas
    assert httpx.put(f"{a}/api/projects/{PROJECT}").status_code == 201
    assert httpx.put(f"{b}/api/projects/{PROJECT}").status_code == 200  # one project, seen by both
    ledger = Ledger()
    jobs = [
        (uploader, a, 0), (uploader, b, 1), (uploader, a, 2), (uploader, b, 3),
        (tool_writer, b, 4), (tool_writer, a, 5),
        (deleting_syncer, a, 6), (deleting_syncer, b, 7),
    ]  # fmt: skip
    with ThreadPoolExecutor(len(jobs)) as pool:
        for future in [pool.submit(job, url, worker, ledger) for job, url, worker in jobs]:
            future.result()

    feeds = [
        httpx.get(f"{url}/api/projects/{PROJECT}/changes", params={"since": 0}).json() for url in replicas
    ]
    assert feeds[0] == feeds[1]
    changes = feeds[0]["changes"]
    assert [change["version"] for change in changes] == list(
        range(1, feeds[0]["version"] + 1)
    )  # no gap, no dup
    assert len(changes) == len(ledger.entries)  # every write the clients were told of, and nothing else
    told = sorted((origin, path, digest or "deleted") for origin, _, path, digest in ledger.entries)
    assert sorted((c["origin"], c["path"], c["sha256"] or "deleted") for c in changes) == told
    by_version = {change["version"]: change for change in changes}
    for origin, version, path, digest in ledger.entries:
        if version is not None and origin == "sync" and digest is not None:
            assert (by_version[version]["path"], by_version[version]["sha256"]) == (path, digest)

    final: dict[str, str | None] = {}
    for change in changes:
        final[change["path"]] = change["sha256"]
    for path, digest in final.items():
        for url in replicas:
            response = httpx.get(f"{url}/api/projects/{PROJECT}/files/{path}")
            held = sha(response.content) if response.status_code == 200 else None
            assert held == digest, (url, path)

    # The index code path on shared files: replica a indexes what b's tool wrote, and finds it.
    indexed = httpx.post(f"{a}/api/projects/{PROJECT}/index", json={}, timeout=300).json()
    assert indexed["indexed_version"] == feeds[0]["version"]
    body = {
        "project_id": PROJECT,
        "session_id": "s",
        "tool_name": "code_search",
        "tool_args": {"query": "written_4_0"},
    }
    found = httpx.post(f"{a}/api/agent/execute_action", json=body, timeout=60).json()["observation"]
    assert "tool/w4_0.py:1-2 written_4_0" in found
    assert httpx.get(f"{b}/api/projects/{PROJECT}").json()["index_state"] == "ready"
