"""When the library sends a request again, and how long it waits first.

A request is retried, at most `attempts` times in all, only when sending it again cannot do twice
what the server may already have done:

    connection refused (nothing was sent)                   ─► retry, any request
    429, or 503 `overloaded` (the server's admission
        control answers before any handler runs)            ─► retry, any request
    503 with another code (llm_unavailable, storage_unavailable, vector_store_unavailable, ...)
        SAFE request (GET, PUT of a project, DELETE, POST sync / index / react_step, and
        execute_action without an approval_token: a server tool writes only with one)
                                                             ─► retry
        WRITE request (PUT of a file, with If-Match / If-None-Match or none; execute_action with
        an approval_token): the handler ran and may have written before the failure
                                                             ─► no retry: the error is raised
    anything else, or a connection that broke after the request went out ─► no retry
    a 429 whose Retry-After is longer than `max_wait_s` (a key's day spent: budget_exhausted
        until midnight)                                       ─► no retry: it would be refused again

The wait is the answer's Retry-After (seconds, or an HTTP date) when it has one, else exponential
backoff (`backoff_s` * 2^n, with jitter), never more than `max_wait_s`.
"""

import enum
import random
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

import httpx

BEFORE_ACTING = frozenset({"overloaded"})  # 503 codes the server sends before any handler runs


class Safety(enum.Enum):
    """Whether a request may be sent again after the server began to handle it."""

    SAFE = "safe"  # reads, and writes that state a target (sending twice ends in the same state)
    WRITE = "write"  # a change that may have happened before the failure; sent again only when refused


@dataclass(frozen=True)
class RetryPolicy:
    """How many times a request is sent at most, and the bounds of the waits between."""

    attempts: int = 4
    backoff_s: float = 0.5
    max_wait_s: float = 30.0

    def waits_too_long(self, retry_after: str | None) -> bool:
        """Whether a key's limit asks for a longer wait than a retry may take (a 429 is then raised)."""
        told = parse_retry_after(retry_after)
        return told is not None and told > self.max_wait_s

    def wait_s(self, attempt: int, retry_after: str | None) -> float:
        """Seconds to wait before attempt `attempt + 1`: Retry-After if given, else backoff; capped."""
        told = parse_retry_after(retry_after)
        if told is None:
            told = self.backoff_s * 2 ** (attempt - 1) * (0.5 + random.random() / 2)
        return max(0.0, min(told, self.max_wait_s))


NO_RETRIES = RetryPolicy(attempts=1)


def may_retry_answer(safety: Safety, status: int, code: str | None) -> bool:
    """Whether an answer with this status and error code may be sent again (see the module's table)."""
    if status == 429 or (status == 503 and code in BEFORE_ACTING):
        return True
    return status == 503 and safety is Safety.SAFE


def may_retry_failure(exc: httpx.HTTPError) -> bool:
    """Whether a transport failure happened before anything was sent (the connection was refused)."""
    return isinstance(exc, httpx.ConnectError)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Retry-After as seconds from now: delta-seconds or an HTTP date; None when absent or unreadable."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
