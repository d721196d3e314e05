"""A body sent slowly holds no slot: it is cut off with 408 request_timeout, and meanwhile others run.

Real sockets against a real server on loopback: the test client of Starlette hands a body over whole.
"""

import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reactstep.service.http.app import READING_BODIES_PER_SLOT, create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from tests.service.http.test_openapi import errors_of, response_pointer
from tests.service.step.test_react_step import step_body
from tests.timing import LOAD_SLACK_S

BODY_TIMEOUT_S = 0.6 + LOAD_SLACK_S
ROUTES = [
    ("POST", "/api/agent/react_step", "/api/agent/react_step"),
    ("POST", "/api/agent/execute_action", "/api/agent/execute_action"),
    ("PUT", "/api/projects/demo/files/src/new.py", "/api/projects/{project_id}/files/{path}"),
    ("POST", "/api/projects/demo/sync", "/api/projects/{project_id}/sync"),
    ("POST", "/api/projects/demo/index", "/api/projects/{project_id}/index"),
    ("POST", "/mcp/demo", "/mcp/{project_id}"),
]


@pytest.fixture
def server(tmp_path: Path, local_store: LocalStore) -> Iterator[str]:
    """Two requests at work at once, none waiting; bodies must arrive within BODY_TIMEOUT_S."""
    settings = Settings(
        data_dir=tmp_path, max_concurrent_requests=2, max_queue=0, body_timeout_s=BODY_TIMEOUT_S
    )
    with BackgroundServer(create_app(settings, store=local_store)) as running:
        yield running.url


def slow_request(url: str, method: str, path: str) -> socket.socket:
    """Headers and the first byte of a 100-byte body, and then nothing more."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
    head += "Content-Length: 100\r\n\r\n"
    sock.sendall(head.encode() + b"{")
    return sock


def answer_of(sock: socket.socket) -> tuple[int, dict[str, object]]:
    """The status and JSON body of the one answer on the socket."""
    sock.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < _length(data):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def _length(data: bytes) -> int:
    for line in data.partition(b"\r\n\r\n")[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


def test_slow_bodies_hold_no_slot_and_are_cut_off_with_408(server: str) -> None:
    slow = [slow_request(server, "POST", "/api/agent/react_step") for _ in range(4)]  # twice the slots
    try:
        time.sleep(0.1)  # they are all in, and waiting on their bodies
        started = time.perf_counter()
        response = httpx.post(f"{server}/api/agent/react_step", json=step_body(max_iterations_left=0))
        elapsed = time.perf_counter() - started
        assert response.status_code == 200, response.text
        assert response.json()["status"] == "max_iterations_reached"
        assert elapsed < BODY_TIMEOUT_S  # it did not wait for the slow ones to be cut off
        for sock in slow:
            status, body = answer_of(sock)
            assert status == 408
            request_id = body["error"].pop("request_id")
            assert re.fullmatch("[0-9a-f]{16}", request_id)  # none was sent: the server made one
            assert body == {
                "error": {
                    "code": "request_timeout",
                    "message": f"the request body did not arrive within {BODY_TIMEOUT_S:g}s",
                }
            }
    finally:
        for sock in slow:
            sock.close()


@pytest.mark.parametrize(("method", "path", "spec_path"), ROUTES)
def test_every_body_route_answers_a_slow_body_as_its_spec_says(
    server: str, method: str, path: str, spec_path: str
) -> None:
    sock = slow_request(server, method, path)
    try:
        status, body = answer_of(sock)
    finally:
        sock.close()
    assert (status, body["error"]["code"]) == (408, "request_timeout")  # type: ignore[index]
    pointer = response_pointer(spec_path, method, 408)
    assert errors_of(f"{pointer}/content/application~1json/schema", body) == []


def test_bodies_on_their_way_are_bounded_too(tmp_path: Path, local_store: LocalStore) -> None:
    settings = Settings(data_dir=tmp_path, max_concurrent_requests=1, body_timeout_s=BODY_TIMEOUT_S)
    with BackgroundServer(create_app(settings, store=local_store)) as running:
        reading = READING_BODIES_PER_SLOT * settings.max_concurrent_requests
        slow = [slow_request(running.url, "POST", "/api/agent/react_step") for _ in range(reading)]
        try:
            time.sleep(0.1)
            response = httpx.post(
                f"{running.url}/api/agent/react_step", json=step_body(max_iterations_left=0)
            )
            assert (response.status_code, response.json()["error"]["code"]) == (503, "overloaded")
            assert response.headers["retry-after"] == "1"
            assert [answer_of(sock)[0] for sock in slow] == [408] * reading
            after = httpx.post(f"{running.url}/api/agent/react_step", json=step_body(max_iterations_left=0))
            assert after.status_code == 200  # nothing leaked: the count went back down
        finally:
            for sock in slow:
                sock.close()
