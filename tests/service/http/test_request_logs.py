"""Request ids and log lines: one line per request with its fields, every record of a request carrying
its id, the id in the X-Request-ID header and in every error body, JSON or text as configured."""

import io
import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import Fault, ScriptedLLMServer
from reactstep.service.http.app import create_app
from reactstep.service.llm.protocol import LLMReply, LLMRequest
from reactstep.service.logs.lines import JsonFormatter, TextFormatter
from reactstep.service.logs.writing import configure_logging, resolved_format
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from tests.served import free_port, wait_until_up

REACT, EXECUTE = "/api/agent/react_step", "/api/agent/execute_action"
READ = {
    "project_id": "demo",
    "session_id": "s",
    "tool_name": "read_file",
    "tool_args": {"file_path": "README.md"},
}
STEP = {"project_id": "demo", "session_id": "s", "user_query": "What does main() return?"}
GENERATED = r"[0-9a-f]{16}"


def request_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    """The request log lines of the test, as the JSON formatter writes them."""
    formatter = JsonFormatter()
    lines = [json.loads(formatter.format(r)) for r in caplog.records if r.name == "reactstep.http"]
    return [line for line in lines if line["message"] == "request"]


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger="reactstep")
    return caplog


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("abc-123", True),
        ("trace:0af7651916cd43dd.b7ad6b7169203331_1", True),
        ("x" * 128, True),
        ("x" * 129, False),
        ("", False),
        ("has space", False),
        ('quote"d', False),
        ("naïve".encode(), False),  # raw bytes beyond ASCII
        (None, False),
    ],
)
def test_request_id_is_kept_when_well_formed_else_replaced(
    make_client: Callable[..., TestClient],
    logs: pytest.LogCaptureFixture,
    sent: str | bytes | None,
    kept: bool,
) -> None:
    headers = {} if sent is None else {"x-request-id": sent}
    response = make_client().post(EXECUTE, json={**READ, "project_id": "nope"}, headers=headers)
    assert response.status_code == 404  # never refused for its id
    request_id = response.headers["x-request-id"]
    if kept:
        assert request_id == sent
    else:
        assert request_id != sent
        assert re.fullmatch(GENERATED, request_id)
    assert response.json()["error"]["request_id"] == request_id
    [line] = request_lines(logs)
    assert (line["request_id"], line["status"], line["error"]) == (request_id, 404, "project_not_found")


def test_execute_action_logs_one_line_with_the_tool(
    make_client: Callable[..., TestClient], logs: pytest.LogCaptureFixture
) -> None:
    response = make_client().post(EXECUTE, json=READ, headers={"x-request-id": "read-1"})
    assert response.status_code == 200
    [line] = request_lines(logs)
    timing = {key: line.pop(key) for key in ("ts", "duration_ms", "tool_ms")}
    assert line == {
        "level": "info",
        "logger": "reactstep.http",
        "message": "request",
        "request_id": "read-1",
        "method": "POST",
        "route": "/api/agent/execute_action",
        "status": 200,
        "project": "demo",
        "tool": "read_file",
        "is_error": False,
    }
    assert 0 < timing["tool_ms"] <= timing["duration_ms"]


def test_react_step_logs_the_llm_call_retries_and_tokens(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer, logs: pytest.LogCaptureFixture
) -> None:
    llm_server.push(Fault(status=429, retry_after="0"), "Thought: done\nFinal Answer: 42")
    response = make_client(llm_max_retries=2).post(REACT, json=STEP, headers={"x-request-id": "step-1"})
    assert response.status_code == 200
    usage = response.json()["usage"]
    [line] = request_lines(logs)
    assert {key: line[key] for key in line if key not in ("ts", "duration_ms", "llm_ms")} == {
        "level": "info",
        "logger": "reactstep.http",
        "message": "request",
        "request_id": "step-1",
        "method": "POST",
        "route": "/api/agent/react_step",
        "status": 200,
        "project": "demo",
        "model": "openai/scripted",
        "provider": "openai",
        "llm_attempts": 2,
        "retries": 1,
        "prompt_tokens": usage["prompt_tokens"],
        "completion_tokens": usage["completion_tokens"],
        "cached_tokens": 0,
        "step_status": "final_answer",
    }
    assert 0 < line["llm_ms"] <= line["duration_ms"]
    retry = [r for r in logs.records if r.getMessage() == "llm retry"]
    assert [(r.request_id, r.fields["reason"], r.fields["retry"]) for r in retry] == [  # type: ignore[attr-defined]
        ("step-1", "llm_rate_limited", 1)
    ]


def test_a_step_that_gives_up_says_why(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer, logs: pytest.LogCaptureFixture
) -> None:
    llm_server.push(Fault(status=401))
    response = make_client(llm_max_retries=2).post(REACT, json=STEP, headers={"x-request-id": "step-2"})
    assert response.status_code == 502
    [gave_up] = [r for r in logs.records if r.getMessage() == "llm gave up"]
    assert (gave_up.levelname, gave_up.request_id, gave_up.fields) == (  # type: ignore[attr-defined]
        "WARNING",
        "step-2",
        {"reason": "llm_auth_failed", "retries": 0, "why": "not retryable"},
    )
    [line] = request_lines(logs)
    assert (line["status"], line["error"], line["llm_attempts"]) == (502, "llm_auth_failed", 1)


class FailingGateway:
    """A gateway with a bug: it raises something no layer expects."""

    async def complete(self, request: LLMRequest) -> LLMReply:
        raise RuntimeError("boom")

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        raise RuntimeError("boom")
        yield ""


def test_an_unexpected_error_is_logged_with_its_request_id(
    tmp_path: Path, local_store: LocalStore, logs: pytest.LogCaptureFixture
) -> None:
    app = create_app(Settings(data_dir=tmp_path, llm_max_retries=0), llm=FailingGateway(), store=local_store)
    client = TestClient(app, raise_server_exceptions=False)
    response = client.post(REACT, json=STEP, headers={"x-request-id": "boom-1"})
    assert (response.status_code, response.headers["x-request-id"]) == (500, "boom-1")
    assert response.json()["error"] == {
        "code": "internal_error",
        "message": "internal error; see the server log",
        "request_id": "boom-1",
    }
    [failure] = [r for r in logs.records if r.getMessage().startswith("unexpected error")]
    assert failure.request_id == "boom-1"  # type: ignore[attr-defined]
    assert failure.exc_info is not None and str(failure.exc_info[1]) == "boom"
    [line] = request_lines(logs)
    assert (line["status"], line["error"]) == (500, "internal_error")


def test_a_level_above_info_writes_no_request_line(
    make_client: Callable[..., TestClient], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="reactstep")
    assert make_client().post(EXECUTE, json=READ).status_code == 200
    assert request_lines(caplog) == []


@pytest.mark.parametrize(
    ("setting", "tty", "chosen"),
    [("auto", True, "text"), ("auto", False, "json"), ("json", True, "json"), ("text", False, "text")],
)
def test_auto_format_is_text_on_a_terminal_json_elsewhere(setting: Any, tty: bool, chosen: str) -> None:
    class Stream(io.StringIO):
        def isatty(self) -> bool:
            return tty

    assert resolved_format(setting, Stream()) == chosen


@pytest.fixture
def root_logging() -> Iterator[None]:
    """configure_logging replaces the root's handlers: put back pytest's (and the loggers' levels
    an in-process uvicorn of an earlier test set) when the test ends."""
    names = ("", "reactstep", "uvicorn", "uvicorn.error")
    saved = {
        name: (
            logging.getLogger(name).level,
            logging.getLogger(name).handlers[:],
            logging.getLogger(name).propagate,
        )
        for name in names
    }
    logging.getLogger("uvicorn.error").setLevel(logging.NOTSET)  # as `serve` leaves it: uvicorn's level
    yield
    for name, (level, handlers, propagate) in saved.items():
        logger = logging.getLogger(name)
        logger.setLevel(level)
        logger.handlers[:], logger.propagate = handlers, propagate


@pytest.mark.usefixtures("root_logging")
@pytest.mark.parametrize("log_format", ["json", "text"])
def test_configured_logging_writes_every_logger_in_one_format(log_format: Any) -> None:
    stream = io.StringIO()
    configure_logging("info", log_format, stream)
    logging.getLogger("reactstep.http").info("request", extra={"fields": {"status": 200, "route": "/x"}})
    logging.getLogger("uvicorn.error").info("Started server process [1]")
    logging.getLogger("some.library").info("not shown: other libraries log warnings and worse")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    if log_format == "json":
        first, second = (json.loads(line) for line in lines)
        assert (first["message"], first["status"], first["route"], first["request_id"]) == (
            "request",
            200,
            "/x",
            None,
        )
        assert (second["logger"], second["level"]) == ("uvicorn.error", "info")
    else:
        assert lines[0].endswith("INFO    reactstep.http request status=200 route=/x")
        assert lines[1].endswith("INFO    uvicorn.error Started server process [1]")


def test_reactstep_serve_logs_one_json_line_per_request_and_no_access_log(tmp_path: Path) -> None:
    """The real command: logging set up once at start, uvicorn's own lines in JSON, no access log."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    env.update(REACTSTEP_DATA_DIR=str(tmp_path), REACTSTEP_LOG_FORMAT="auto", REACTSTEP_LOG_LEVEL="INFO")
    command = [str(Path(sys.executable).parent / "reactstep"), "serve", "--port", str(port)]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until_up(base, server)
        assert httpx.get(f"{base}/healthz", headers={"x-request-id": "serve-1"}).status_code == 200
        assert httpx.get(f"{base}/nope", headers={"x-request-id": "serve-2"}).status_code == 404
    finally:
        server.terminate()  # SIGTERM: uvicorn shuts down; SIGINT would end in a KeyboardInterrupt traceback
        _, err = server.communicate(timeout=20)
    entries = [json.loads(line) for line in err.splitlines()]  # stderr is a pipe: every line is JSON
    requests = [e for e in entries if e["message"] == "request" and e["request_id"] in ("serve-1", "serve-2")]
    assert [(e["route"], e["status"]) for e in requests] == [("/healthz", 200), ("unmatched", 404)]
    assert [e for e in entries if e["logger"] == "uvicorn.access" or "HTTP/1.1" in e["message"]] == []
    assert [
        e["level"]
        for e in entries
        if e["logger"] == "uvicorn.error" and "Application startup complete" in e["message"]
    ] == ["info"]


def test_text_formatter_names_the_request_id() -> None:
    record = logging.LogRecord("reactstep.http", logging.INFO, __file__, 1, "request", None, None)
    record.request_id = "abc"
    record.fields = {"status": 200, "project": None}
    line = TextFormatter().format(record)
    assert line.endswith("INFO    reactstep.http request request_id=abc status=200")
