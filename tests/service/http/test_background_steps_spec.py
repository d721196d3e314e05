"""A background step's answers, read by a second request, against openapi.yaml: GET /api/agent/steps/{id}
while it runs (202), once it answered (200) or failed (502, 503, 504: the error react_step would have
sent), and its events (200, every one with its id and the schema its name picks)."""

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.service import errors
from reactstep.service.http.app import create_app
from reactstep.service.llm.protocol import LLMReply, LLMRequest
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from tests.service.http.test_openapi import (
    BASE,
    FILE_TEXT,
    REACT,
    REQUEST_ID,
    ScriptedGateway,
    errors_of,
    lookup,
    response_pointer,
)

FINAL = "Thought: done\nFinal Answer: it prints hi"


class SlowGateway(ScriptedGateway):
    """Answers like ScriptedGateway, after a pause: a step that is still running when read."""

    async def complete(self, request: LLMRequest) -> LLMReply:
        await asyncio.sleep(0.5)
        return await super().complete(request)


def started_app(tmp_path: Path, gateway: ScriptedGateway, **more: Any) -> TestClient:
    """An app on the store under tmp_path (a second one on the same path: another replica)."""
    settings = Settings(
        **more,
        data_dir=tmp_path,
        storage_backend="local",
        llm_model="openai/gpt-4o-mini",
        llm_max_retries=0,
        llm_tool_calling="text",
    )
    store = LocalStore(tmp_path / "objects")
    if store.head("demo", "src/app.py") is None:
        store.put("demo", "src/app.py", FILE_TEXT.encode())
    return TestClient(create_app(settings, llm=gateway, store=store), raise_server_exceptions=False)


def start(client: TestClient, **extra: Any) -> str:
    started = client.post(
        REACT, json={**BASE, "background": True, **extra}, headers={"x-request-id": REQUEST_ID}
    )
    assert started.status_code == 202, started.text
    step_id: str = started.json()["step_id"]
    return step_id


def finished(client: TestClient, step_id: str) -> Any:
    deadline = time.monotonic() + 30
    while (answer := client.get(f"/api/agent/steps/{step_id}")).status_code == 202:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return answer


def matches_spec(path: str, status: int, body: Any) -> list[str]:
    pointer = response_pointer(path, "GET", status)
    return errors_of(f"{pointer}/content/application~1json/schema", body)


@pytest.mark.parametrize(
    ("script", "status", "code"),
    [
        (FINAL, 200, None),
        (errors.LLMBadResponse("the LLM sent no choices"), 502, "llm_bad_response"),
        (errors.LLMUnavailable("connection refused"), 503, "llm_unavailable"),
        (errors.LLMTimeout("the LLM did not answer within 60 s"), 504, "llm_timeout"),
    ],
)
def test_a_finished_steps_answer_matches_the_spec(
    tmp_path: Path, script: str | Exception, status: int, code: str | None
) -> None:
    gateway = ScriptedGateway([script])
    with started_app(tmp_path, gateway) as client:
        step_id = start(client)
        answer = finished(client, step_id)
    assert answer.status_code == status
    assert matches_spec(f"/api/agent/steps/{step_id}", status, answer.json()) == []
    if code is None:
        assert answer.json()["final_answer"] == "it prints hi"
    else:
        documented = lookup(response_pointer(f"/api/agent/steps/{step_id}", "GET", status))
        assert code in documented["x-error-codes"]
        assert answer.json()["error"]["code"] == code
        assert answer.json()["error"]["request_id"] == REQUEST_ID  # the request that started the step
    assert len(gateway.requests) == 1


def test_a_running_steps_answer_matches_the_spec(tmp_path: Path) -> None:
    with started_app(tmp_path, SlowGateway([FINAL])) as client:
        step_id = start(client)
        running = client.get(f"/api/agent/steps/{step_id}")
        assert (running.status_code, running.headers["retry-after"]) == (202, "1")
        assert running.json() == {"step_id": step_id, "status": "running"}
        assert matches_spec(f"/api/agent/steps/{step_id}", 202, running.json()) == []
        assert finished(client, step_id).status_code == 200


def test_a_steps_events_match_the_spec(tmp_path: Path) -> None:
    with started_app(tmp_path, ScriptedGateway([FINAL])) as client:
        step_id = start(client)
        answer = finished(client, step_id).json()
        events = client.get(f"/api/agent/steps/{step_id}/events")
    assert events.status_code == 200
    assert events.headers["content-type"] == "text/event-stream; charset=utf-8"
    media = lookup(
        f"{response_pointer(f'/api/agent/steps/{step_id}/events', 'GET', 200)}/content/text~1event-stream"
    )
    parsed = [
        dict(line.split(": ", 1) for line in block.splitlines())
        for block in events.text.split("\n\n")
        if block
    ]
    assert [int(fields["id"]) for fields in parsed] == list(range(len(parsed)))
    names = [fields["event"] for fields in parsed]
    assert (names[0], names[-1]) == ("step", "result")
    assert set(names[1:-1]) == {"thought"}
    for fields in parsed:
        data = json.loads(fields["data"])
        assert errors_of(media["x-sse-events"][fields["event"]].removeprefix("#"), data) == [], fields[
            "event"
        ]
    assert json.loads(parsed[-1]["data"]) == answer


def test_stopping_a_step_matches_the_spec(tmp_path: Path) -> None:
    with (
        started_app(tmp_path, SlowGateway([FINAL])) as running_it,
        started_app(tmp_path, ScriptedGateway([])) as other,
    ):
        step_id = start(running_it)
        elsewhere = other.delete(f"/api/agent/steps/{step_id}")
        stopped = running_it.delete(f"/api/agent/steps/{step_id}")
        gone = other.get(f"/api/agent/steps/{step_id}")
    assert elsewhere.status_code == 409
    pointer = response_pointer(f"/api/agent/steps/{step_id}", "DELETE", 409)
    assert errors_of(f"{pointer}/content/application~1json/schema", elsewhere.json()) == []
    assert elsewhere.json()["error"]["code"] in lookup(pointer)["x-error-codes"]
    assert (stopped.status_code, stopped.content) == (204, b"")
    assert (gone.status_code, gone.json()["error"]["code"]) == (404, "step_not_found")


def test_a_replica_runs_as_many_background_steps_as_requests_at_once(tmp_path: Path) -> None:
    with started_app(tmp_path, SlowGateway([FINAL, FINAL]), max_concurrent_requests=1) as client:
        step_id = start(client)
        refused = client.post(REACT, json={**BASE, "background": True})
        assert finished(client, step_id).status_code == 200
        again = start(client)  # the first one ended: room again
        assert finished(client, again).status_code == 200
    assert (refused.status_code, refused.json()["error"]["code"]) == (503, "overloaded")
    assert refused.headers["retry-after"] == "1"
