"""Index progress a plugin can draw, over real HTTP with the real model: phases in order, chunk counts
that end equal, an event at least every 2 s; and a run whose server was killed (SIGKILL) mid-embed
is started again by the next server's first look at the project, which then reaches `ready`."""

import itertools
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder
from tests.served import REACTSTEP, free_port, wait_until_up

FILES = 400  # 4,000 chunks: sixteen embedding windows, ~10 s of embedding on a quiet 2-core machine
MAX_GAP_S = 2.0
PHASES = ["scan", "embed", "write", "done"]  # the order the contract promises


def module(number: int) -> bytes:
    return "".join(
        f"def handler_{number}_{n}(value):\n    '''Case {n} of module {number}.'''\n"
        f"    return value * {n} + {number}\n\n\n"
        for n in range(10)
    ).encode()


def upload(url: str, project: str) -> None:
    with httpx.Client(base_url=url, timeout=60) as client:
        client.put(f"/api/projects/{project}").raise_for_status()
        for number in range(FILES):
            client.put(
                f"/api/projects/{project}/files/pkg/m{number}.py", content=module(number)
            ).raise_for_status()


def streamed_index(url: str, project: str) -> list[tuple[float, str, dict[str, Any]]]:
    """(seconds since the request, event name, data) of every event of a streamed run."""
    events: list[tuple[float, str, dict[str, Any]]] = []
    started = time.monotonic()
    with httpx.stream(
        "POST", f"{url}/api/projects/{project}/index", json={"stream": True}, timeout=600
    ) as reply:
        name = ""
        for line in reply.iter_lines():
            if line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: "):
                events.append((time.monotonic() - started, name, json.loads(line.removeprefix("data: "))))
    return events


@pytest.fixture
def url(tmp_path: Path, local_embedder: LocalEmbedder) -> Iterator[str]:
    # Loaded before: loading the model holds the GIL for seconds (once per process, not per run).
    local_embedder.embed_query("load")
    with BackgroundServer(create_app(Settings(data_dir=tmp_path), embedder=local_embedder)) as server:
        yield server.url


def test_a_streamed_run_goes_through_its_phases_with_chunk_counts_and_no_long_silence(url: str) -> None:
    upload(url, "big")
    events = streamed_index(url, "big")
    steps = [data for _, name, data in events if name == "progress"]
    assert [name for _, name, _ in events][-1] == "result"
    result = events[-1][2]
    assert (result["files"], result["chunks"], result["embedded"]) == (FILES, FILES * 10, FILES * 10)
    assert all(
        set(step) == {"phase", "files_done", "files_total", "chunks_done", "chunks_total", "path"}
        for step in steps
    )
    phases = [PHASES.index(step["phase"]) for step in steps]
    assert phases == sorted(phases) and sorted(set(phases)) == [0, 1, 2, 3]
    assert steps[-1] | {"path": ""} == {
        "phase": "done", "files_done": FILES, "files_total": FILES,
        "chunks_done": FILES * 10, "chunks_total": FILES * 10, "path": "",
    }  # fmt: skip
    embedding = [step["chunks_done"] for step in steps if step["phase"] == "embed"]
    assert embedding == sorted(embedding) and {256, 512, FILES * 10} <= set(embedding)  # a step a window
    assert all(step["chunks_total"] == FILES * 10 for step in steps if step["phase"] != "scan")
    moments = [0.0] + [moment for moment, _, _ in events]
    assert moments[-1] > 3 * MAX_GAP_S, "the run is too short to show the gaps"
    timeline = [(round(moment, 2), data.get("phase"), data.get("chunks_done")) for moment, _, data in events]
    assert max(later - earlier for earlier, later in itertools.pairwise(moments)) <= MAX_GAP_S, timeline


def test_the_project_shows_the_same_progress_while_a_background_run_works(url: str) -> None:
    upload(url, "bg")
    assert (
        httpx.post(f"{url}/api/projects/bg/index", json={"background": True}, timeout=60).status_code == 202
    )
    seen = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        project = httpx.get(f"{url}/api/projects/bg", timeout=60).json()
        if project["index_state"] == "ready":
            break
        seen.append(project["indexing"])
        time.sleep(0.2)
    assert project["index_state"] == "ready"
    embedding = [job for job in seen if job is not None and job["phase"] == "embed"]
    assert embedding and all(
        job["chunks_total"] == FILES * 10 and job["files_done"] == FILES for job in embedding
    )
    assert all(time.time() - job["updated"] < 60 and job["state"] == "running" for job in embedding)


def serve(data_dir: Path) -> tuple[str, "subprocess.Popen[bytes]"]:
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    env |= {
        "REACTSTEP_DATA_DIR": str(data_dir),
        "HF_HUB_OFFLINE": "1",
        "REACTSTEP_INDEX_ABANDONED_AFTER_S": "3",
    }
    command = [REACTSTEP, "serve", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    wait_until_up(url, process)
    return url, process


def test_a_run_killed_mid_embed_is_started_again_by_the_next_server(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    local_embedder.embed_query("load")  # the model exported once; both servers read it
    (tmp_path / "models").symlink_to(local_embedder._cache_dir)
    url, process = serve(tmp_path)
    try:
        upload(url, "web")
        assert (
            httpx.post(f"{url}/api/projects/web/index", json={"background": True}, timeout=60).status_code
            == 202
        )
        deadline = time.monotonic() + 300
        job: dict[str, Any] | None = None
        while time.monotonic() < deadline:
            job = httpx.get(f"{url}/api/projects/web", timeout=60).json()["indexing"]
            if job is not None and job["phase"] == "embed" and 0 < job["chunks_done"] < job["chunks_total"]:
                break
            time.sleep(0.05)
        assert job is not None and job["phase"] == "embed", job
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    url, process = serve(tmp_path)
    try:
        time.sleep(3.5)  # the dead run's heartbeat is older than REACTSTEP_INDEX_ABANDONED_AFTER_S now
        first = httpx.get(f"{url}/api/projects/web", timeout=60).json()
        assert first["index_state"] == "indexing" and first["indexing"]["job_id"] != job["job_id"], first
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            project = httpx.get(f"{url}/api/projects/web", timeout=60).json()
            if project["index_state"] != "indexing":
                break
            time.sleep(0.2)
        assert (project["index_state"], project["indexed_version"], project["chunks"]) == (
            "ready",
            FILES,
            FILES * 10,
        )
        body = {
            "project_id": "web",
            "session_id": "s",
            "tool_name": "code_search",
            "tool_args": {"query": "handler_69_9"},
        }
        found = httpx.post(f"{url}/api/agent/execute_action", json=body, timeout=60).json()["observation"]
        assert "pkg/m69.py" in found
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
