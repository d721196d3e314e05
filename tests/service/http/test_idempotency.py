"""Idempotency-Key in one process: the key's form, the answer kept and replayed, another body refused,
callers kept apart, and what is not kept (errors of the moment, a stream that ended in an error)."""

import json
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import Fault, ScriptedLLMServer
from reactstep.service.http.auth import key_entry
from reactstep.service.logs.lines import JsonFormatter
from reactstep.tools.store.local import LocalStore
from tests.service.step.test_react_step import step_body

REACT = "/api/agent/react_step"
FILE = "/api/projects/demo/files/src/new.py"
FINAL = "Thought: main returns 42.\nFinal Answer: 42"


def keyed(key: str | bytes, **headers: str) -> dict[str, str | bytes]:
    return {"idempotency-key": key, **headers}


def versions(client: TestClient) -> int:
    version: int = client.get("/api/projects/demo/changes", params={"since": 0}).json()["version"]
    return version


@pytest.mark.parametrize(
    "key",
    ["", " ", "a b", "a" * 256, '"unclosed', 'bare"', "clé".encode(), "semi;colon", '""'],
)
def test_a_malformed_key_is_refused_with_400_and_nothing_runs(
    make_client: Callable[..., TestClient], key: str | bytes
) -> None:
    client = make_client()
    before = versions(client)
    response = client.put(FILE, content=b"x = 1\n", headers=keyed(key))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_idempotency_key"
    assert set(response.json()["error"]) == {"code", "message", "request_id"}
    assert versions(client) == before


@pytest.mark.parametrize("key", ["k", "a" * 255, "4b8f0c2e-1d3a-4f5e-9a7b-6c1d2e3f4a5b", "Zm9v+/=.:~_-"])
def test_a_put_with_a_key_runs_once_and_its_answer_is_replayed(
    make_client: Callable[..., TestClient], key: str
) -> None:
    client = make_client()
    before = versions(client)
    first = client.put(FILE, content=b"x = 1\n", headers=keyed(key))
    client.put(FILE, content=b"x = 2\n")  # the file moves on meanwhile
    again = client.put(FILE, content=b"x = 1\n", headers=keyed(f'"{key}"'))  # the quoted form: one key
    assert first.status_code == again.status_code == 200
    assert again.content == first.content
    assert again.headers["etag"] == first.headers["etag"]
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    assert versions(client) == before + 2  # the retry wrote nothing
    assert client.get(FILE).content == b"x = 2\n"


def test_the_log_line_says_an_answer_was_replayed(
    make_client: Callable[..., TestClient], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="reactstep")
    client = make_client()
    for _ in range(2):
        client.put(FILE, content=b"x = 1\n", headers=keyed("logged"))
    lines = [json.loads(JsonFormatter().format(record)) for record in caplog.records]
    puts = [line for line in lines if line["message"] == "request" and line.get("method") == "PUT"]
    assert [line.get("idempotency") for line in puts] == [None, "replayed"]


def test_the_same_key_with_another_body_is_422_and_nothing_runs(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    assert client.put(FILE, content=b"x = 1\n", headers=keyed("k1")).status_code == 200
    before = versions(client)
    for method, path, body in [
        ("PUT", FILE, b"x = 9\n"),
        ("DELETE", FILE, b""),
        ("PUT", FILE + "?a=1", b"x = 1\n"),
    ]:
        response = client.request(method, path, content=body, headers=keyed("k1"))
        assert response.status_code == 422
        assert response.json()["error"]["code"] == "idempotency_key_reused"
    assert versions(client) == before
    assert client.get(FILE).content == b"x = 1\n"


def test_keys_belong_to_the_service_key_that_sent_them(
    make_client: Callable[..., TestClient], local_store: LocalStore
) -> None:
    one, two = "rsk_one-0123456789abcdef", "rsk_two-0123456789abcdef"
    client = make_client(api_keys=[key_entry(one), key_entry(two)])
    before = versions_with(client, one)
    for caller, data in [(one, b"a = 1\n"), (two, b"a = 2\n")]:
        response = client.put(FILE, content=data, headers=keyed("same", authorization=f"Bearer {caller}"))
        assert response.status_code == 200
        assert "idempotent-replayed" not in response.headers
    assert versions_with(client, one) == before + 2
    again = client.put(FILE, content=b"a = 1\n", headers=keyed("same", authorization=f"Bearer {one}"))
    assert again.headers["idempotent-replayed"] == "true"


def versions_with(client: TestClient, api_key: str) -> int:
    answer = client.get(
        "/api/projects/demo/changes", params={"since": 0}, headers={"authorization": f"Bearer {api_key}"}
    )
    version: int = answer.json()["version"]
    return version


def test_records_live_beside_the_projects_and_name_neither_key_nor_caller(
    make_client: Callable[..., TestClient], tmp_path: Path
) -> None:
    client = make_client()
    client.put(FILE, content=b"x = 1\n", headers=keyed("secret-looking-key"))
    records = sorted((tmp_path / "objects" / ".reactstep-records").iterdir())
    assert len(records) == 1
    assert "secret-looking-key" not in records[0].name and records[0].name.startswith("idem-")
    record = json.loads(records[0].read_bytes())
    assert (record["state"], record["status"]) == ("done", 200)
    assert "demo" not in {path.name for path in records}
    assert all(
        ".reactstep-records" not in info.path for info in LocalStore(tmp_path / "objects").list("demo")
    )


def test_an_approved_write_repeated_with_its_key_is_answered_from_the_record(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    body = {"project_id": "demo", "session_id": "s", "tool_name": "create_file"}
    body["tool_args"] = {"path": "made.py", "content": "MADE = 1\n"}
    preview = client.post("/api/agent/execute_action", json=body).json()
    approved = {**body, "approval_token": preview["approval"]["token"]}
    first = client.post("/api/agent/execute_action", json=approved, headers=keyed("write-1"))
    again = client.post("/api/agent/execute_action", json=approved, headers=keyed("write-1"))
    assert first.json()["observation"].startswith("Wrote made.py")
    assert again.content == first.content
    assert again.headers["idempotent-replayed"] == "true"


@pytest.mark.parametrize("stream", [False, True])
def test_a_react_step_with_a_key_calls_the_model_once(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer, stream: bool
) -> None:
    llm_server.push(FINAL, FINAL)
    client = make_client()
    first = client.post(REACT, json=step_body(stream=stream), headers=keyed("step-1"))
    again = client.post(REACT, json=step_body(stream=stream), headers=keyed("step-1"))
    assert first.status_code == again.status_code == 200
    assert again.content == first.content
    assert again.headers["content-type"] == first.headers["content-type"]
    assert again.headers["idempotent-replayed"] == "true"
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize("stream", [False, True])
def test_a_step_that_failed_upstream_is_not_kept_and_its_retry_runs(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer, stream: bool
) -> None:
    llm_server.push(Fault(status=401), FINAL)  # an auth failure: no retry inside the server
    client = make_client()
    failed = client.post(REACT, json=step_body(stream=stream), headers=keyed("step-2"))
    if stream:
        assert failed.status_code == 200 and "event: error" in failed.text
    else:
        assert failed.status_code == 502
    retried = client.post(REACT, json=step_body(stream=stream), headers=keyed("step-2"))
    assert retried.status_code == 200 and "idempotent-replayed" not in retried.headers
    assert '"final_answer":"42"' in retried.text.replace(" ", "")
    assert len(llm_server.requests) == 2


def test_a_request_without_a_key_is_untouched(make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    client = make_client()
    first = client.put(FILE, content=b"x = 1\n")
    assert "idempotent-replayed" not in first.headers
    assert not (tmp_path / "objects" / ".reactstep-records").exists()


def test_the_fingerprint_counts_preconditions(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    etag = client.put(FILE, content=b"x = 1\n").headers["etag"]
    assert client.put(FILE, content=b"x = 2\n", headers=keyed("pre", **{"if-match": etag})).status_code == 200
    other = client.put(FILE, content=b"x = 2\n", headers=keyed("pre", **{"if-match": '"00"'}))
    assert other.status_code == 422
