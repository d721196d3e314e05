"""read_file on an S3 store over HTTP: the exact answers on moto's server, one GET a read, each call
measured once, and the configured attempts against a dead bucket."""

import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.service.backends import s3_client
from reactstep.service.http.app import create_app
from reactstep.tools.store.s3_clients import S3Config
from tests.s3_peers import Recorder, Slammer
from tests.tools.store.test_storage import s3_settings

FILES = {
    "src/app.py": b"def main():\n    return 42\n",
    "pkg/inner/a.py": b"x = 1\n",
    "blob.bin": b"\x00\x01" * 9,
    "big.py": b"".join(b"value_%07d = %d\n" % (n, n) for n in range(60_000)),  # over 1 MiB
}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("demo", {"file_path": "src/app.py"}),
    ("demo", {"file_path": "./src//app.py", "start_line": 2}),
    ("demo", {"file_path": "src/app.py", "start_line": 9}),
    ("demo", {"file_path": "absent.py"}),
    ("demo", {"file_path": "pkg/inner"}),
    ("demo", {"file_path": "blob.bin"}),
    ("demo", {"file_path": "big.py", "start_line": 59_999}),
    ("demo", {"file_path": ""}),
    ("demo", {"file_path": "../outside.py"}),
    ("demo", {"path": "src/app.py"}),
    ("ghost", {"file_path": "src/app.py"}),
]


def answer(client: TestClient, project_id: str, tool_args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    body = {"project_id": project_id, "session_id": "s", "tool_name": "read_file", "tool_args": tool_args}
    response = client.post("/api/agent/execute_action", json=body)
    result: dict[str, Any] = response.json()
    result.pop("execution_time_ms", None)
    result.get("error", {}).pop("request_id", None)
    return response.status_code, result


def read_file_runs(client: TestClient) -> tuple[float, float]:
    """read_file's measured runs and error answers, from /metrics."""
    text = client.get("/metrics").text
    runs = re.search(r'^reactstep_tool_duration_seconds_count\{tool="read_file"\} (\S+)$', text, re.M)
    errors = re.search(r'^reactstep_tool_errors_total\{tool="read_file"\} (\S+)$', text, re.M)
    return (float(runs[1]) if runs else 0.0), (float(errors[1]) if errors else 0.0)


@pytest.fixture
def settings(s3_server: str, tmp_path: Path) -> Any:
    bucket = f"onloop-{uuid.uuid4().hex[:12]}"
    settings = s3_settings(s3_server, bucket, data_dir=tmp_path, file_max_bytes=2_000_000)  # big.py fits
    s3_client(settings).create_bucket(Bucket=bucket)
    with TestClient(create_app(settings)) as client:
        assert client.put("/api/projects/demo", json={}).status_code in (200, 201)
        for path, data in FILES.items():
            assert client.put(f"/api/projects/demo/files/{path}", content=data).status_code in (200, 201)
    return settings


def test_every_answer_and_its_measure(settings: Any) -> None:
    with TestClient(create_app(settings)) as client:
        answers = [answer(client, project_id, args) for project_id, args in CALLS]
        assert read_file_runs(client) == (10.0, 7.0)  # the 404 is not a run; each run counted once
    assert answers[0] == (
        200,
        {
            "session_id": "s",
            "tool_name": "read_file",
            "observation": "File: src/app.py (2 lines)\n    1 | def main():\n    2 |     return 42",
            "is_error": False,
        },
    )
    assert answers[3][1]["observation"] == "Error: file not found: absent.py"
    assert answers[4][1]["observation"].startswith("Error: pkg/inner is a directory")
    assert answers[6][1]["observation"].startswith("File: big.py (60000 lines)\n59999 | value_0059998")
    assert answers[10][0] == 404


def test_a_read_is_one_get(recorder: Recorder, tmp_path: Path) -> None:
    with TestClient(create_app(s3_settings(recorder.url, "b", data_dir=tmp_path))) as client:
        assert answer(client, "demo", {"file_path": "a.py"})[1]["observation"] == (
            "File: a.py (1 lines)\n    1 | recorded body"
        )
    ((path, _),) = recorder.seen  # one GET, and the project's head not read
    assert path == "/b/projects/demo/a.py"


def test_an_unreachable_bucket_is_a_503_after_the_configured_attempts(tmp_path: Path) -> None:
    slammer = Slammer()
    try:
        settings = s3_settings(slammer.url, "b", data_dir=tmp_path, s3_timeout_s=2)
        with TestClient(create_app(settings)) as client:
            status, body = answer(client, "demo", {"file_path": "a.py"})
        assert (status, body["error"]["code"]) == (503, "storage_unavailable")
        assert body["error"]["message"] == (
            "object storage is unavailable: object store unreachable: ConnectionClosedError"
        )
        assert slammer.accepted == S3Config().max_attempts
    finally:
        slammer.sock.close()
