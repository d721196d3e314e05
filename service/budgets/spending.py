"""The step's one entry into budgets: prepare (step/prepare.py, on its worker thread) asks `held_gateway`
for the gateway the step runs on, once the prompt is made.

held_gateway: no limits on the caller's key, or a lent LLM key (the caller's own money) ─► None (the
       runtime's gateway, unchanged)
       else ─► the step's most (its prompt as the server counts it + max_tokens; their price) held
       in the ledger, or 429 budget_exhausted / rate_limited (Retry-After, the limit named) before
       the model is called ─► a BudgetedGateway
BudgetedGateway: the reply ─► the hold settled at what the provider reported ─► the reply, with what
       the key has left (LLMReply.budget; the step's answer carries it as `budget`); a store that
       fails then: the reply without budget, logged (the hold lapses; the next step's hold fails)
       a call cancelled or a stream closed after it began ─► settled at the hold (the provider may
       bill it all), on a worker thread the cancellation does not stop
       a failed attempt ─► nothing (a retry follows, or the hold lapses at its deadline)
"""

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from reactstep.service.budgets.ledger import Estimate, Ledger, budget_left
from reactstep.service.budgets.limits import KeyLimits
from reactstep.service.errors import ServiceError
from reactstep.service.llm.gateway import cost_usd, count_tokens
from reactstep.service.llm.protocol import LLMGateway, LLMReply, LLMRequest
from reactstep.service.logs.writing import log_event
from reactstep.service.worker_threads import on_worker
from reactstep.tools.store.objects import ObjectStore

logger = logging.getLogger("reactstep")
HOLD_MARGIN_S = 30.0  # a hold outlives its step's LLM deadline by this much (the answer's way back)


def held_gateway(
    store: ObjectStore, llm: LLMGateway, limits: KeyLimits | None, request: LLMRequest, deadline_s: float
) -> "BudgetedGateway | None":
    """The gateway that records what the step spends on the caller's key, once the key's limits
    allowed the step (else BudgetExhausted or RateLimited); None when no limits apply. Blocking: the
    ledger is read and written in the store (prepare runs it on its worker thread)."""
    if limits is None:
        return None
    most = step_most(request)
    step_id = secrets.token_hex(8)
    ledger = Ledger(store)
    _, day = ledger.hold(limits, step_id, most, deadline_s + HOLD_MARGIN_S)
    return BudgetedGateway(llm, Held(ledger, limits, step_id, day, most))


def step_most(request: LLMRequest) -> Estimate:
    """The most a step may spend: its prompt as the server counts it, plus max_tokens; their price."""
    tokens = count_tokens(request.model, request.messages, request.tools) + request.max_tokens
    return Estimate(tokens, cost_usd(request.model, tokens - request.max_tokens, request.max_tokens))


class Held:
    """One step's hold in the ledger, and how it settles."""

    def __init__(self, ledger: Ledger, limits: KeyLimits, step_id: str, day: str, most: Estimate) -> None:
        self.ledger, self.limits, self.step_id, self.day, self.most = ledger, limits, step_id, day, most
        self.settled = False

    async def settle(self, reply: LLMReply) -> LLMReply:
        """The hold replaced by what the reply reports; the reply, with what the key has left."""
        self.settled = True
        usage = reply.usage
        tokens = max(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens)
        key = self.limits.key_id
        try:
            counts = await on_worker(self.ledger.settle, key, self.day, self.step_id, tokens, usage.cost_usd)
        except ServiceError as error:  # the answer is paid for: it is not lost to the count's store
            log_event(logger, logging.WARNING, "spending not recorded", reason=error.code)
            return reply
        return replace(reply, budget=budget_left(counts, self.limits, usage.cost_usd is not None))

    def settle_at_most(self) -> None:
        """Count the whole hold as spent, on a worker thread (a cancelled task cannot await it)."""
        if self.settled:
            return
        self.settled = True
        most = self.most
        key = self.limits.key_id
        loop = asyncio.get_running_loop()
        settling = loop.run_in_executor(
            None, self.ledger.settle, key, self.day, self.step_id, most.tokens, most.usd
        )
        settling.add_done_callback(_log_failure)


class BudgetedGateway:
    """The runtime's gateway, settling one step's hold with its reply."""

    def __init__(self, inner: LLMGateway, held: Held) -> None:
        self.inner = inner
        self.held = held

    async def complete(self, request: LLMRequest) -> LLMReply:
        """The inner gateway's reply, settled."""
        try:
            reply = await self.inner.complete(request)
        except asyncio.CancelledError:
            self.held.settle_at_most()
            raise
        return await self.held.settle(reply)

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        """The inner gateway's stream, its reply settled."""
        began = False
        try:
            async for item in self.inner.stream(request):
                if isinstance(item, LLMReply):
                    item = await self.held.settle(item)
                else:
                    began = True
                yield item
        finally:
            if began:
                self.held.settle_at_most()


def _log_failure(settling: "asyncio.Future[Any]") -> None:
    if not settling.cancelled() and (error := settling.exception()) is not None:
        log_event(logger, logging.WARNING, "spending not recorded", reason=type(error).__name__)
