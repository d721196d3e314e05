"""A client that closes the connection of a react_step, streamed or not, cancels its model call: the
scripted model server (real HTTP, through litellm) sees its request closed within a second of the
client's close, no retry starts, /metrics counts it and the request's log line says so."""

import json
import logging
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer, StreamRecord
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.logs.lines import JsonFormatter
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from tests.service.step.test_react_step import step_body

REACT = "/api/agent/react_step"
CANCELLED_SAMPLE = ("reactstep_requests_cancelled_total", (("route", REACT),))
SLOW_WHOLE = Reply("Thought: I know it.\nFinal Answer: 42", delay_s=60)  # a model that thinks a minute
SLOW_STREAM = Reply("Thought: " + "word " * 400 + "\nFinal Answer: x", chunk_chars=5, chunk_delay_s=0.3)


@pytest.fixture
def server(tmp_path: Path, llm_server: ScriptedLLMServer, local_store: LocalStore) -> Iterator[str]:
    """The app on a loopback port (a real connection a client can close), its LLM the scripted server."""
    settings = Settings(
        data_dir=tmp_path, llm_model="openai/scripted", llm_api_base=llm_server.base_url, llm_timeout_s=120
    )
    with BackgroundServer(create_app(settings, store=local_store)) as background:
        yield background.url


def open_step(url: str, body: dict[str, Any]) -> socket.socket:
    """A react_step POST, sent whole on a connection of its own; its answer is left unread."""
    data = json.dumps(body).encode()
    host, port = url.removeprefix("http://").split(":")
    connection = socket.create_connection((host, int(port)))
    head = f"POST {REACT} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
    connection.sendall(f"{head}Content-Length: {len(data)}\r\n\r\n".encode() + data)
    return connection


def wait_for(condition: Callable[[], Any], timeout_s: float = 30) -> Any:
    """The condition's first true value, polled; fails after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)
    return value


def samples(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample /metrics shows: (name, sorted labels) -> value."""
    text = httpx.get(f"{url}/metrics").text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def request_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    formatter = JsonFormatter()
    lines = [json.loads(formatter.format(r)) for r in caplog.records if r.name == "reactstep.http"]
    return [line for line in lines if line["message"] == "request" and line["route"] == REACT]


def close_mid_step(url: str, llm_server: ScriptedLLMServer, streamed: bool) -> float:
    """Open a step, close it while the model works; seconds from the close to the model server's seeing it."""
    connection = open_step(url, step_body(stream=streamed))
    if streamed:  # the answer has begun: a thought delta came
        wait_for(lambda: b"event: thought" in connection.recv(65536))
    else:  # the model server has the request and sits on it
        wait_for(lambda: llm_server.requests)
    connection.close()
    closed = time.monotonic()
    seen = wait_for(lambda: llm_server.closes, timeout_s=10)[0]
    return float(seen - closed)


@pytest.mark.parametrize(
    ("streamed", "reply", "status"),
    [(False, SLOW_WHOLE, 499), (True, SLOW_STREAM, 200)],
    ids=["whole", "streamed"],
)
def test_closing_a_step_closes_its_model_call_within_a_second(
    server: str,
    llm_server: ScriptedLLMServer,
    caplog: pytest.LogCaptureFixture,
    streamed: bool,
    reply: Reply,
    status: int,
) -> None:
    caplog.set_level(logging.INFO, logger="reactstep")
    llm_server.push(reply, "Thought: a retry would get this.\nFinal Answer: 1")

    latency_s = close_mid_step(server, llm_server, streamed)

    assert latency_s < 1.0
    wait_for(lambda: samples(server).get(CANCELLED_SAMPLE))  # the step's work has ended
    found = samples(server)
    assert found[CANCELLED_SAMPLE] == 1.0
    outcome = (("outcome", "cancelled"), ("provider", "openai"))
    assert found[("reactstep_llm_call_duration_seconds_count", outcome)] == 1.0
    assert len(llm_server.requests) == 1  # no retry started, and the second reply is still there
    [line] = wait_for(lambda: request_lines(caplog))
    assert (line["route"], line["status"], line["cancelled"]) == (REACT, status, True)
    assert line.get("error") == (None if streamed else "client_closed_request")
    assert 0 <= line["cancel_ms"] < 1000
    if streamed:
        [record] = llm_server.streams
        assert record.outcome == "disconnected"
        assert record.chunks_sent < 10  # of 80: the provider stopped long before the reply's end


def test_a_step_whose_client_stays_is_answered_and_nothing_is_cancelled(
    server: str, llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(Reply("Thought: I know it.\nFinal Answer: 42", delay_s=0.3))
    answer = httpx.post(f"{server}{REACT}", json=step_body(), timeout=30)
    assert (answer.status_code, answer.json()["final_answer"]) == (200, "42")
    assert CANCELLED_SAMPLE not in samples(server)
    assert llm_server.closes == []
    assert llm_server.streams == []


def test_a_streamed_step_whose_client_stays_streams_to_its_end(
    server: str, llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(Reply("Thought: I know it.\nFinal Answer: 42", chunk_delay_s=0.01))
    answer = httpx.post(f"{server}{REACT}", json=step_body(stream=True), timeout=30)
    assert answer.status_code == 200
    assert answer.text.rstrip().splitlines()[-2] == "event: result"
    assert CANCELLED_SAMPLE not in samples(server)
    assert llm_server.streams == [StreamRecord(9, "completed")]
