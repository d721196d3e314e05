"""Log lines an operator can search: one JSON object a line (or key=value text on a terminal).

    configure_logging(level, format)   once, when `reactstep serve` starts: one handler on the root
                                       logger, to stderr (log_handler.TurnHandler: the request lines
                                       of one loop turn go out in one write); uvicorn's loggers go
                                       through it too
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

A JSON line: {"ts", "level", "logger", "message", "request_id", <fields>..., "exception"?} (made in
log_format.py). Secrets never reach it: the record's text is scrubbed when it is made
(redaction.install_log_scrubber), and the formatter scrubs the fields' text too.
The formatter is ours rather than python-json-logger's: no dependency, and it knows our field
convention (`extra={"fields": {...}}`) and our scrubber.
"""

import logging
import sys
import threading
import time
from typing import Any, Literal, TextIO, cast

from reactstep.service.log_format import JsonFormatter, LineFormatter, TextFormatter, clean_fields
from reactstep.service.log_handler import TurnHandler
from reactstep.service.redaction import any_known_secrets, scrub
from reactstep.service.request_context import current_request_id

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
