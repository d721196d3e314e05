"""When the library sends a request again, and how long it waits first.

A request is retried, at most `attempts` times in all, only when sending it again cannot do twice
what the server may already have done. Every POST, PUT and DELETE carries an Idempotency-Key
(transport.py sends a fresh one with each, the same on each of its resends), so the server answers a
resend with the answer it kept for the first: such a request runs once however often it is sent.

    connection refused (nothing was sent)                    ─► retry, any request
    429, or 503 (`overloaded`: admission control answered before any handler ran; another code:
        a GET only reads, and every other request carries its key)
                                                             ─► retry, any request
    409 `idempotency_key_in_flight` (the first send still runs: a resend gets its answer)
                                                             ─► retry
    a connection that broke after the request went out (a timeout, a reset)
                                                             ─► retry a request with a key (not a GET)
    a 429 whose Retry-After is longer than `max_wait_s` (a key's day spent: budget_exhausted
        until midnight)                                       ─► no retry: it would be refused again
    anything else                                            ─► no retry: the error is raised

The wait is the answer's Retry-After (seconds, or an HTTP date) when it has one, else exponential
backoff (`backoff_s` * 2^n, with jitter), never more than `max_wait_s`.
"""

import random
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

import httpx

IN_FLIGHT = "idempotency_key_in_flight"  # 409: the first send of this key still runs


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


def may_retry_answer(status: int, code: str | None) -> bool:
    """Whether an answer with this status and error code may be sent again (see the module's table)."""
    return status in (429, 503) or (status == 409 and code == IN_FLIGHT)


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
