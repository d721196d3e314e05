"""react_step with `"stream": true`: the same step, answered as Server-Sent Events.

    prepare_step (a broken request is still a JSON 4xx: nothing has been streamed yet)
    event: thought  data: {"delta": "..."}      the thought as the model writes it (thought_stream)
    ...
    event: result   data: <the non-streaming response body>        exactly one terminal event,
    event: error    data: {"error": {"code", "message", "request_id"}}  one or the other

Faults before the first delta are retried like any call (retries). A call that may use a tool, which the
model server answers with an empty stream (llama-cpp-python's chatml-function-calling, when the model
calls one), is asked again for the whole reply, sent as one thought delta, then the result; that server
is asked so from then on (server_facts.streams_tool_calls). A stream that breaks off is an error event,
never a parsed action. When the client disconnects, the response task is cancelled, and closing the
upstream stream closes the connection to the provider.
"""

import json
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import anyio
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from reactstep.contract.step import ReactStepRequest
from reactstep.service.errors import INTERNAL_ERROR, EmptyStream, LLMBadResponse, ServiceError, error_body
from reactstep.service.llm.protocol import LLMGateway, LLMReply
from reactstep.service.llm.retries import (
    Attempts,
    complete_with_retries,
    open_stream_with_retries,
    within_deadline,
)
from reactstep.service.llm.server_facts import mark_unstreamed_calls
from reactstep.service.settings import Settings
from reactstep.service.step.react_step import UNSTREAMED, PreparedStep, finish_step, prepare_step, step_body
from reactstep.service.step.thought_stream import ThoughtStream
from reactstep.service.worker_threads import on_worker
from reactstep.tools.registry import ToolRegistry

logger = logging.getLogger("reactstep")
HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


class EventStreamResponse(StreamingResponse):
    """text/event-stream that stops (and so cancels the upstream call) as soon as the client leaves."""

    media_type = "text/event-stream"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Starlette listens for the disconnect only under ASGI < 2.4; a step can be silent for long
        # while the model thinks, so listen always instead of waiting for a send to fail.
        async with anyio.create_task_group() as group:

            async def stream_then_stop() -> None:
                await self.stream_response(send)
                group.cancel_scope.cancel()

            group.start_soon(stream_then_stop)
            await self.listen_for_disconnect(receive)
            group.cancel_scope.cancel()


async def open_step_stream(
    request: ReactStepRequest,
    settings: Settings,
    llm: LLMGateway,
    registry: ToolRegistry,
    project_overview: str | None = None,
) -> EventStreamResponse:
    """Prepare the step (request errors raise here), then stream its events."""
    prepared = await on_worker(prepare_step, request, settings, registry, project_overview)
    if isinstance(prepared, PreparedStep):
        return EventStreamResponse(step_events(prepared, llm), headers=HEADERS)
    return EventStreamResponse(_single("result", step_body(prepared)), headers=HEADERS)


async def step_events(prepared: PreparedStep, llm: LLMGateway) -> AsyncIterator[bytes]:
    """Thought deltas, then the result or an error."""
    upstream: AsyncIterator[str | LLMReply] | None = None
    try:
        attempts = prepared.attempts()
        llm_started = time.perf_counter()
        thought = ThoughtStream(prepared.context.plain_answer)
        opened = await _opened(prepared, llm, attempts) if prepared.streams else None
        if opened is not None:
            item, upstream = opened
        else:  # a server that cannot stream this call: its reply comes whole, its thought in one piece
            item = await complete_with_retries(llm, prepared.llm_request, attempts)
            if prepared.streams:
                prepared = replace(prepared, notes=(*prepared.notes, UNSTREAMED))
            if delta := thought.feed(item.text):
                yield event("thought", {"delta": delta})
        while isinstance(item, str):
            if delta := thought.feed(item):
                yield event("thought", {"delta": delta})
            assert upstream is not None
            item = await within_deadline(_next(upstream), attempts)
        if tail := thought.finish():
            yield event("thought", {"delta": tail})
        response = finish_step(prepared, item, attempts.retries, llm_started)
        yield event("result", step_body(response))
    except ServiceError as error:
        yield error_event(error)
    except Exception as exc:  # never a silent stop: the client gets an error event it can report
        logger.error("unexpected error in a react_step stream", exc_info=exc)
        yield error_event(ServiceError(INTERNAL_ERROR))
    finally:
        closer = getattr(upstream, "aclose", None)
        if closer is not None:
            await closer()


async def _opened(
    prepared: PreparedStep, llm: LLMGateway, attempts: Attempts
) -> tuple[str | LLMReply, AsyncIterator[str | LLMReply]] | None:
    """The stream's first item and the rest; None when the server answered a call that may use a tool
    with an empty stream (it is remembered, and the reply is then asked for whole)."""
    request = prepared.llm_request
    try:
        return await open_stream_with_retries(llm, request, attempts)
    except EmptyStream:
        if not request.tools:
            raise
        mark_unstreamed_calls(request.api_base, request.model)
        return None


async def _next(upstream: AsyncIterator[str | LLMReply]) -> str | LLMReply:
    try:
        return await anext(upstream)
    except StopAsyncIteration:
        raise LLMBadResponse("the LLM stream ended without a reply") from None


async def _single(name: str, data: dict[str, Any]) -> AsyncIterator[bytes]:
    yield event(name, data)


def event(name: str, data: dict[str, Any]) -> bytes:
    """One SSE event; the data is one line of JSON, rendered as JSONResponse renders bodies."""
    payload = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return f"event: {name}\ndata: {payload}\n\n".encode()


def error_event(error: ServiceError) -> bytes:
    """Every stream's error event: the body an error answer would carry (errors.error_body)."""
    return event("error", error_body(error))
