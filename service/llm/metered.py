"""Any LLM gateway, measured and priced: each attempt's latency, outcome and tokens per provider, into
the app's metrics and the request's log line (model, provider, llm_attempts, llm_ms, the token counts,
cost_usd), and each reply's usage with what it cost at litellm's prices (gateway.cost_usd)."""

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import replace

from reactstep.service.errors import UpstreamError
from reactstep.service.llm.gateway import cost_usd, provider_of
from reactstep.service.llm.protocol import LLMGateway, LLMReply, LLMRequest
from reactstep.service.logs import context as logs
from reactstep.service.metrics import Metrics


class MeteredGateway:
    """Wraps a gateway; what it answers is unchanged but for the reply's usage.cost_usd."""

    def __init__(self, inner: LLMGateway, metrics: Metrics) -> None:
        self.inner = inner
        self.metrics = metrics

    async def complete(self, request: LLMRequest) -> LLMReply:
        """The inner gateway's reply, measured."""
        provider = _provider(request)
        started = _begin(request, provider)
        outcome = "error"
        try:
            reply = self._reply(request, provider, await self.inner.complete(request))
            outcome = "ok"
            return reply
        except UpstreamError as error:
            outcome = error.code
            raise
        except asyncio.CancelledError:  # the client left (http/disconnects.py)
            outcome = "cancelled"
            raise
        finally:
            self._attempt(request, provider, outcome, started)

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        """The inner gateway's stream, measured from the call to its last item."""
        provider = _provider(request)
        started = _begin(request, provider)
        outcome = "cancelled"  # the client left before the end
        try:
            async for item in self.inner.stream(request):
                if isinstance(item, LLMReply):
                    outcome = "ok"
                    item = self._reply(request, provider, item)
                yield item
        except UpstreamError as error:
            outcome = error.code
            raise
        finally:
            self._attempt(request, provider, outcome, started)

    def _reply(self, request: LLMRequest, provider: str, reply: LLMReply) -> LLMReply:
        usage = reply.usage
        cached = usage.cached_tokens or 0  # the counter adds what providers say they cached
        self.metrics.llm_tokens(provider, usage.prompt_tokens, usage.completion_tokens, cached)
        cost = cost_usd(request.model, usage.prompt_tokens, usage.completion_tokens, cached)
        logs.note(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cached_tokens=usage.cached_tokens,
        )
        if cost is None:  # a model without a price: no cost_usd, in the answer or the log line
            return reply
        self.metrics.llm_cost(provider, cost)
        logs.note(cost_usd=round(cost, 8))
        return replace(reply, usage=usage.model_copy(update={"cost_usd": round(cost, 8)}))

    def _attempt(self, request: LLMRequest, provider: str, outcome: str, started: float) -> None:
        seconds = time.perf_counter() - started
        self.metrics.llm_call(provider, outcome, seconds, retry=request.attempt > 0)
        logs.add("llm_ms", round(seconds * 1000, 3))


def _begin(request: LLMRequest, provider: str) -> float:
    logs.note(model=request.model, provider=provider, llm_attempts=request.attempt + 1)
    return time.perf_counter()


def _provider(request: LLMRequest) -> str:
    return provider_of(request.model) or "unknown"
