"""Retry provider faults with backoff, inside one deadline per request.

    attempt ─► ok ─────────────────────────────────────────► reply (+ how many retries it took)
            └► LLMRateLimited | LLMUnavailable | LLMTimeout ─► wait (Retry-After, else base * 2^n
               with jitter) if the deadline leaves room ─► attempt again
            └► anything else, or no room left ─► raise it (with the retry count in its message)

A retry that times out only because the deadline cut its timeout short reports the fault that made it
retry: a provider that refuses connections answers llm_unavailable however slow the machine is.

Jitter comes from a hash of the request's seed and the retry number: replicas spread their retries,
and a replayed request waits exactly as long as the original did.
"""

import asyncio
import hashlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, replace
from typing import TypeVar

from reactstep.service.errors import LLMBadResponse, LLMRateLimited, LLMTimeout, LLMUnavailable, UpstreamError
from reactstep.service.llm.protocol import LLMGateway, LLMReply, LLMRequest
from reactstep.service.logs import log_event
from reactstep.service.settings import Settings

RETRYABLE = (LLMRateLimited, LLMUnavailable, LLMTimeout)
logger = logging.getLogger("reactstep.llm")
Result = TypeVar("Result")
RETRY_MAX_S = 8.0  # the longest wait: four doublings of 0.5 s, well inside DEFAULT_DEADLINE_S
DEFAULT_DEADLINE_S = 60.0
TIMEOUT_SETTING = "REACTSTEP_LLM_TIMEOUT_S"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry."""

    max_retries: int
    deadline_s: float
    base_delay_s: float
    max_delay_s: float
    deadline_setting: str = "REACTSTEP_LLM_DEADLINE_S"
    """What a user raises when the deadline is what cut the LLM off (it follows the timeout unless set)."""

    @classmethod
    def from_settings(cls, settings: Settings, timeout_s: float) -> "RetryPolicy":
        """The policy the settings ask for, for calls of this timeout: the deadline is
        REACTSTEP_LLM_DEADLINE_S, else the timeout, at least DEFAULT_DEADLINE_S (room for retries)."""
        deadline_s = settings.llm_deadline_s
        return cls(
            max_retries=settings.llm_max_retries,
            deadline_s=deadline_s if deadline_s is not None else max(timeout_s, DEFAULT_DEADLINE_S),
            deadline_setting="REACTSTEP_LLM_DEADLINE_S" if deadline_s is not None else TIMEOUT_SETTING,
            base_delay_s=settings.llm_retry_base_s,
            max_delay_s=RETRY_MAX_S,
        )


class Attempts:
    """One request's attempts: the deadline they share and the retries taken so far."""

    def __init__(self, policy: RetryPolicy, seed: str) -> None:
        self.policy = policy
        self.retries = 0
        self._seed = seed
        self._deadline = time.monotonic() + policy.deadline_s
        self._previous: UpstreamError | None = None  # the fault that made it retry
        self._cut_short = False  # the attempt under way has less time than its own timeout
        self._timeout_s = 0.0  # the attempt under way's own timeout

    def remaining_s(self) -> float:
        """Seconds left before the deadline."""
        return max(self._deadline - time.monotonic(), 0.0)

    def limit(self, request: LLMRequest) -> LLMRequest:
        """The request for the next attempt: numbered, its timeout cut to what the deadline leaves."""
        remaining_s = self.remaining_s()
        self._cut_short = remaining_s < request.timeout_s
        self._timeout_s = request.timeout_s
        timeout_s = max(min(request.timeout_s, remaining_s), 0.001)
        return replace(request, timeout_s=timeout_s, attempt=self.retries)

    async def back_off(self, error: UpstreamError) -> None:
        """Wait before the next attempt, or raise `error` when it must not or cannot be retried;
        each decision is logged with its reason."""
        if isinstance(error, LLMTimeout) and self._cut_short and self._previous is not None:
            error = self._previous
        delay = self.delay_s(error)
        if not isinstance(error, RETRYABLE):
            raise self._give_up(error, "not retryable")
        if self.retries >= self.policy.max_retries:
            raise self._give_up(error, f"{self.policy.max_retries} retries allowed")
        if delay >= self.remaining_s():
            raise self._give_up(error, f"a {delay:.2f}s wait would pass the deadline")
        log_event(
            logger,
            logging.INFO,
            "llm retry",
            reason=error.code,
            retry=self.retries + 1,
            delay_s=round(delay, 3),
            provider_retry_after=error.retry_after_s is not None,
        )
        await asyncio.sleep(delay)
        self.retries += 1
        self._previous = error

    def _give_up(self, error: UpstreamError, why: str) -> UpstreamError:
        log_event(logger, logging.WARNING, "llm gave up", reason=error.code, retries=self.retries, why=why)
        return self._final(error)

    def timed_out_message(self) -> str:
        """What ran out, and the setting that gives a slow model more time."""
        if self._cut_short or self.remaining_s() <= 0:
            limit_s, setting = self.policy.deadline_s, self.policy.deadline_setting
        else:
            limit_s, setting = self._timeout_s, TIMEOUT_SETTING
        return f"the LLM did not answer within {limit_s:g} s; a slow model needs a larger {setting}"

    def delay_s(self, error: UpstreamError) -> float:
        """Retry-After when the provider sent one, else exponential backoff with 50-100% jitter."""
        if error.retry_after_s is not None:
            return error.retry_after_s
        backoff = min(self.policy.base_delay_s * 2.0**self.retries, self.policy.max_delay_s)
        digest = hashlib.sha256(f"{self._seed}:{self.retries}".encode()).digest()
        return backoff * (0.5 + digest[0] / 510)

    def _final(self, error: UpstreamError) -> UpstreamError:
        if isinstance(error, LLMTimeout):
            error = LLMTimeout(self.timed_out_message())
        if not self.retries:
            return error
        retries = "1 retry" if self.retries == 1 else f"{self.retries} retries"
        final = type(error)(f"{error.message} (after {retries})", details=error.details)
        final.retry_after_s = error.retry_after_s
        return final


async def within_deadline(pending: Awaitable[Result], attempts: Attempts) -> Result:
    """Await it, or raise LLMTimeout when the request's deadline passes first."""
    try:
        async with asyncio.timeout(attempts.remaining_s()):
            return await pending
    except TimeoutError:
        raise LLMTimeout(attempts.timed_out_message()) from None


async def complete_with_retries(llm: LLMGateway, request: LLMRequest, attempts: Attempts) -> LLMReply:
    """The whole reply, retrying provider faults within the deadline."""
    while True:
        try:
            return await within_deadline(llm.complete(attempts.limit(request)), attempts)
        except UpstreamError as error:
            await attempts.back_off(error)


async def open_stream_with_retries(
    llm: LLMGateway, request: LLMRequest, attempts: Attempts
) -> tuple[str | LLMReply, AsyncIterator[str | LLMReply]]:
    """The stream's first item and the rest; faults before the first item are retried."""
    while True:
        stream = llm.stream(attempts.limit(request))
        try:
            first = await within_deadline(anext(stream), attempts)
            return first, stream
        except UpstreamError as error:
            await _close(stream)
            await attempts.back_off(error)
        except StopAsyncIteration:
            raise LLMBadResponse("the LLM stream ended before it began") from None


async def _close(stream: AsyncIterator[str | LLMReply]) -> None:
    closer = getattr(stream, "aclose", None)
    if closer is not None:
        await closer()
