"""Dependency faults are clean and bounded in time: the object store, Qdrant and the LLM, each down,
stalled or failing, answer a documented error within a fixed deadline, and /readyz names the culprit.

Every back-end is a real protocol speaker on loopback (moto's S3 server, the scripted LLM), a closed
port, or a black hole that accepts connections and never answers.
"""

import json
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from moto.server import ThreadedMotoServer
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import Fault, ScriptedLLMServer
from reactstep.service.backends import s3_client
from reactstep.service.http.app import create_app
from reactstep.service.http.readiness import READINESS_TIMEOUT_S
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder
from reactstep.tools.errors import StoreUnavailable
from reactstep.tools.store.s3 import S3Store
from reactstep.tools.store.s3_clients import S3Config
from tests.service.http.test_openapi import errors_of, response_pointer
from tests.timing import LOAD_SLACK_S

REACT, EXECUTE = "/api/agent/react_step", "/api/agent/execute_action"
DEAD = "http://127.0.0.1:9"  # the discard port: connection refused at once
READ = {"project_id": "demo", "session_id": "s", "tool_name": "read_file", "tool_args": {"file_path": "a.py"}}
SEARCH = {"project_id": "demo", "session_id": "s", "tool_name": "code_search", "tool_args": {"query": "main"}}
STEP = {"project_id": "demo", "session_id": "s", "user_query": "q"}


class BlackHole:
    """A loopback port that accepts connections and reads forever, never answering."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._open: list[socket.socket] = []
        self._closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            self._open.append(connection)

    def close(self) -> None:
        self._closed.set()
        self._listener.close()
        for connection in self._open:
            connection.close()


@pytest.fixture
def black_hole() -> Iterator[BlackHole]:
    hole = BlackHole()
    try:
        yield hole
    finally:
        hole.close()


@pytest.fixture
def moto() -> Iterator[ThreadedMotoServer]:
    """A moto S3 server of this test's own, so the test may stop it."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def s3_fields(endpoint: str, bucket: str = "unused") -> dict[str, Any]:
    return {
        "storage_backend": "s3",
        "s3_endpoint_url": endpoint,
        "s3_bucket": bucket,
        "s3_access_key_id": "test",
        "s3_secret_access_key": "test",
        "s3_region": "us-east-1",
        "s3_timeout_s": 0.5,
    }


def endpoint(server: ThreadedMotoServer) -> str:
    host, port = server.get_host_and_port()
    return f"http://{host}:{port}"


def app_for(tmp_path: Path, embedder: LocalEmbedder | None = None, **fields: Any) -> TestClient:
    settings = Settings(data_dir=tmp_path, llm_retry_base_s=0.01, **fields)
    client = TestClient(create_app(settings, embedder=embedder), raise_server_exceptions=False)
    client.put("/api/projects/demo")  # the project the calls name (503 where the store is down)
    return client


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = call()
    return result, time.perf_counter() - started


def assert_documented(path: str, response: Any, status: int, code: str) -> None:
    """The answer has the status and code, and the spec documents both for this route."""
    assert (response.status_code, response.json()["error"]["code"]) == (status, code), response.text
    pointer = response_pointer(path, "POST", status)
    assert errors_of(f"{pointer}/content/application~1json/schema", response.json()) == []


def test_object_store_that_goes_down(tmp_path: Path, moto: ThreadedMotoServer) -> None:
    bucket = f"faults-{uuid.uuid4().hex[:12]}"
    settings = Settings(data_dir=tmp_path, **s3_fields(endpoint(moto), bucket))
    s3_client(settings).create_bucket(Bucket=bucket)
    # Started (its lifespan): /readyz's llm verdict is made in the background, not inside the timed call.
    with app_for(tmp_path, **s3_fields(endpoint(moto), bucket)) as client:
        S3Store(bucket, settings.s3_prefix, s3_client(settings)).put("demo", "a.py", b"x = 1\n")
        assert client.post(EXECUTE, json=READ).json()["is_error"] is False
        moto.stop()
        response, elapsed = timed(lambda: client.post(EXECUTE, json=READ))
        assert_documented(EXECUTE, response, 503, "storage_unavailable")
        assert elapsed < 5 + LOAD_SLACK_S
        ready, elapsed = timed(lambda: client.get("/readyz"))
        assert (ready.status_code, ready.json()["checks"]["storage"]) == (
            503,
            "unavailable: object store unreachable: EndpointConnectionError",
        )
        assert elapsed < READINESS_TIMEOUT_S + LOAD_SLACK_S


def test_object_store_that_stalls(tmp_path: Path, black_hole: BlackHole) -> None:
    client = app_for(tmp_path, **s3_fields(black_hole.url))
    response, elapsed = timed(lambda: client.post(EXECUTE, json=READ))
    assert_documented(EXECUTE, response, 503, "storage_unavailable")
    # Three attempts of at most 0.5 s to connect and 0.5 s to read, plus botocore's backoff (< 1 + 2 s).
    assert elapsed < S3Config().max_attempts * 0.5 * 2 + 3 + LOAD_SLACK_S
    # A store that would take 3 x 10 s on its own: the readiness deadline (2 s) answers first.
    with app_for(tmp_path, **{**s3_fields(black_hole.url), "s3_timeout_s": 10.0}) as patient:
        ready, elapsed = timed(lambda: patient.get("/readyz"))
    assert ready.status_code == 503 and ready.json()["checks"]["storage"].startswith("unavailable: ")
    assert elapsed < READINESS_TIMEOUT_S + LOAD_SLACK_S


def test_a_failed_write_leaves_the_old_content(tmp_path: Path, moto: ThreadedMotoServer) -> None:
    bucket = f"faults-{uuid.uuid4().hex[:12]}"
    settings = Settings(data_dir=tmp_path, **s3_fields(endpoint(moto), bucket))
    s3 = s3_client(settings)
    s3.create_bucket(Bucket=bucket)
    store = S3Store(bucket, settings.s3_prefix, s3)
    store.put("demo", "a.py", b"old\n")
    host, port = moto.get_host_and_port()
    moto.stop()
    with pytest.raises(StoreUnavailable):
        store.put("demo", "a.py", b"new\n")
    restarted = ThreadedMotoServer(ip_address=host, port=port, verbose=False)
    restarted.start()
    try:
        assert store.get("demo", "a.py") == b"old\n"
    finally:
        restarted.stop()


@pytest.mark.parametrize("where", ["dead", "stalled"])
def test_vector_store_that_is_down_or_stalls(
    tmp_path: Path, local_embedder: LocalEmbedder, black_hole: BlackHole, where: str
) -> None:
    url = DEAD if where == "dead" else black_hole.url
    fields = {"vector_backend": "qdrant", "qdrant_url": url, "qdrant_timeout_s": 1.0}
    client = app_for(tmp_path, local_embedder, **fields)
    client.post(EXECUTE, json=READ)  # loads the model outside the timed call
    local_embedder.embed_query("warm up")
    response, elapsed = timed(lambda: client.post(EXECUTE, json=SEARCH))
    assert_documented(EXECUTE, response, 503, "vector_store_unavailable")
    assert elapsed < 4 + LOAD_SLACK_S
    index, elapsed = timed(lambda: client.post("/api/projects/demo/index"))
    assert_documented("/api/projects/demo/index", index, 503, "vector_store_unavailable")
    assert elapsed < 4 + LOAD_SLACK_S
    ready = client.get("/readyz").json()
    assert ready["checks"]["storage"] == "ok" and ready["checks"]["vectors"].startswith("unavailable: ")


@pytest.mark.parametrize(
    ("where", "code", "status", "deadline_s"),
    [
        ("dead", "llm_unavailable", 503, 2.0),
        ("stalled", "llm_timeout", 504, 1.5),
    ],
)
def test_llm_that_is_down_or_stalls(
    tmp_path: Path, black_hole: BlackHole, where: str, code: str, status: int, deadline_s: float
) -> None:
    base = f"{DEAD if where == 'dead' else black_hole.url}/v1"
    fields = {"llm_api_base": base, "llm_timeout_s": 0.5, "llm_deadline_s": 1.0, "llm_max_retries": 3}
    client = app_for(tmp_path, **fields)
    client.post(REACT, json=STEP)  # the first call imports litellm's provider code; not timed
    for stream in (False, True):
        body = {**STEP, "stream": stream}
        response, elapsed = timed(lambda: client.post(REACT, json=body))  # noqa: B023 (called at once)
        assert elapsed < deadline_s + LOAD_SLACK_S
        if stream:
            assert response.status_code == 200 and f'"code":"{code}"' in response.text
            message = json.loads(response.text.split("data: ", 1)[1])["error"]["message"]
        else:
            assert_documented(REACT, response, status, code)
            message = response.json()["error"]["message"]
        if where == "dead":  # no HTTP answer came: not litellm's "HTTP 500", and where it was called
            refused = "Connect call failed ('127.0.0.1', 9)" if stream else "Connection refused"
            assert re.fullmatch(
                re.escape(
                    f"the LLM openai/gpt-4o-mini at {base} cannot be reached ([Errno 111] {refused}); start "
                    "its server, or check the api_base (llm_config.api_base or REACTSTEP_LLM_API_BASE)"
                )
                + r"( \(after (1 retry|[23] retries)\))?",
                message,
            ), message
    ready = client.get("/readyz").json()
    assert ready["checks"]["storage"] == "ok"
    assert ready["checks"]["llm"].startswith("unavailable: ")


def test_llm_that_errors_is_retried_then_reported(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    # a 500 that repeats word for word is not retried again (test_provider_faults.py): these differ
    llm_server.push(*(Fault(status=500, message=f"fault {n}") for n in range(4)))
    response, elapsed = timed(lambda: make_client(llm_max_retries=3).post(REACT, json=STEP))
    assert_documented(REACT, response, 503, "llm_unavailable")
    assert len(llm_server.requests) == 4 and elapsed < 3 + LOAD_SLACK_S


def test_readyz_names_only_the_unhealthy_dependency(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    healthy = make_client().get("/readyz")
    assert (healthy.status_code, healthy.json()) == (
        200,
        {"status": "ready", "checks": {"storage": "ok", "llm": "ok"}},
    )
    sick = make_client(llm_api_base=f"{DEAD}/v1").get("/readyz")
    assert sick.status_code == 503
    assert sick.json()["checks"] == {"storage": "ok", "llm": "unavailable: [Errno 111] Connection refused"}


EMBEDDING_DOWN = (
    "the embedding model openai/embedder at {base} cannot be reached ([Errno 111] Connection refused); "
    "start its server, or set {setting} to where it runs"
)


@pytest.mark.parametrize("chosen_by", ["REACTSTEP_EMBEDDING_API_BASE", "embedding_model_config.api_base"])
def test_an_embedding_model_that_is_down_is_named_not_taken_for_the_llm(
    make_client: Callable[..., TestClient], chosen_by: str
) -> None:
    base = f"{DEAD}/v1"
    if chosen_by == "REACTSTEP_EMBEDDING_API_BASE":
        client = make_client(embedding_model="openai/embedder", embedding_api_base=base)
        config: dict[str, Any] = {}
    else:
        client = make_client(llm_api_base_allowlist=[DEAD])
        config = {"embedding_model_config": {"model": "openai/embedder", "api_base": base}}
    index = client.post("/api/projects/demo/index", json=config)
    search = client.post(EXECUTE, json={**SEARCH, **config})
    for path, response in (("/api/projects/demo/index", index), (EXECUTE, search)):
        assert_documented(path, response, 503, "embedding_unavailable")
        assert response.json()["error"]["message"] == EMBEDDING_DOWN.format(base=base, setting=chosen_by)


def test_an_embedding_model_that_stalls_names_itself_and_the_timeout(
    make_client: Callable[..., TestClient], black_hole: BlackHole
) -> None:
    base = f"{black_hole.url}/v1"
    client = make_client(embedding_model="openai/embedder", embedding_api_base=base, llm_timeout_s=0.3)
    response = client.post("/api/projects/demo/index")
    assert (response.status_code, response.json()["error"]) == (
        504,
        {
            "code": "llm_timeout",
            "message": f"the embedding model openai/embedder at {base} did not answer within 0.3 s; "
            "a slow model needs a larger REACTSTEP_LLM_TIMEOUT_S",
            "request_id": response.headers["x-request-id"],
        },
    )
