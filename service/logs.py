"""Log lines an operator can search: one JSON object a line (or key=value text on a terminal).

    configure_logging(level, format)   once, when `reactstep serve` starts: one handler on the root
                                       logger, to stderr; uvicorn's loggers go through it too
    stamp_request_ids()                every log record, from any logger, carries the request id of
                                       the request it was made in (create_app installs it)
    log_event(logger, level, message, **fields)
                                       a record with structured fields, built only when the level
                                       lets it through

A JSON line: {"ts", "level", "logger", "message", "request_id", <fields>..., "exception"?}. Secrets
never reach it: the record's text is scrubbed when it is made (redaction.install_log_scrubber), and
the formatter scrubs the fields' text too.
The formatter is ours rather than python-json-logger's: twenty lines, no dependency, and it knows
our field convention (`extra={"fields": {...}}`) and our scrubber.
"""

import json
import logging
import sys
import threading
import time
from typing import Any, Literal, TextIO

from reactstep.service.redaction import known_secrets, redact_fields, scrub
from reactstep.service.request_context import current_request_id

LogFormat = Literal["auto", "json", "text"]
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
# Loggers whose lines follow REACTSTEP_LOG_LEVEL; every other library logs warnings and worse.
OWN_LOGGERS = ("reactstep", "uvicorn")

_stamp_lock = threading.Lock()
_stamping = False


def log_event(logger: logging.Logger, level: int, message: str, **fields: Any) -> None:
    """Log `message` with structured fields; nothing is built when the level filters it out."""
    if logger.isEnabledFor(level):
        logger.log(level, message, extra={"fields": fields})


def configure_logging(level: str, log_format: LogFormat, stream: TextIO | None = None) -> logging.Handler:
    """Send every log record to `stream` (stderr) as JSON or text; replaces the root's handlers."""
    stream = stream or sys.stderr
    chosen = resolved_format(log_format, stream)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter() if chosen == "json" else TextFormatter())
    root = logging.getLogger()
    for old in root.handlers[:]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(max(LEVELS[level], logging.WARNING))
    for name in OWN_LOGGERS:
        own = logging.getLogger(name)
        own.setLevel(LEVELS[level])
        own.handlers.clear()  # uvicorn's own handlers would print each line a second time
        own.propagate = True
    stamp_request_ids()
    return handler


def resolved_format(log_format: LogFormat, stream: TextIO) -> Literal["json", "text"]:
    """`auto`: text for a person at a terminal, JSON for everything else (a collector, a file)."""
    if log_format != "auto":
        return log_format
    isatty = getattr(stream, "isatty", None)
    return "text" if isatty is not None and isatty() else "json"


def stamp_request_ids() -> None:
    """Every record made from now on carries `request_id` (None outside a request); idempotent."""
    global _stamping
    with _stamp_lock:
        if _stamping:
            return
        make_record = logging.getLogRecordFactory()

        def stamped(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = make_record(*args, **kwargs)
            record.request_id = current_request_id()
            return record

        logging.setLogRecordFactory(stamped)
        _stamping = True


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as a JSON line."""
        entry: dict[str, Any] = {
            "ts": _timestamp(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None),
        }
        entry.update(_fields(record))
        if record.exc_info:
            entry["exception"] = record.exc_text or self.formatException(record.exc_info)
        return _encode(entry)


class TextFormatter(logging.Formatter):
    """`ts level logger message key=value ...`: the same fields, for a person at a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of text (plus its traceback, if any)."""
        fields = {"request_id": getattr(record, "request_id", None), **_fields(record)}
        pairs = " ".join(f"{key}={value}" for key, value in fields.items() if value is not None)
        line = f"{_timestamp(record.created)} {record.levelname:<7} {record.name} {record.getMessage()}"
        line = f"{line} {pairs}" if pairs else line
        if record.exc_info:
            line = f"{line}\n{record.exc_text or self.formatException(record.exc_info)}"
        return line


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    fields: dict[str, Any] = getattr(record, "fields", None) or {}
    if not known_secrets():
        return fields
    redacted: dict[str, Any] = redact_fields(fields)
    return {key: scrub(value) if isinstance(value, str) else value for key, value in redacted.items()}


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
_second: list[tuple[int, str]] = [(-1, "")]  # the last whole second formatted: lines come many a second


def _timestamp(created: float) -> str:
    """UTC, to the millisecond: 2026-11-25T17:03:04.123Z."""
    whole = int(created)
    last, text = _second[0]
    if whole != last:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        _second[0] = (whole, text)
    return f"{text}.{int((created - whole) * 1000):03d}Z"
