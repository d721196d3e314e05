"""How a line reads, made from a record's parts (or, for the request line, from its parts alone):

    LineFormatter.format(record)     a record's parts (its `fields` scrubbed) ─► line()
    JsonFormatter.line(parts)        {"ts", "level", "logger", "message", "request_id", <fields>...,
                                     "exception"?}; the request line, without an exception and with
                                     no field named as the head's keys, is spliced: the head encoded
                                     once per (level, logger, message), the fields alone
    TextFormatter.line(parts)        `ts level logger message key=value ...`
    CommandFormatter.line(parts)     `server error: message (key=value, ...)`: a server in a
                                     command's process, its lines among the command's own

Secrets never reach a line: the record's text is scrubbed when it is made
(redaction.install_log_scrubber), and the formatter scrubs the fields' text too.
The formatter is ours rather than python-json-logger's: no dependency, and it knows our field
convention (`extra={"fields": {...}}`) and our scrubber.
"""

import json
import logging
import time
from collections.abc import Callable
from typing import Any

from reactstep.service.redaction import any_known_secrets, redact_fields, scrub


class LineFormatter(logging.Formatter):
    """Our formats: a record's parts as one line, made from a record (format) or without one (line)."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line (plus its traceback, if any)."""
        exception = (record.exc_text or self.formatException(record.exc_info)) if record.exc_info else None
        fields: dict[str, Any] = getattr(record, "fields", None) or {}
        return self.line(
            record.created,
            record.levelname,
            record.name,
            record.getMessage(),
            getattr(record, "request_id", None),
            clean_fields(fields, any_known_secrets()),
            exception,
        )

    def line(
        self,
        created: float,
        level_name: str,
        logger_name: str,
        message: str,
        request_id: str | None,
        fields: dict[str, Any],
        exception: str | None = None,
    ) -> str:
        """The line for these parts; `fields` are scrubbed already."""
        raise NotImplementedError


class JsonFormatter(LineFormatter):
    """One JSON object per record, on one line."""

    def __init__(self) -> None:
        super().__init__()
        self._heads: dict[tuple[str, str, str], str] = {}

    def line(
        self,
        created: float,
        level_name: str,
        logger_name: str,
        message: str,
        request_id: str | None,
        fields: dict[str, Any],
        exception: str | None = None,
    ) -> str:
        """The parts as a JSON line."""
        if exception is None and not HEAD_KEYS.intersection(fields):  # the request line, every time
            return self._spliced(created, level_name, logger_name, message, request_id, fields)
        entry: dict[str, Any] = {
            "ts": _timestamp(created),
            "level": level_name.lower(),
            "logger": logger_name,
            "message": message,
            "request_id": request_id,
        }
        entry.update(fields)
        if exception is not None:
            entry["exception"] = exception
        return _encode(entry)

    def _spliced(
        self,
        created: float,
        level_name: str,
        logger_name: str,
        message: str,
        request_id: str | None,
        fields: dict[str, Any],
    ) -> str:
        """The line line() makes, from a head encoded once per (level, logger, message) and the
        fields encoded alone: the same bytes, as the head's keys are not among the fields."""
        head = self._heads.get((level_name, logger_name, message))
        if head is None:
            parts = {"level": level_name.lower(), "logger": logger_name, "message": message, "request_id": 0}
            head = self._heads[level_name, logger_name, message] = _encode(parts)[1:-2]  # ..."request_id":
        tail = "}" if not fields else "," + _encode_object(fields)[1:]
        stamp = _encode_string(_timestamp(created))
        return f'{{"ts":{stamp},{head}{"null" if request_id is None else _encode_string(request_id)}{tail}'


class TextFormatter(LineFormatter):
    """`ts level logger message key=value ...`: the same fields, for a person at a terminal."""

    def line(
        self,
        created: float,
        level_name: str,
        logger_name: str,
        message: str,
        request_id: str | None,
        fields: dict[str, Any],
        exception: str | None = None,
    ) -> str:
        """The parts as one line of text (plus the traceback, if any)."""
        pairs = " ".join(
            f"{key}={value}"
            for key, value in {"request_id": request_id, **fields}.items()
            if value is not None
        )
        line = f"{_timestamp(created)} {level_name:<7} {logger_name} {message}"
        line = f"{line} {pairs}" if pairs else line
        return f"{line}\n{exception}" if exception is not None else line


class CommandFormatter(LineFormatter):
    """`server error: message (key=value, ...)`: what a server in a command's process says."""

    def line(
        self,
        created: float,
        level_name: str,
        logger_name: str,
        message: str,
        request_id: str | None,
        fields: dict[str, Any],
        exception: str | None = None,
    ) -> str:
        """The parts a person at the command reads: the level, the message and its fields."""
        pairs = ", ".join(f"{key}={value}" for key, value in fields.items() if value is not None)
        line = f"server {level_name.lower()}: {message}" + (f" ({pairs})" if pairs else "")
        return f"{line}\n{exception}" if exception is not None else line


def clean_fields(fields: dict[str, Any], secrets: bool) -> dict[str, Any]:
    """The fields with secret-named values and known secrets redacted (as is, when none are known)."""
    if not secrets:
        return fields
    redacted: dict[str, Any] = redact_fields(fields)
    return {key: scrub(value) if isinstance(value, str) else value for key, value in redacted.items()}


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
_encode_string = json.encoder.encode_basestring  # a str as _encode writes it (ensure_ascii=False)
HEAD_KEYS = frozenset({"ts", "level", "logger", "message", "request_id"})


def _object_encoder() -> Callable[[dict[str, Any]], str]:
    """_encode for a dict of fields, its C encoder made once: JSONEncoder.encode makes one per call.
    No check for cycles (fields never hold one; the recursion limit still stops one)."""
    make = json.encoder.c_make_encoder  # type: ignore[attr-defined]
    if make is None:  # an interpreter without the C accelerator
        return _encode
    encoder = make(None, str, _encode_string, None, ":", ",", False, False, True)
    return lambda fields: "".join(encoder(fields, 0))


_encode_object = _object_encoder()
_second: list[tuple[int, str]] = [(-1, "")]  # the last whole second formatted: lines come many a second


def _timestamp(created: float) -> str:
    """UTC, to the millisecond: 2026-11-25T17:03:04.123Z."""
    whole = int(created)
    last, text = _second[0]
    if whole != last:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        _second[0] = (whole, text)
    return f"{text}.{int((created - whole) * 1000):03d}Z"
