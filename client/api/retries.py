"""When the library sends a request again, and how long it waits first.

A request is retried, at most `attempts` times in all, only when sending it again cannot do twice
what the server may already have done:

    connection refused (nothing was sent)                   ─► retry, any request
    429, 503 `overloaded` (the server's admission control answers before any handler runs), or
        409 `idempotency_key_in_flight` (the first send still runs: the next gets its answer)
                                                             ─► retry, any request
    a request with an Idempotency-Key (transport.py sends a fresh one with every POST, PUT and
        DELETE, the same one on each resend): the server answers a resend with the first answer,
        so it runs once however often it is sent
        503 with another code, or a connection that broke after the request went out ─► retry
    503 with another code, no key:
        SAFE request (GET, PUT of a project, DELETE, POST sync / index / react_step, and
        execute_action without an approval_token: a server tool writes only with one)
                                                             ─► retry
        WRITE request (PUT of a file, with If-Match / If-None-Match or none; execute_action with
        an approval_token): the handler ran and may have written before the failure
                                                             ─► no retry: the error is raised
    anything else, or a broken connection without a key     ─► no retry

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
IN_FLIGHT = "idempotency_key_in_flight"  # 409: the first send of this key still runs


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

    def wait_s(self, attempt: int, retry_after: str | None) -> float:
        """Seconds to wait before attempt `attempt + 1`: Retry-After if given, else backoff; capped."""
        told = parse_retry_after(retry_after)
        if told is None:
            told = self.backoff_s * 2 ** (attempt - 1) * (0.5 + random.random() / 2)
        return max(0.0, min(told, self.max_wait_s))


NO_RETRIES = RetryPolicy(attempts=1)


def may_retry_answer(safety: Safety, status: int, code: str | None, keyed: bool = False) -> bool:
    """Whether an answer with this status and error code may be sent again (see the module's table)."""
    if status == 429 or (status == 503 and code in BEFORE_ACTING) or (status == 409 and code == IN_FLIGHT):
        return True
    return status == 503 and (keyed or safety is Safety.SAFE)


def may_retry_failure(exc: httpx.HTTPError, keyed: bool = False) -> bool:
    """Whether a transport failure may be sent again: nothing was sent (the connection was
    refused), or the request carries an Idempotency-Key (a resend cannot act twice)."""
    return isinstance(exc, httpx.ConnectError) or (keyed and isinstance(exc, httpx.TransportError))


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
