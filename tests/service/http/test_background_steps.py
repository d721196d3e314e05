"""Background steps and resumable streams across two `reactstep serve` processes on one S3 bucket
(moto on loopback), the model a scripted OpenAI-compatible server: a step started on one replica is
read on the other, a dropped stream is resumed with Last-Event-ID without a second model call, and a
step is 404 to another key and once its answer expired."""

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer
from reactstep.service.backends import s3_client
from reactstep.service.http.auth import key_entry
from reactstep.service.settings import Settings
from tests.served import free_port, wait_until_up

OWNER_KEY = "owner-key-0123456789abcdef"
OTHER_KEY = "other-key-0123456789abcdef"
PROJECT = "bg"
THOUGHT = "I know this one without reading any file at all."
ANSWER = "Forty-two."
REPLY = f"Thought: {THOUGHT}\nFinal Answer: {ANSWER}"
TIMEOUT_S = 60  # a replica's first step imports litellm: seconds on a loaded machine


@dataclass
class Cluster:
    """The model, two replicas on one bucket, and how to start one more on it."""

    llm: ScriptedLLMServer
    urls: list[str]
    env: dict[str, str]
    tmp_path: Path


@dataclass(frozen=True)
class Event:
    id: int | None
    name: str
    data: dict[str, Any]


def headers(key: str = OWNER_KEY, **more: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}", **more}


@contextmanager
def replica(env: dict[str, str]) -> Iterator[str]:
    """One `reactstep serve` with this environment on a free loopback port, up; stopped after."""
    port = free_port()
    command = [str(Path(sys.executable).parent / "reactstep"), "serve", "--host", "127.0.0.1"]
    process = subprocess.Popen(
        [*command, "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def cluster(s3_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    bucket = f"steps-{uuid.uuid4().hex[:12]}"
    settings = Settings(
        storage_backend="s3",
        s3_endpoint_url=s3_server,
        s3_region="us-east-1",
        s3_access_key_id="test",
        s3_secret_access_key="test",
    )
    s3_client(settings).create_bucket(Bucket=bucket)
    tmp_path = tmp_path_factory.mktemp("replicas")
    with ScriptedLLMServer() as llm:
        env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
        env |= {
            "REACTSTEP_STORAGE_BACKEND": "s3",
            "REACTSTEP_S3_ENDPOINT_URL": s3_server,
            "REACTSTEP_S3_BUCKET": bucket,
            "REACTSTEP_S3_REGION": "us-east-1",
            "REACTSTEP_S3_ACCESS_KEY_ID": "test",
            "REACTSTEP_S3_SECRET_ACCESS_KEY": "test",
            "REACTSTEP_LLM_MODEL": "openai/scripted",
            "REACTSTEP_LLM_API_BASE": llm.base_url,
            "REACTSTEP_API_KEYS": json.dumps([key_entry(OWNER_KEY), key_entry(OTHER_KEY)]),
            "HF_HUB_OFFLINE": "1",
        }
        with (
            replica(env | {"REACTSTEP_DATA_DIR": str(tmp_path / "a")}) as a,
            replica(env | {"REACTSTEP_DATA_DIR": str(tmp_path / "b")}) as b,
        ):
            assert httpx.put(
                f"{a}/api/projects/{PROJECT}", headers=headers(), timeout=TIMEOUT_S
            ).status_code in (200, 201)
            yield Cluster(llm, [a, b], env, tmp_path)


def step_body(**more: Any) -> dict[str, Any]:
    return {
        "project_id": PROJECT,
        "session_id": "s",
        "user_query": "What is the answer?",
        "background": True,
        **more,
    }


def model_calls(llm: ScriptedLLMServer, query: str) -> int:
    """The chat requests the model received for this user query."""
    return sum(query in json.dumps(body.get("messages", [])) for body in llm.requests)


def read_events(lines: Iterator[str], stop_after: int | None = None) -> list[Event]:
    """SSE events from a response's lines, up to `stop_after` of them (all when None)."""
    events: list[Event] = []
    fields: dict[str, str] = {}
    for line in lines:
        if line:
            name, _, value = line.partition(": ")
            fields[name] = value
            continue
        if fields:
            event_id = int(fields["id"]) if "id" in fields else None
            events.append(Event(event_id, fields["event"], json.loads(fields["data"])))
            fields = {}
            if stop_after is not None and len(events) == stop_after:
                break
    return events


def thought_of(events: list[Event]) -> str:
    return "".join(event.data["delta"] for event in events if event.name == "thought")


def stream_then_drop(url: str, body: dict[str, Any], events: int) -> list[Event]:
    """POST a background stream, read its first `events`, and drop the connection."""
    with (
        httpx.Client(timeout=TIMEOUT_S) as http,
        http.stream(
            "POST", f"{url}/api/agent/react_step", json=body, headers=headers(), timeout=TIMEOUT_S
        ) as answer,
    ):
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/event-stream")
        return read_events(answer.iter_lines(), stop_after=events)


def resume(url: str, step_id: str, last_event_id: int) -> list[Event]:
    with (
        httpx.Client(timeout=TIMEOUT_S) as http,
        http.stream(
            "GET",
            f"{url}/api/agent/steps/{step_id}/events",
            headers=headers(**{"last-event-id": str(last_event_id)}),
        ) as answer,
    ):
        assert answer.status_code == 200
        return read_events(answer.iter_lines())


def wait_done(url: str, step_id: str, key: str = OWNER_KEY, timeout_s: float = 30) -> httpx.Response:
    deadline = time.monotonic() + timeout_s
    while (
        answer := httpx.get(f"{url}/api/agent/steps/{step_id}", headers=headers(key), timeout=TIMEOUT_S)
    ).status_code == 202:
        assert answer.json() == {"step_id": step_id, "status": "running"}
        assert time.monotonic() < deadline, "the step never finished"
        time.sleep(0.1)
    return answer


def test_a_step_started_on_one_replica_is_read_on_the_other(cluster: Cluster) -> None:
    a, b = cluster.urls
    query = "Which replica answers? (background)"
    cluster.llm.push(Reply(text=REPLY, delay_s=1.5))
    started = httpx.post(
        f"{a}/api/agent/react_step", json=step_body(user_query=query), headers=headers(), timeout=TIMEOUT_S
    )
    assert started.status_code == 202
    step_id = started.json()["step_id"]
    assert started.json() == {"step_id": step_id, "status": "running"}
    assert started.headers["location"] == f"/api/agent/steps/{step_id}"
    assert step_id.startswith(f"{PROJECT}~") and len(step_id.partition("~")[2]) == 32

    running = httpx.get(f"{b}/api/agent/steps/{step_id}", headers=headers(), timeout=TIMEOUT_S)
    assert (running.status_code, running.headers["retry-after"]) == (202, "1")
    done = wait_done(b, step_id)
    assert done.status_code == 200
    assert (done.json()["status"], done.json()["thought"], done.json()["final_answer"]) == (
        "final_answer",
        THOUGHT,
        ANSWER,
    )
    assert (
        httpx.get(f"{a}/api/agent/steps/{step_id}", headers=headers(), timeout=TIMEOUT_S).json()
        == done.json()
    )
    assert model_calls(cluster.llm, query) == 1


def test_a_dropped_stream_resumes_on_the_replica_running_it(cluster: Cluster) -> None:
    a, _ = cluster.urls
    query = "Resume while it runs"
    cluster.llm.push(Reply(text=REPLY, chunk_chars=4, chunk_delay_s=0.15))
    first = stream_then_drop(a, step_body(user_query=query, stream=True), events=2)
    assert [(event.id, event.name) for event in first] == [(0, "step"), (1, "thought")]
    step_id = first[0].data["step_id"]
    assert first[0].data == {"step_id": step_id, "status": "running"}

    rest = resume(a, step_id, last_event_id=1)
    assert [event.id for event in rest] == list(range(2, 2 + len(rest)))
    assert rest[-1].name == "result" and rest[-1].data["final_answer"] == ANSWER
    assert thought_of(first + rest) == THOUGHT
    assert model_calls(cluster.llm, query) == 1


def test_a_dropped_stream_resumes_on_another_replica_once_done(cluster: Cluster) -> None:
    a, b = cluster.urls
    query = "Resume after it ended"
    cluster.llm.push(Reply(text=REPLY, chunk_chars=4, chunk_delay_s=0.05))
    first = stream_then_drop(a, step_body(user_query=query, stream=True), events=3)
    step_id = first[0].data["step_id"]
    result = wait_done(b, step_id).json()

    rest = resume(b, step_id, last_event_id=2)
    assert [event.id for event in rest] == list(range(3, 3 + len(rest)))
    assert [event.name for event in rest][-1] == "result" and rest[-1].data == result
    assert thought_of(first + rest) == THOUGHT
    assert model_calls(cluster.llm, query) == 1


def test_a_replica_not_running_the_step_sends_its_events_once_it_ends(cluster: Cluster) -> None:
    a, b = cluster.urls
    query = "Follow it from the other replica"
    cluster.llm.push(Reply(text=REPLY, chunk_chars=4, chunk_delay_s=0.1))
    first = stream_then_drop(a, step_body(user_query=query, stream=True), events=1)
    step_id = first[0].data["step_id"]

    rest = resume(b, step_id, last_event_id=0)  # running on a: b waits for the record
    assert [event.id for event in rest] == list(range(1, 1 + len(rest)))
    assert rest[-1].name == "result" and thought_of(rest) == THOUGHT
    assert model_calls(cluster.llm, query) == 1


def test_another_keys_step_is_not_found(cluster: Cluster) -> None:
    a, b = cluster.urls
    started = httpx.post(
        f"{a}/api/agent/react_step",
        json=step_body(max_iterations_left=0),
        headers=headers(),
        timeout=TIMEOUT_S,
    ).json()
    step_id = started["step_id"]
    assert wait_done(a, step_id).json()["status"] == "max_iterations_reached"
    for url in (a, b):
        for path in (f"/api/agent/steps/{step_id}", f"/api/agent/steps/{step_id}/events"):
            answer = httpx.get(f"{url}{path}", headers=headers(OTHER_KEY), timeout=TIMEOUT_S)
            assert (answer.status_code, answer.json()["error"]["code"]) == (404, "step_not_found")


@pytest.mark.parametrize(
    ("path", "sent", "status", "code"),
    [
        ("/api/agent/steps/bg~short", {}, 404, "step_not_found"),
        (f"/api/agent/steps/bg~{'A' * 32}", {}, 404, "step_not_found"),
        (f"/api/agent/steps/bg~{'A' * 32}/events", {}, 404, "step_not_found"),
        (f"/api/agent/steps/bg~{'A' * 32}/events", {"last-event-id": "x"}, 400, "bad_request"),
    ],
)
def test_bad_step_requests_are_4xx(
    cluster: Cluster, path: str, sent: dict[str, str], status: int, code: str
) -> None:
    answer = httpx.get(f"{cluster.urls[0]}{path}", headers=headers(**sent), timeout=TIMEOUT_S)
    assert (answer.status_code, answer.json()["error"]["code"]) == (status, code)


def test_a_step_is_not_found_once_its_answer_expired(cluster: Cluster) -> None:
    env = cluster.env | {
        "REACTSTEP_DATA_DIR": str(cluster.tmp_path / "c"),
        "REACTSTEP_STEP_RESULTS_TTL_S": "2",
    }
    with replica(env) as c:
        started = httpx.post(
            f"{c}/api/agent/react_step",
            json=step_body(max_iterations_left=0),
            headers=headers(),
            timeout=TIMEOUT_S,
        ).json()
        step_id = started["step_id"]
        assert wait_done(cluster.urls[0], step_id).status_code == 200
        time.sleep(2.2)
        for path in (f"/api/agent/steps/{step_id}", f"/api/agent/steps/{step_id}/events"):
            answer = httpx.get(f"{cluster.urls[1]}{path}", headers=headers(), timeout=TIMEOUT_S)
            assert (answer.status_code, answer.json()["error"]["code"]) == (404, "step_not_found")


def test_only_the_replica_running_a_step_stops_it_and_any_replica_forgets_it_once_done(
    cluster: Cluster,
) -> None:
    a, b = cluster.urls
    query = "Stop me"
    cluster.llm.push(Reply(text=REPLY, chunk_chars=2, chunk_delay_s=0.1))
    first = stream_then_drop(a, step_body(user_query=query, stream=True), events=2)
    step_id = first[0].data["step_id"]
    elsewhere = httpx.delete(f"{b}/api/agent/steps/{step_id}", headers=headers(), timeout=TIMEOUT_S)
    assert (elsewhere.status_code, elsewhere.json()["error"]["code"]) == (409, "step_running_elsewhere")
    assert (
        httpx.delete(
            f"{a}/api/agent/steps/{step_id}", headers=headers(OTHER_KEY), timeout=TIMEOUT_S
        ).status_code
        == 404
    )
    streams_before = len(cluster.llm.streams)
    assert (
        httpx.delete(f"{a}/api/agent/steps/{step_id}", headers=headers(), timeout=TIMEOUT_S).status_code
        == 204
    )
    deadline = time.monotonic() + 5
    while len(cluster.llm.streams) == streams_before:  # the model server notes the stream when it ends
        assert time.monotonic() < deadline, "the model call went on after the step was stopped"
        time.sleep(0.02)
    assert cluster.llm.streams[-1].outcome == "disconnected"
    for url in (a, b):
        gone = httpx.get(f"{url}/api/agent/steps/{step_id}", headers=headers(), timeout=TIMEOUT_S)
        assert (gone.status_code, gone.json()["error"]["code"]) == (404, "step_not_found")

    done = httpx.post(
        f"{a}/api/agent/react_step",
        json=step_body(max_iterations_left=0),
        headers=headers(),
        timeout=TIMEOUT_S,
    )
    done_id = done.json()["step_id"]
    assert wait_done(b, done_id).status_code == 200
    assert (
        httpx.delete(f"{b}/api/agent/steps/{done_id}", headers=headers(), timeout=TIMEOUT_S).status_code
        == 204
    )
    assert (
        httpx.get(f"{a}/api/agent/steps/{done_id}", headers=headers(), timeout=TIMEOUT_S).status_code == 404
    )
    assert model_calls(cluster.llm, query) == 1
