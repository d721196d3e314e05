"""The request's context: its id, and the fields of its log line.

    begin(RequestContext(id)) ... note(field=value) ... end(token)   (observe.py, once per request)
    stamp_request_ids()   every log record, from any logger, carries the request id of the request
                          it was made in (create_app installs it)

The request context lives in a contextvar: worker threads (run_in_threadpool, the LLM pool) and tasks
started by the request get a copy of it, and so the same RequestContext, whose fields they add to.
Outside a request (the CLI, a test calling a core function) there is none and note() does nothing.
"""

import contextvars
import logging
import random
import re
import threading
from dataclasses import dataclass, field
from typing import Any

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


_stamp_lock = threading.Lock()
_stamping = False


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
