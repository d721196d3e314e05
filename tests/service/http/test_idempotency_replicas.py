"""Idempotency-Key across two `reactstep serve` processes on one S3 bucket (moto on loopback): a retry
on the other replica gets the first answer and nothing runs twice; another body is 422; a retry
while the first still runs is 409; a keyed react_step calls the scripted model once."""

import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reactstep.client.traces.scripted_llm import Fault, ScriptedLLMServer
from reactstep.service.backends import s3_client
from reactstep.service.settings import Settings
from tests.served import free_port, wait_until_up

PROJECT = "keyed"
FINAL = "Thought: main returns 42.\nFinal Answer: 42"
STEP = {
    "project_id": PROJECT,
    "session_id": "s-1",
    "user_query": "What does main return?",
    "conversation_history": [],
    "max_iterations_left": 5,
}


@pytest.fixture
def replicas(s3_server: str, llm_server: ScriptedLLMServer, tmp_path: Path) -> Iterator[list[str]]:
    """Two `reactstep serve` processes on one fresh bucket and the scripted model; the project made."""
    bucket = f"idem-{uuid.uuid4().hex[:12]}"
    s3 = {
        "endpoint_url": s3_server,
        "region": "us-east-1",
        "access_key_id": "test",
        "secret_access_key": "test",
    }
    creator = Settings(storage_backend="s3", **{f"s3_{name}": value for name, value in s3.items()})
    s3_client(creator).create_bucket(Bucket=bucket)
    env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    env |= {f"REACTSTEP_S3_{name.upper()}": value for name, value in s3.items()}
    env |= {
        "REACTSTEP_STORAGE_BACKEND": "s3",
        "REACTSTEP_S3_BUCKET": bucket,
        "REACTSTEP_APPROVAL_SECRET": "replicas-secret-0123456789abcdef",
        "REACTSTEP_LLM_MODEL": "openai/scripted",
        "REACTSTEP_LLM_API_BASE": llm_server.base_url,
        "REACTSTEP_LLM_API_KEY": "sk-scripted",
        "REACTSTEP_LLM_MAX_RETRIES": "0",
        "HF_HUB_OFFLINE": "1",
    }
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
        assert httpx.put(f"{urls[0]}/api/projects/{PROJECT}").status_code == 201
        yield urls
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


def version(url: str) -> int:
    found: int = httpx.get(f"{url}/api/projects/{PROJECT}/changes", params={"since": 0}).json()["version"]
    return found


def approved_write(url: str, path: str) -> dict[str, Any]:
    """An approved create_file request (its preview asked on `url`, whose token any replica takes)."""
    body = {"project_id": PROJECT, "session_id": "s", "tool_name": "create_file"}
    body["tool_args"] = {"path": path, "content": "MADE = 1\n"}
    preview = httpx.post(f"{url}/api/agent/execute_action", json=body, timeout=60).json()
    return {**body, "approval_token": preview["approval"]["token"]}


@pytest.mark.parametrize("write", ["put", "approved"])
def test_a_retry_on_the_other_replica_gets_the_first_answer_and_the_version_moves_once(
    replicas: list[str], write: str
) -> None:
    a, b = replicas
    before = version(a)
    if write == "put":
        path, request = f"/api/projects/{PROJECT}/files/m.py", {"method": "PUT", "content": b"M = 1\n"}
        other = {"method": "PUT", "content": b"M = 2\n"}
    else:
        path, request = "/api/agent/execute_action", {"method": "POST", "json": approved_write(a, "made.py")}
        other = {"method": "POST", "json": {**request["json"], "session_id": "another"}}
    headers = {"idempotency-key": f'"{write}-1"'}
    first = httpx.request(url=a + path, headers=headers, timeout=60, **request)
    again = httpx.request(url=b + path, headers=headers, timeout=60, **request)
    assert first.status_code == again.status_code == 200
    assert again.content == first.content
    assert again.headers["idempotent-replayed"] == "true" and "idempotent-replayed" not in first.headers
    assert version(a) == version(b) == before + 1
    reused = httpx.request(url=b + path, headers=headers, timeout=60, **other)
    assert reused.status_code == 422
    assert reused.json()["error"]["code"] == "idempotency_key_reused"
    assert version(b) == before + 1


def test_a_retry_while_the_first_runs_is_409_then_gets_its_answer(
    replicas: list[str], llm_server: ScriptedLLMServer
) -> None:
    a, b = replicas
    llm_server.push(Fault(delay_s=6.0), FINAL)  # long enough for the retry on b, on a busy machine
    headers = {"idempotency-key": "step-in-flight"}
    answers: list[httpx.Response] = []
    first = threading.Thread(
        target=lambda: answers.append(
            httpx.post(f"{a}/api/agent/react_step", json=STEP, headers=headers, timeout=60)
        )
    )
    first.start()
    deadline = time.monotonic() + 60  # the first step also imports litellm
    while not llm_server.requests:  # the first step is at the model now
        assert time.monotonic() < deadline, "the first step never reached the model"
        time.sleep(0.02)
    busy = httpx.post(f"{b}/api/agent/react_step", json=STEP, headers=headers, timeout=60)
    assert busy.status_code == 409
    assert busy.json()["error"]["code"] == "idempotency_key_in_flight"
    assert busy.headers["retry-after"] == "1"
    first.join()
    assert answers[0].status_code == 200 and answers[0].json()["final_answer"] == "42"
    replayed = httpx.post(f"{b}/api/agent/react_step", json=STEP, headers=headers, timeout=60)
    assert replayed.content == answers[0].content
    assert replayed.headers["idempotent-replayed"] == "true"
    assert len(llm_server.requests) == 1  # the model was called once for three requests
