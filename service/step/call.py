"""The step's LLM call: the whole reply, or its stream, with provider faults retried inside one deadline;
then the reply read and the step's outcome made of it.

step_reply: no call needed (prepare answered) ─► that response
            streamed ─► open_reply_stream (faults before the first delta retried; a server that
                answers a call that may use a tool with an empty stream is remembered, and the reply
                asked for whole, its text one delta) ─► each delta ─► the reply
            not ─► complete_with_retries ─► the reply
            ─► cut to MAX_REPLY_CHARS (as if it hit its token limit, noted) ─► read by the reply
               grammar (parsing.reply.read_reply: an action, an answer, or a FormatError)
            ─► interpret.finish_step ─► the step's response, last
take_step: step_reply, not streamed, its response (stream.py streams it)

    attempt ─► ok ─────────────────────────────────────────► reply (+ how many retries it took)
            └► LLMRateLimited | LLMUnavailable | LLMTimeout ─► wait (Retry-After, else base * 2^n
               with jitter) if the deadline leaves room ─► attempt again
            └► anything else, a 500 that repeats word for word, or no room left ─► raise it (with
               the retry count in its message)

A retry that times out only because the deadline cut its timeout short reports the fault that made it
retry: a provider that refuses connections answers llm_unavailable however slow the machine is.

Jitter comes from a hash of the request's seed and the retry number: replicas spread their retries,
and a replayed request waits exactly as long as the original did.
"""

import asyncio
import hashlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable
from dataclasses import replace
from typing import TypeVar

from reactstep.contract.step import ReactStepResponse
from reactstep.contract.step_report import Timing
from reactstep.service.errors import (
    EmptyStream,
    LLMBadResponse,
    LLMRateLimited,
    LLMTimeout,
    LLMUnavailable,
    UpstreamError,
)
from reactstep.service.limits import MAX_REPLY_CHARS
from reactstep.service.llm.protocol import LLMGateway, LLMReply, LLMRequest
from reactstep.service.logs.writing import log_event
from reactstep.service.parsing.reply import FormatError, ReadReply, read_reply
from reactstep.service.step.interpret import finish_step
from reactstep.service.step.prepare import TIMEOUT_SETTING, UNSTREAMED, PreparedStep, RetryPolicy

RETRYABLE = (LLMRateLimited, LLMUnavailable, LLMTimeout)
logger = logging.getLogger("reactstep.llm")
Result = TypeVar("Result")


async def take_step(prepared: PreparedStep | ReactStepResponse, llm: LLMGateway) -> ReactStepResponse:
    """The step's response: the model asked (retrying provider faults), its reply interpreted."""
    *_, response = [item async for item in step_reply(prepared, llm, streamed=False)]
    assert isinstance(response, ReactStepResponse)  # step_reply ends with it, and yields no delta here
    return response


async def step_reply(
    prepared: PreparedStep | ReactStepResponse, llm: LLMGateway, streamed: bool
) -> AsyncGenerator[str | ReactStepResponse, None]:
    """The reply's text deltas as the model writes them (when `streamed`), then the step's response
    (alone when prepare answered without a call).

    Closing it early closes the upstream stream, and so the connection to the provider. A step held
    against its key's budget runs on the gateway that settles the hold (prepared.gateway)."""
    if isinstance(prepared, ReactStepResponse):
        yield prepared
        return
    llm = prepared.gateway or llm
    attempts = Attempts(prepared.retry_policy, prepared.retry_seed)
    llm_started = time.perf_counter()
    upstream: AsyncIterator[str | LLMReply] | None = None
    try:
        opened = (
            await open_reply_stream(llm, prepared.llm_request, attempts)
            if streamed and prepared.streams
            else None
        )
        if opened is not None:
            item, upstream = opened
        else:  # not streamed, or a server that cannot stream this call: the reply comes whole
            item = await complete_with_retries(llm, prepared.llm_request, attempts)
            if streamed:  # its thought in one piece
                if prepared.streams:
                    prepared = replace(prepared, notes=(*prepared.notes, UNSTREAMED))
                yield item.text
        while isinstance(item, str):
            yield item
            assert upstream is not None
            item = await next_item(upstream, attempts)
        finished = time.perf_counter()
        reply, cut_note = cap_reply(item)
        context = prepared.context
        calls = [(call.name, call.arguments) for call in reply.tool_calls] if context.mode == "native" else []
        try:
            read: ReadReply | FormatError = read_reply(
                reply.text, calls, context.tools.schemas, context.tools.aliases, context.plain_answer
            )
        except FormatError as exc:
            read = exc
        timing = Timing(
            llm_ms=round((finished - llm_started) * 1000, 3),
            total_ms=round((finished - prepared.started) * 1000, 3),
            retries=attempts.retries,
        )
        yield finish_step(prepared, reply, read, cut_note, timing)
    finally:
        if upstream is not None:
            await _close(upstream)


def cap_reply(reply: LLMReply, max_chars: int = MAX_REPLY_CHARS) -> tuple[LLMReply, str | None]:
    """The reply cut to max_chars (as if it had hit its token limit), and a note when it was cut."""
    if len(reply.text) <= max_chars:
        return reply, None
    note = f"The model's reply ({len(reply.text)} characters) was cut to the first {max_chars}."
    return replace(reply, text=reply.text[:max_chars], finish_reason="length"), note


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
        if _repeats(error, self._previous):
            raise self._give_up(error, "the same internal error twice")
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
        final.retry_after_s, final.upstream_status = error.retry_after_s, error.upstream_status
        return final


def _repeats(error: UpstreamError, previous: UpstreamError | None) -> bool:
    """A provider's internal error (HTTP 500) that came back word for word: a fault in what was asked
    (a model server that cannot do it), not a passing one; retrying it again only hides its message."""
    return (
        previous is not None
        and error.upstream_status == previous.upstream_status == 500
        and error.message == previous.message
    )


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


async def open_reply_stream(
    llm: LLMGateway, request: LLMRequest, attempts: Attempts
) -> tuple[str | LLMReply, AsyncIterator[str | LLMReply]] | None:
    """The stream's first item and the rest; None when the server answered a call that may use a tool
    with an empty stream (it is remembered, and the reply is then asked for whole)."""
    try:
        return await open_stream_with_retries(llm, request, attempts)
    except EmptyStream:
        if not request.tools:
            raise
        return None  # the gateway remembered it (server_facts.streams_tool_calls)


async def next_item(upstream: AsyncIterator[str | LLMReply], attempts: Attempts) -> str | LLMReply:
    """The stream's next delta or its reply, within the deadline; LLMBadResponse when it just ends."""
    try:
        return await within_deadline(anext(upstream), attempts)
    except StopAsyncIteration:
        raise LLMBadResponse("the LLM stream ended without a reply") from None
