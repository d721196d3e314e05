"""A server killed (SIGKILL) at each named point of a PUT, a sync's delete or an approved write, on
the local store and on S3 (moto on loopback): afterwards the path holds its old or its new bytes,
the next writer journals what the dead one left, no version number is used twice, and every
journaled version reads back its exact bytes. Two replicas writing one path at once: per version
one wins, the other gets 412, and nothing is lost."""

import hashlib
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from reactstep.service.backends import s3_client
from reactstep.service.http.app import create_app
from reactstep.service.settings import Settings
from tests.served import free_port, wait_until_up
from tests.service.http.test_two_replicas import replicas  # noqa: F401 (a fixture)

LAUNCHER = str(Path(__file__).parents[2] / "crash_server.py")
OLD, NEW, AFTER = b"old = 1\n", b"new = 2\n", b"after = 3\n"
SECRET = "crash-secret-0123456789abcdef0123"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(params=["local", "s3"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Where the server keeps its files: a data dir, or a fresh bucket on the moto server."""
    if request.param == "local":
        return Settings(data_dir=tmp_path, approval_secret=SECRET)
    endpoint = request.getfixturevalue("s3_server")
    fields: dict[str, Any] = {
        "storage_backend": "s3",
        "s3_endpoint_url": endpoint,
        "s3_region": "us-east-1",
        "s3_access_key_id": "test",
        "s3_secret_access_key": "test",
    }
    bucket = f"crash-{uuid.uuid4().hex[:12]}"
    s3_client(Settings(**fields)).create_bucket(Bucket=bucket)
    return Settings(data_dir=tmp_path, approval_secret=SECRET, s3_bucket=bucket, **fields)


def environment(settings: Settings) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    env |= {"REACTSTEP_DATA_DIR": str(settings.data_dir), "HF_HUB_OFFLINE": "1"}
    env |= {"REACTSTEP_APPROVAL_SECRET": SECRET, "REACTSTEP_STORAGE_BACKEND": settings.storage_backend}
    if settings.storage_backend == "s3":
        env |= {
            "REACTSTEP_S3_ENDPOINT_URL": str(settings.s3_endpoint_url),
            "REACTSTEP_S3_BUCKET": str(settings.s3_bucket),
            "REACTSTEP_S3_REGION": "us-east-1",
            "REACTSTEP_S3_ACCESS_KEY_ID": "test",
            "REACTSTEP_S3_SECRET_ACCESS_KEY": "test",
        }
    return env


def crash(settings: Settings, point: str, work: Callable[[str], None]) -> None:
    """Run `work` against a served process that dies at `point`; it must die there."""
    port = free_port()
    command = [sys.executable, LAUNCHER, "serve", "--host", "127.0.0.1", "--port", str(port)]
    env = environment(settings) | {"CRASH_POINT": point}
    log = Path(settings.data_dir) / f"crash-{point}.log"
    with log.open("wb") as output:
        process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_until_up(url, process)
        except AssertionError as exc:
            raise AssertionError(log.read_text()[-3000:]) from exc
        with pytest.raises(httpx.TransportError):
            work(url)
        assert process.wait(timeout=30) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def put_new(url: str) -> None:
    httpx.put(f"{url}/api/projects/p/files/a.py", content=NEW, timeout=60)


def delete_by_sync(url: str) -> None:
    body = {"files": {"b.py": sha(OLD)}, "apply_deletes": True}
    httpx.post(f"{url}/api/projects/p/sync", json=body, timeout=60)


def approved_edit(url: str) -> None:
    body = {
        "project_id": "p",
        "session_id": "s",
        "tool_name": "edit_file",
        "tool_args": {"path": "a.py", "content": NEW.decode()},
    }
    preview = httpx.post(f"{url}/api/agent/execute_action", json=body, timeout=60).json()
    token = preview["approval"]["token"]
    httpx.post(f"{url}/api/agent/execute_action", json={**body, "approval_token": token}, timeout=60)


WORK = {"put": (put_new, NEW), "sync-delete": (delete_by_sync, None), "approved-write": (approved_edit, NEW)}
POINTS = [
    "write.lease-taken",
    "write.blob-kept",
    "write.file-written",
    "journal.entry-written",
    "write.journaled",
    "write.history-saved",
]
CASES = [
    *(("put", point) for point in POINTS),
    *(("sync-delete", point) for point in ("write.file-written", "journal.entry-written", "write.journaled")),
    *(("approved-write", point) for point in ("write.blob-kept", "write.file-written", "write.journaled")),
]


@pytest.mark.parametrize(("work", "point"), CASES)
def test_a_server_killed_mid_change_leaves_every_version_readable(
    settings: Settings, work: str, point: str
) -> None:
    if settings.storage_backend == "s3" and point in ("write.lease-taken", "write.history-saved"):
        pytest.skip("the local store covers the ends of a change; S3 the points between its writes")
    restarted = TestClient(create_app(settings), raise_server_exceptions=False)
    assert restarted.put("/api/projects/p").status_code == 201
    for path in ("a.py", "b.py"):
        assert restarted.put(f"/api/projects/p/files/{path}", content=OLD).status_code == 200
    action, new = WORK[work]
    crash(settings, point, action)

    held = restarted.get("/api/projects/p/files/a.py")
    now = held.content if held.status_code == 200 else None
    assert now in (OLD, new), now  # old or new bytes, nothing else
    assert restarted.put("/api/projects/p/files/a.py", content=AFTER).status_code == 200  # the next writer
    feed = restarted.get("/api/projects/p/changes", params={"since": 0}).json()
    versions = [change["version"] for change in feed["changes"]]
    assert versions == list(range(1, feed["version"] + 1))  # no gap, no version used twice
    journaled = [(change["path"], change["sha256"]) for change in feed["changes"]]
    assert journaled[:2] == [("a.py", sha(OLD)), ("b.py", sha(OLD))]
    assert journaled[-1] == ("a.py", sha(AFTER))
    if now != OLD:  # the dead writer's change reached the file: it is journaled, once
        assert journaled[2:-1] == [("a.py", None if new is None else sha(new))]
    for change in feed["changes"]:
        reply = restarted.get(
            f"/api/projects/p/files/{change['path']}", params={"version": change["version"]}
        )
        if change["sha256"] is None:
            assert (reply.status_code, reply.json()["error"]["code"]) == (404, "file_not_found")
        else:
            assert (reply.status_code, sha(reply.content)) == (200, change["sha256"]), change


def test_two_replicas_writing_one_path_at_once_lose_nothing(replicas: list[str]) -> None:  # noqa: F811
    a, b = replicas
    assert httpx.put(f"{a}/api/projects/shared").status_code == 201
    file = "/api/projects/shared/files/one.py"
    first = httpx.put(f"{a}{file}", content=b"round = 0\n", timeout=60)
    won: dict[int, bytes] = {first.json()["version"]: b"round = 0\n"}
    lost: list[bytes] = []

    def write(url: str, etag: str, data: bytes) -> tuple[int, bytes, dict[str, Any]]:
        reply = httpx.put(f"{url}{file}", content=data, headers={"if-match": etag}, timeout=60)
        return reply.status_code, data, reply.json()

    with ThreadPoolExecutor(2) as pool:
        for round_number in range(1, 13):
            etag = httpx.get(f"{a}{file}").headers["etag"]
            jobs = [pool.submit(write, url, etag, f"round = {round_number} from {name}\n".encode())
                    for url, name in ((a, "a"), (b, "b"))]  # fmt: skip
            results = sorted(job.result() for job in jobs)
            codes = [code for code, _, _ in results]
            assert codes in ([200, 412], [200, 409]), results
            won[results[0][2]["version"]] = results[0][1]
            lost.append(results[1][1])

    feed = httpx.get(f"{b}/api/projects/shared/changes", params={"since": 0}).json()
    assert [change["version"] for change in feed["changes"]] == sorted(won)  # one version per winner
    assert [change["sha256"] for change in feed["changes"]] == [sha(won[version]) for version in sorted(won)]
    for version, data in won.items():
        for url in replicas:
            reply = httpx.get(f"{url}{file}", params={"version": version})
            assert (reply.status_code, reply.content) == (200, data)
    assert httpx.get(f"{a}{file}").content == won[max(won)]
    assert not {sha(data) for data in lost} & {change["sha256"] for change in feed["changes"]}
