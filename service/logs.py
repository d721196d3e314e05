"""Log lines an operator can search: one JSON object a line (or key=value text on a terminal), one line
per request carrying the fields every layer noted.

    ObserveMiddleware ─► begin(RequestContext(id)) ─► endpoints, step, gateway, tools note(...) ─►
    one log line with every noted field when the request ends; error bodies and log records made
    meanwhile carry the id

    configure_logging(level, format)   once, when `reactstep serve` starts: one handler on the root
                                       logger, to stderr (TurnHandler: the request lines of one loop
                                       turn go out in one write); uvicorn's loggers go through it too
    stamp_request_ids()                every log record, from any logger, carries the request id of
                                       the request it was made in (create_app installs it)
    log_event(logger, level, message, **fields)
                                       a record with structured fields, built only when the level
                                       lets it through
    log_line(logger, level, message, request_id, fields)
                                       the same line without a LogRecord (the request line, once
                                       per request): when every handler the record would reach is
                                       a plain StreamHandler (or ours) with our formatter, the
                                       formatter's line() goes straight to its stream; otherwise
                                       log_event

The request context lives in a contextvar: worker threads (run_in_threadpool, the LLM pool) and tasks
started by the request get a copy of it, and so the same RequestContext, whose fields they add to.
Outside a request (the CLI, a test calling a core function) there is none and note() does nothing.

How a line reads, made from a record's parts:

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

TurnHandler, the handler configure_logging installs, makes and writes the request lines of one turn
of an event loop together, when that turn ends:

    log_line, on a running loop ─► write_line: the line's parts held (scrubbed, stamped) ─► the
                                   loop's next pass (call_soon): every line held made, one write
    log_line with no loop, a record (emit), flush() ─► the lines held first, then what it writes

Under load one turn of the loop answers several requests (a dozen or more under wrk): their lines
are made in one run of the formatter, which stays warm in the CPU's caches, and cost one write call
instead of one each. Under wrk that took ~10 us of CPU off each request, a third of what the
request line cost. No line waits for a timer or for more lines: it goes out when the turn it was
made in ends, and nothing this handler writes overtakes it. At most MAX_HELD lines are held;
logging.shutdown() flushes the handler, so none is lost at exit.
"""

import asyncio
import contextvars
import json
import logging
import random
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO, cast

from reactstep.service.redaction import any_known_secrets, redact_fields, scrub

# The request's context: its id, and the fields of its log line

# What a client may send as X-Request-ID; anything else is replaced by a fresh id, never refused.
REQUEST_ID = re.compile(rb"[A-Za-z0-9_.:-]{1,128}")


@dataclass
class RequestContext:
    """One request's id and the fields its log line will carry."""

    request_id: str
    fields: dict[str, Any] = field(default_factory=dict)


_current: contextvars.ContextVar[RequestContext | None] = contextvars.ContextVar(
    "reactstep_request", default=None
)


def accept_request_id(sent: bytes | None) -> str:
    """The client's X-Request-ID when it is well-formed, else a new random id."""
    if sent is not None and REQUEST_ID.fullmatch(sent):
        return sent.decode("ascii")
    return new_request_id()


def new_request_id() -> str:
    """A fresh random id (64 bits, hex). An id names a request in logs; it guards nothing, so the
    process's PRNG serves (no getrandom call per request, as secrets.token_hex makes). The module's
    own generator: seeded from os.urandom, and seeded again in a forked child."""
    return f"{random.getrandbits(64):016x}"


def begin(context: RequestContext) -> contextvars.Token[RequestContext | None]:
    """Make `context` the current request's, until end(token)."""
    return _current.set(context)


def end(token: contextvars.Token[RequestContext | None]) -> None:
    """Leave the request begun with `token`."""
    _current.reset(token)


def current_request_id() -> str | None:
    """The id of the request being served here, or None outside one."""
    context = _current.get()
    return None if context is None else context.request_id


def note(**fields: Any) -> None:
    """Add fields to the current request's log line (nothing outside a request)."""
    context = _current.get()
    if context is not None:
        context.fields.update(fields)


def add(name: str, amount: float) -> None:
    """Add `amount` to a numeric field of the current request's log line (e.g. time spent in calls)."""
    context = _current.get()
    if context is not None:
        context.fields[name] = context.fields.get(name, 0) + amount


# How a line reads


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


# The handler: a loop turn's lines in one write

MAX_HELD = 256


class TurnHandler(logging.StreamHandler[TextIO]):
    """A StreamHandler whose lines made on a running event loop go out when the loop's turn ends."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        self._held: list[tuple[LineFormatter, tuple[Any, ...]]] = []
        self._waiting: set[asyncio.AbstractEventLoop] = set()  # loops that will write the held lines

    def write_line(self, formatter: LineFormatter, *parts: Any) -> None:
        """Write the line formatter.line(*parts) makes: when this loop turn ends, if one runs here;
        else now."""
        loop = _running_loop()
        self.acquire()
        try:
            self._held.append((formatter, parts))
            if loop is not None and len(self._held) < MAX_HELD:
                if loop not in self._waiting:
                    self._waiting.add(loop)
                    loop.call_soon(self._turn_ended, loop)
                return
            try:
                self.flush()
            except Exception:  # as StreamHandler.emit: the handler reports it, the request goes on
                self.handleError(_lines_record())
        finally:
            self.release()

    def flush(self) -> None:
        """Write the lines held, then flush the stream."""
        self.acquire()
        try:
            self._write_held()
            super().flush()
        finally:
            self.release()

    def emit(self, record: logging.LogRecord) -> None:
        """Write a record after the lines held (handle() holds the lock)."""
        try:
            self._write_held()
        except Exception:
            self.handleError(record)
        super().emit(record)

    def _turn_ended(self, loop: asyncio.AbstractEventLoop) -> None:
        self.acquire()
        try:
            self._waiting.discard(loop)
            self.flush()
        except Exception:
            self.handleError(_lines_record())
        finally:
            self.release()

    def _write_held(self) -> None:
        if not self._held:
            return
        held, self._held = self._held, []
        lines = []
        for formatter, parts in held:
            try:
                lines.append(formatter.line(*parts) + self.terminator)
            except Exception:  # one line that cannot be made loses only itself
                self.handleError(_lines_record())
        self.stream.write("".join(lines))


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _lines_record() -> logging.LogRecord:
    """What handleError names when held lines could not be written."""
    return logging.makeLogRecord({"name": "reactstep.http", "msg": "(held request lines)"})


# Configuring and writing

LogFormat = Literal["auto", "json", "text"]
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
# Loggers whose lines follow REACTSTEP_LOG_LEVEL; every other library logs warnings and worse.
OWN_LOGGERS = ("reactstep", "uvicorn")

# Handlers log_line writes to itself: nothing but a stream and our formatter behind them.
PLAIN_HANDLERS = (logging.StreamHandler, TurnHandler)

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
    handler = TurnHandler(stream)
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


def log_line(
    logger: logging.Logger, level: int, message: str, request_id: str | None, fields: dict[str, Any]
) -> None:
    """What log_event(logger, level, message, **fields) writes, made in the request's context, without
    the LogRecord, factory and Formatter round trip when nothing but our own stream handlers would see
    the record (as under `reactstep serve`). Anything else (a capture handler, a filter, another
    formatter) gets the record as before. A TurnHandler may make the line when the loop's turn
    ends: `fields` must not change after the call."""
    if not logger.isEnabledFor(level):
        return
    handlers = _plain_handlers(logger, level)
    if not handlers:
        log_event(logger, level, message, **fields)
        return
    created = time.time()
    secrets = any_known_secrets()
    if secrets:  # as the record factory and the formatter scrub the record
        message, fields = scrub(message), clean_fields(fields, secrets)
    level_name = logging.getLevelName(level)
    for handler, formatter in handlers:
        if type(handler) is TurnHandler:
            handler.write_line(formatter, created, level_name, logger.name, message, request_id, fields)
            continue
        line = formatter.line(created, level_name, logger.name, message, request_id, fields)
        handler.acquire()
        try:
            stream = handler.stream
            stream.write(line + handler.terminator)
            stream.flush()  # as StreamHandler.flush, whose lock is held here already
        except Exception:  # as StreamHandler.emit: the handler reports it, the request goes on
            handler.handleError(logger.makeRecord(logger.name, level, "(log_line)", 0, message, (), None))
        finally:
            handler.release()


def _plain_handlers(
    logger: logging.Logger, level: int
) -> list[tuple[logging.StreamHandler[Any], LineFormatter]]:
    """The handlers a record from `logger` at `level` would reach, if each is a plain StreamHandler
    (or a TurnHandler) with our formatter and no filters and the logger has no filters; else an
    empty list."""
    if logger.filters:
        return []
    found: list[tuple[logging.StreamHandler[Any], LineFormatter]] = []
    current: logging.Logger | None = logger
    while current is not None:
        for handler in current.handlers:
            if level < handler.level:
                continue
            formatter = handler.formatter
            if (
                type(handler) not in PLAIN_HANDLERS
                or handler.filters
                or not isinstance(formatter, LineFormatter)
            ):
                return []
            found.append((cast(logging.StreamHandler[Any], handler), formatter))  # PLAIN_HANDLERS
        current = current.parent if current.propagate else None
    return found
