"""Chat completions through litellm: LiteLLMGateway's one call (complete) and one stream (stream).

A provider that rejects the stop sequences is asked again without them (stop_dropped); every
provider failure becomes an UpstreamError in provider_errors.py. litellm itself (its import, the
process-wide switches, the HTTP handlers it is given) is gateway.py's.
"""

import asyncio
import contextvars
import functools
import os
import re
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from reactstep.service.errors import EmptyStream, LLMUnavailable
from reactstep.service.llm.abortable import abortable_call
from reactstep.service.llm.gateway import (
    OPENAI_ROUTE_FLAG,
    import_litellm,
    internal_call_mark,
    litellm_async_handler,
    litellm_sync_handler,
    provider_of,
)
from reactstep.service.llm.protocol import LLMReply, LLMRequest
from reactstep.service.llm.provider_errors import translate_error
from reactstep.service.llm.replies import delta_text, reply_from
from reactstep.service.llm.server_facts import mark_unstreamed_calls

_STOP_PARAM = re.compile(r"\bstop\b", re.IGNORECASE)


class LiteLLMGateway:
    """Calls any litellm model; litellm is imported on first use because its import is slow.

    complete() runs litellm's synchronous call on a worker thread of its own pool: litellm's async
    path costs more per call (its own hop to an executor, then the SDK's async transforms) than
    one hop to a thread that makes the plain call. Streams stay async, to end the moment the
    client goes. A cancelled call's socket is shut (abortable.py): its thread ends at once, and the
    model server sees the request closed.

    Making one switches litellm, for the whole process, to its own httpx route for OpenAI-style
    chat completions (OPENAI_ROUTE_FLAG) instead of the OpenAI SDK: the same request and response
    transforms, ~2.5 ms less per call on 2 cores (the SDK re-walks every message against its
    TypedDicts and builds response objects litellm then rebuilds). Answers, usage, tool calls and
    streams come out the same, errors with the same codes and messages (provider_errors.py reads an
    error body down to its message, as the SDK did), except that a 200 whose body is not JSON is
    llm_bad_response (the SDK route called it a 500), and a 422 is sent once and its message kept
    (the SDK route sent it twice and came back with no answer: "the LLM returned no choices").
    See test_http_route.py. The clients the gateway hands litellm fit this route only.
    """

    def __init__(self, max_workers: int = 64) -> None:
        os.environ[OPENAI_ROUTE_FLAG] = "true"
        self._workers = ThreadPoolExecutor(max_workers, thread_name_prefix="llm", initializer=_own_event_loop)

    async def complete(self, request: LLMRequest) -> LLMReply:
        """Send the request; translate every provider failure to an UpstreamError."""
        started = time.perf_counter()
        with abortable_call() as handle:
            call = functools.partial(contextvars.copy_context().run, _open_sync, request)
            try:
                response, stop_dropped = await asyncio.get_running_loop().run_in_executor(self._workers, call)
            except asyncio.CancelledError:  # its client left: the model server sees the request closed now
                handle.abort()
                raise
        return reply_from(response, _since(started), stop_dropped)

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        """Stream the answer; closing this generator closes the upstream connection."""
        started = time.perf_counter()
        response, stop_dropped = await _open(request, stream=True, stream_options={"include_usage": True})
        chunks: list[Any] = []
        try:
            async for chunk in response:
                chunks.append(chunk)
                if text := delta_text(chunk):
                    yield text
        except Exception as exc:
            raise translate_error(exc, request) from exc
        finally:
            await response.aclose()
        # litellm makes up a final "stop" chunk for a stream that just ended; it keeps what it received.
        if not getattr(response, "chunks", chunks):
            # A 200 with no event at all is the server's answer to this call, not a network fault;
            # for a call that may use a tool it is remembered (the step asks such calls whole).
            if request.tools:
                mark_unstreamed_calls(request.api_base, request.model)
            raise EmptyStream(
                "the model server opened the stream and closed it without sending anything: it cannot "
                "stream this call (its log says why); send the step without stream"
            )
        if getattr(response, "received_finish_reason", "") is None:
            raise LLMUnavailable("the LLM stream ended before its last chunk")
        built = import_litellm().stream_chunk_builder(chunks)
        reply = reply_from(built, _since(started), stop_dropped)
        if not _usage_reported(response):
            reply = replace(reply, usage=reply.usage.model_copy(update={"estimated": True}))
        yield reply


def _usage_reported(stream: Any) -> bool:
    """Whether the provider sent a usage chunk: litellm keeps the chunks it received in `chunks` (a
    provider's usage-only chunk among them), and otherwise puts its own count on the last chunk it yields."""
    return any(getattr(chunk, "usage", None) is not None for chunk in getattr(stream, "chunks", ()))


async def _open(request: LLMRequest, **extra: Any) -> tuple[Any, bool]:
    """The provider's response, and whether the stop sequences had to be dropped to get it."""
    litellm = import_litellm()
    try:
        return await litellm.acompletion(**_call_arguments(request, litellm_async_handler), **extra), False
    except Exception as exc:
        if not (request.stop and _rejects_stop(exc)):
            raise translate_error(exc, request) from exc
    try:
        arguments = _call_arguments(replace(request, stop=()), litellm_async_handler)
        return await litellm.acompletion(**arguments, **extra), True
    except Exception as exc:
        raise translate_error(exc, request) from exc


def _own_event_loop() -> None:
    """A worker thread's idle event loop, kept for the thread's life: litellm runs each sync call's
    async timing hook on it (~10 us) instead of asyncio.run, a new loop, epoll and socket pair per
    call (~0.35 ms on 2 cores). The hook does the same either way."""
    asyncio.set_event_loop(asyncio.new_event_loop())


def _open_sync(request: LLMRequest) -> tuple[Any, bool]:
    """_open, as one blocking call (for a worker thread), without litellm's success logging.

    That logging feeds litellm's own callbacks and cost tracking, which this service does not use;
    it costs ~0.8 ms of CPU per call on a background thread that holds the GIL while the step
    finishes. litellm skips it for calls it marks internal, so ours are marked so.
    """
    litellm = import_litellm()
    marked = internal_call_mark().set(True)
    try:
        return _complete_sync(litellm, request)
    finally:
        internal_call_mark().reset(marked)


def _complete_sync(litellm: Any, request: LLMRequest) -> tuple[Any, bool]:
    try:
        return litellm.completion(**_call_arguments(request, litellm_sync_handler)), False
    except Exception as exc:
        if not (request.stop and _rejects_stop(exc)):
            raise translate_error(exc, request) from exc
    try:
        return litellm.completion(**_call_arguments(replace(request, stop=()), litellm_sync_handler)), True
    except Exception as exc:
        raise translate_error(exc, request) from exc


def _rejects_stop(exc: Exception) -> bool:
    status = getattr(exc, "status_code", None)
    return status == 400 and bool(_STOP_PARAM.search(str(getattr(exc, "message", exc))))


def _since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _call_arguments(request: LLMRequest, http_handler: Callable[[], Any]) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "model": request.model,
        "messages": request.messages,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "timeout": request.timeout_s,
        "num_retries": 0,
        "max_retries": 0,
    }
    if request.api_base:
        arguments["api_base"] = request.api_base
    # Local OpenAI-compatible servers often need no key; litellm still wants one.
    arguments["api_key"] = request.api_key.get_secret_value() if request.api_key else "none"
    if request.api_base and provider_of(request.model) == "openai":
        arguments["client"] = http_handler()
    if request.stop:
        arguments["stop"] = list(request.stop)
    if request.tools:
        arguments["tools"] = list(request.tools)
        # Servers such as llama-cpp-python ignore tools that come without a tool_choice.
        arguments["tool_choice"] = request.tool_choice
        # litellm 1.106 imports its MCP gateway (an optional `mcp` package) for any call with tools.
        arguments["_skip_mcp_handler"] = True
    return arguments
