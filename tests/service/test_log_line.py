"""log_line: the request line written without a LogRecord is the line log_event's record makes,
byte for byte but the time, in both formats, with secrets redacted; anything but our own plain
stream handlers gets the record."""

import contextvars
import io
import json
import logging
import re
from collections.abc import Iterator

import pytest
from pydantic import BaseModel, SecretStr

from reactstep.service.logs import context as logs
from reactstep.service.logs.context import RequestContext, stamp_request_ids
from reactstep.service.logs.lines import CommandFormatter, JsonFormatter, TextFormatter
from reactstep.service.logs.writing import log_event, log_line
from reactstep.service.redaction import REDACTED, install_log_scrubber, remember_request_secrets

KEY = "sk-request-key-0123456789"
FIELDS = {"method": "POST", "route": "/api/agent/execute_action", "status": 200, "duration_ms": 1.5}
TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


class Body(BaseModel):
    llm_key: SecretStr


@pytest.fixture
def logger() -> Iterator[logging.Logger]:
    """A logger of its own, not propagating, with one plain stream handler (as configure_logging)."""
    stamp_request_ids()
    install_log_scrubber()
    logger = logging.getLogger("reactstep.test_log_line")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    yield logger
    logger.handlers.clear()
    logger.filters.clear()


def both_paths(logger: logging.Logger, formatter: logging.Formatter, fields: dict[str, object]) -> list[str]:
    """The line log_line writes on the plain handler, then the one log_event's record makes there."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    logger.addHandler(handler)
    token = logs.begin(RequestContext("req-1"))
    try:
        log_line(logger, logging.INFO, "request", "req-1", dict(fields))
        log_event(logger, logging.INFO, "request", **fields)
    finally:
        logs.end(token)
    return [TS.sub("<ts>", line) for line in stream.getvalue().splitlines()]


@pytest.mark.parametrize("formatter", [JsonFormatter(), TextFormatter()])
def test_the_line_is_the_records_line(logger: logging.Logger, formatter: logging.Formatter) -> None:
    fast, slow = both_paths(logger, formatter, {**FIELDS, "project": "demo", "error": None})
    assert fast == slow
    if isinstance(formatter, JsonFormatter):
        assert json.loads(fast) == {
            "ts": "<ts>",
            "level": "info",
            "logger": "reactstep.test_log_line",
            "message": "request",
            "request_id": "req-1",
            **FIELDS,
            "project": "demo",
            "error": None,
        }
    else:
        assert fast.endswith(
            "INFO    reactstep.test_log_line request request_id=req-1 method=POST "
            "route=/api/agent/execute_action status=200 duration_ms=1.5 project=demo"
        )


@pytest.mark.parametrize("formatter", [JsonFormatter(), TextFormatter()])
def test_secrets_are_redacted_on_both_paths(logger: logging.Logger, formatter: logging.Formatter) -> None:
    def run() -> list[str]:
        remember_request_secrets(Body(llm_key=SecretStr(KEY)))
        return both_paths(logger, formatter, {**FIELDS, "route": f"/x/{KEY}", "api_key": "anything"})

    fast, slow = contextvars.copy_context().run(run)  # the request's secrets stay in this context
    assert fast == slow
    assert KEY not in fast
    assert fast.count(REDACTED) == 2  # the known secret, and the secret-named field


def test_a_level_filtered_out_writes_nothing(logger: logging.Logger) -> None:
    logger.setLevel(logging.WARNING)
    assert both_paths(logger, JsonFormatter(), FIELDS) == []


def test_a_filter_or_another_handler_gets_the_record(logger: logging.Logger) -> None:
    """A filter on the logger sees every record: log_line does not go around it."""
    seen: list[logging.LogRecord] = []

    def keep(record: logging.LogRecord) -> bool:
        seen.append(record)
        return True

    logger.addFilter(keep)
    fast, slow = both_paths(logger, JsonFormatter(), FIELDS)
    assert fast == slow
    assert [(r.getMessage(), r.request_id, r.fields) for r in seen] == [  # type: ignore[attr-defined]
        ("request", "req-1", FIELDS),
        ("request", "req-1", FIELDS),
    ]


def test_a_command_line_names_the_level_the_message_and_its_fields(logger: logging.Logger) -> None:
    """What a server in a command's process prints: no time or logger name, the fields in brackets."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(CommandFormatter())
    logger.addHandler(handler)
    log_event(logger, logging.ERROR, "index failed", project="demo", files=3, why=None)
    log_event(logger, logging.ERROR, "store closed")
    assert (
        stream.getvalue()
        == "server error: index failed (project=demo, files=3)\nserver error: store closed\n"
    )
