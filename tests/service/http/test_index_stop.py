"""Stopping an index run (DELETE /api/projects/{id}/index) over real HTTP with the real model: the run
ends mid-embed, the index stays consistent (stale, at the version the last complete run reached), and
a new run completes it without embedding again what the stopped run wrote; a stop asked on another
replica (the flag in the shared head) reaches the run through its heartbeat, between two `reactstep
serve` processes on one S3 bucket too."""

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.runtime import Runtime
from reactstep.service.settings import Settings
from reactstep.service.workspace.index_jobs import stop_index_run
from reactstep.tools.embedding.embeddings import LocalEmbedder
from tests.service.http.test_index_progress import module
from tests.service.http.test_openapi import errors_of, response_pointer
from tests.service.http.test_two_replicas import replicas  # noqa: F401 - the fixture of two replicas

FILES = 200  # 2,000 chunks: eight embedding windows; the stop lands after the first
CHUNKS = FILES * 10
LATE = b"def reconcile_ledger_totals(ledger):\n    '''Sum the ledger's debits against its credits.'''\n"


@pytest.fixture
def app(tmp_path: Path, local_embedder: LocalEmbedder) -> Starlette:
    local_embedder.embed_query("load")  # loading holds the GIL for seconds, once per process
    return create_app(Settings(data_dir=tmp_path), embedder=local_embedder)


@pytest.fixture
def url(app: Starlette) -> Iterator[str]:
    with BackgroundServer(app) as server:
        yield server.url


def upload(url: str, project: str) -> None:
    with httpx.Client(base_url=url, timeout=60) as client:
        client.put(f"/api/projects/{project}").raise_for_status()
        for number in range(FILES):
            path = f"/api/projects/{project}/files/pkg/m{number:03d}.py"
            client.put(path, content=module(number)).raise_for_status()


def wait_until_embedding(url: str, project: str) -> dict[str, Any]:
    """The run's job once it has embedded its first window (mid-run: more windows are to come)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        job = httpx.get(f"{url}/api/projects/{project}", timeout=60).json()["indexing"]
        if job is not None and job["phase"] == "embed" and job["chunks_done"] >= 256:
            assert job["chunks_done"] < CHUNKS, "the run ended before it could be stopped"
            return dict(job)
        time.sleep(0.05)
    raise AssertionError("the run never reached its embedding")


def search(url: str, project: str, query: str) -> str:
    body = {
        "project_id": project,
        "session_id": "s",
        "tool_name": "code_search",
        "tool_args": {"query": query},
    }
    answer = httpx.post(f"{url}/api/agent/execute_action", json=body, timeout=120).json()
    return str(answer["observation"])


def index_jobs(url: str) -> dict[str, float]:
    lines = httpx.get(f"{url}/metrics").text.splitlines()
    return {
        line.split("outcome=")[1].split('"')[1]: float(line.rsplit(" ", 1)[1])
        for line in lines
        if line.startswith('reactstep_index_jobs_total{kind="run"')
    }


def test_a_stopped_run_leaves_an_index_that_a_new_run_completes(url: str) -> None:
    upload(url, "big")
    assert (
        httpx.post(f"{url}/api/projects/big/index", json={"background": True}, timeout=60).status_code == 202
    )
    wait_until_embedding(url, "big")

    stop = httpx.delete(f"{url}/api/projects/big/index", timeout=60)

    assert (stop.status_code, stop.json()) == (
        200,
        {"project_id": "big", "stopped": True, "indexed_version": 0, "index_state": "stale"},
    )
    project = httpx.get(f"{url}/api/projects/big", timeout=60).json()
    assert (project["indexing"], project["index_state"], project["indexed_version"]) == (None, "stale", 0)
    assert index_jobs(url) == {"index_stopped": 1.0}
    late = httpx.put(f"{url}/api/projects/big/files/late/ledger.py", content=LATE, timeout=60)
    assert late.status_code in (200, 201)

    again = httpx.post(f"{url}/api/projects/big/index", json={}, timeout=600).json()

    assert (again["files"], again["chunks"], again["indexed_version"]) == (FILES + 1, CHUNKS + 1, FILES + 1)
    assert again["embedded"] + again["reused"] == CHUNKS + 1
    assert 256 <= again["reused"] < CHUNKS  # what the stopped run wrote is kept, not embedded again
    assert httpx.get(f"{url}/api/projects/big", timeout=60).json()["index_state"] == "ready"
    assert "late/ledger.py" in search(url, "big", "reconcile ledger totals")
    assert f"pkg/m{FILES - 1}.py" in search(url, "big", f"Case 3 of module {FILES - 1}")
    assert index_jobs(url) == {"index_stopped": 1.0, "ok": 1.0}


def run_in_thread(url: str, project: str, body: dict[str, Any]) -> tuple[threading.Thread, list[Any]]:
    """POST .../index on a thread of its own: [(status, JSON)] or [(event, data), ...] once it ends."""
    answers: list[Any] = []

    def run() -> None:
        with httpx.stream("POST", f"{url}/api/projects/{project}/index", json=body, timeout=600) as reply:
            if not body.get("stream"):
                answers.append((reply.status_code, json.loads(reply.read())))
                return
            name = ""
            for line in reply.iter_lines():
                if line.startswith("event: "):
                    name = line.removeprefix("event: ")
                elif line.startswith("data: "):
                    answers.append((name, json.loads(line.removeprefix("data: "))))

    thread = threading.Thread(target=run)
    thread.start()
    return thread, answers


@pytest.mark.parametrize("streamed", [False, True], ids=["waited", "streamed"])
def test_a_stop_asked_on_another_replica_ends_the_run_with_index_stopped(
    app: Starlette, url: str, streamed: bool
) -> None:
    upload(url, "far")
    runtime: Runtime = app.state.runtime
    thread, answers = run_in_thread(url, "far", {"stream": streamed})
    wait_until_embedding(url, "far")
    # What a DELETE on another replica writes: the flag in the shared head, and nothing in this process.
    runtime.projects.update_indexing("far", lambda job: job and {**job, "stopping": True})
    asked = time.monotonic()
    thread.join(timeout=120)

    assert time.monotonic() - asked < 30
    assert runtime.projects.head("far").indexing is None
    if streamed:
        name, data = answers[-1]
        assert (name, data["error"]["code"]) == ("error", "index_stopped")
        assert [step["chunks_done"] for name, step in answers if name == "progress"][-1] < CHUNKS
    else:
        [(status, body)] = answers
        assert (status, body["error"]["code"]) == (409, "index_stopped")
        pointer = response_pointer("/api/projects/far/index", "post", 409)
        assert errors_of(f"{pointer}/content/application~1json/schema", body) == []


def test_a_run_still_at_work_when_the_wait_ends_is_answered_202_stopping(app: Starlette, url: str) -> None:
    upload(url, "slow")
    runtime: Runtime = app.state.runtime
    thread, answers = run_in_thread(url, "slow", {})
    wait_until_embedding(url, "slow")

    status, accepted = stop_index_run("slow", runtime, wait_s=0)

    body = accepted.model_dump(mode="json")
    assert (status, body["project_id"], body["indexing"]["stopping"]) == (202, "slow", True)
    pointer = response_pointer("/api/projects/slow/index", "delete", 202)
    assert errors_of(f"{pointer}/content/application~1json/schema", body) == []
    thread.join(timeout=120)
    assert answers[0][0] == 409
    assert runtime.projects.head("slow").indexing is None


def test_a_delete_with_no_run_at_work_stops_nothing(url: str) -> None:
    httpx.put(f"{url}/api/projects/idle", timeout=60).raise_for_status()
    stop = httpx.delete(f"{url}/api/projects/idle/index", timeout=60)
    assert (stop.status_code, stop.json()) == (
        200,
        {"project_id": "idle", "stopped": False, "indexed_version": 0, "index_state": "ready"},
    )
    missing = httpx.delete(f"{url}/api/projects/nowhere/index", timeout=60)
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "project_not_found")


def test_a_run_that_died_with_its_server_is_cleared_not_restarted(app: Starlette, url: str) -> None:
    httpx.put(f"{url}/api/projects/dead", timeout=60).raise_for_status()
    runtime: Runtime = app.state.runtime
    job = {"state": "running", "job_id": "gone", "started": 1.0, "updated": 1.0, "phase": "embed"}
    runtime.projects.set_indexing("dead", job)  # a heartbeat silent since 1970

    stop = httpx.delete(f"{url}/api/projects/dead/index", timeout=60)

    assert (stop.status_code, stop.json()["stopped"]) == (200, True)
    project = httpx.get(f"{url}/api/projects/dead", timeout=60).json()  # a look restarts abandoned runs
    assert (project["indexing"], project["index_state"]) == (None, "ready")


def test_a_delete_on_one_replica_stops_the_run_of_another(replicas: list[str]) -> None:  # noqa: F811
    running, other = replicas  # two `reactstep serve` processes on one S3 bucket
    upload(running, "shared-run")
    started = httpx.post(f"{running}/api/projects/shared-run/index", json={"background": True}, timeout=120)
    assert started.status_code == 202
    wait_until_embedding(other, "shared-run")  # the run's progress, read from the other replica

    stop = httpx.delete(f"{other}/api/projects/shared-run/index", timeout=120)

    assert (stop.status_code, stop.json()["stopped"], stop.json()["index_state"]) == (200, True, "stale")
    project = httpx.get(f"{running}/api/projects/shared-run", timeout=60).json()
    assert (project["indexing"], project["index_state"]) == (None, "stale")
    assert index_jobs(running) == {"index_stopped": 1.0}
    again = httpx.post(f"{running}/api/projects/shared-run/index", json={}, timeout=600).json()
    assert (again["chunks"], again["indexed_version"]) == (CHUNKS, FILES)
    assert 256 <= again["reused"] < CHUNKS
