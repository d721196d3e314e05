"""A step whose replica died: its record says `running` and nobody will finish it. Another replica (an app
on the same store, which never ran the step) answers 202 until the record's lost_after, then 404
step_lost; a stream that waits for it ends with an `error` event step_lost; an expired answer is gone
from the store once asked for."""

import json
import time
from dataclasses import replace
from pathlib import Path

from starlette.testclient import TestClient

from reactstep.service.http.app import create_app
from reactstep.service.http.auth import key_owner
from reactstep.service.http.step_records import (
    StepId,
    done_record,
    new_step_id,
    running_record,
    save_record,
)
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore

DEV_OWNER = key_owner({"headers": []})  # dev mode, no key: every caller is this one


def replica(tmp_path: Path) -> tuple[TestClient, LocalStore]:
    store = LocalStore(tmp_path / "objects")
    store.put("demo", "README.md", b"# Demo\n")
    app = create_app(Settings(data_dir=tmp_path, llm_model="openai/none"), store=store)
    return TestClient(app, raise_server_exceptions=False), store


def dead_replicas_step(store: LocalStore, lost_in_s: float) -> StepId:
    """A running record, as a replica that died leaves it, lost `lost_in_s` from now."""
    step = new_step_id("demo")
    record = running_record(DEV_OWNER, 0.0)
    save_record(store, step, replace(record, lost_after=time.time() + lost_in_s))
    return step


def test_a_step_whose_replica_died_is_running_then_lost(tmp_path: Path) -> None:
    client, store = replica(tmp_path)
    step = dead_replicas_step(store, lost_in_s=60)
    running = client.get(f"/api/agent/steps/{step.text}")
    assert (running.status_code, running.json()) == (202, {"step_id": step.text, "status": "running"})

    lost = dead_replicas_step(store, lost_in_s=-1)
    for path in (f"/api/agent/steps/{lost.text}", f"/api/agent/steps/{lost.text}/events"):
        answer = client.get(path)
        assert (answer.status_code, answer.json()["error"]["code"]) == (404, "step_lost")


def test_a_stream_waiting_for_a_lost_step_ends_with_step_lost(tmp_path: Path) -> None:
    client, store = replica(tmp_path)
    step = dead_replicas_step(store, lost_in_s=1.0)
    began = time.monotonic()
    with client:
        answer = client.get(f"/api/agent/steps/{step.text}/events", headers={"last-event-id": "0"})
    assert answer.status_code == 200
    lines = answer.text.strip().split("\n")
    assert lines[0] == "event: error"
    assert json.loads(lines[1].removeprefix("data: "))["error"]["code"] == "step_lost"
    assert len(lines) == 2
    assert 1.0 <= time.monotonic() - began < 10


def test_an_expired_answer_is_deleted_when_asked_for(tmp_path: Path) -> None:
    client, store = replica(tmp_path)
    step = new_step_id("demo")
    running = running_record(DEV_OWNER, 0.0)
    save_record(store, step, done_record(running, 200, {"status": "final_answer"}, [], ttl_s=-1))
    assert store.get_index_file("demo", step.record_name) is not None
    answer = client.get(f"/api/agent/steps/{step.text}")
    assert (answer.status_code, answer.json()["error"]["code"]) == (404, "step_not_found")
    assert store.get_index_file("demo", step.record_name) is None
