"""react_step with `"stream": true`: the same step, answered as Server-Sent Events.

    prepare (a broken request is still a JSON 4xx: nothing has been streamed yet)
    event: thought  data: {"delta": "..."}      the thought as the model writes it (thought_stream)
    ...
    event: result   data: <the non-streaming response body>        exactly one terminal event,
    event: error    data: {"error": {"code", "message", "request_id"}}  one or the other

Faults before the first delta are retried like any call (call.py). A call that may use a tool, which the
model server answers with an empty stream (llama-cpp-python's chatml-function-calling, when the model
calls one), is asked again for the whole reply, sent as one thought delta, then the result; that server
is asked so from then on (server_facts.streams_tool_calls). A stream that breaks off is an error event,
never a parsed action. When the client disconnects, the response task is cancelled, and closing the
upstream stream closes the connection to the provider.
"""

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from reactstep.contract.step import ReactStepResponse
from reactstep.service.errors import INTERNAL_ERROR, ServiceError, error_body
from reactstep.service.llm.protocol import LLMGateway
from reactstep.service.step.call import step_reply
from reactstep.service.step.interpret import step_body
from reactstep.service.step.prepare import PreparedStep
from reactstep.service.step.thought_stream import ThoughtStream

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


def stream_step(prepared: PreparedStep | ReactStepResponse, llm: LLMGateway) -> EventStreamResponse:
    """The prepared step's events (request errors were raised by prepare, before any was sent)."""
    if isinstance(prepared, PreparedStep):
        return EventStreamResponse(step_events(prepared, llm), headers=HEADERS)
    return EventStreamResponse(_single("result", step_body(prepared)), headers=HEADERS)


async def step_events(prepared: PreparedStep, llm: LLMGateway) -> AsyncIterator[bytes]:
    """Thought deltas, then the result or an error."""
    replies = step_reply(prepared, llm, streamed=True)
    try:
        thought = ThoughtStream(prepared.context.plain_answer)
        async for item in replies:
            if isinstance(item, str):
                if delta := thought.feed(item):
                    yield event("thought", {"delta": delta})
                continue
            if tail := thought.finish():
                yield event("thought", {"delta": tail})
            yield event("result", step_body(item))
    except ServiceError as error:
        yield error_event(error)
    except Exception as exc:  # never a silent stop: the client gets an error event it can report
        logger.error("unexpected error in a react_step stream", exc_info=exc)
        yield error_event(ServiceError(INTERNAL_ERROR))
    finally:
        await replies.aclose()  # closes the upstream stream when the client left early


async def _single(name: str, data: dict[str, Any]) -> AsyncIterator[bytes]:
    yield event(name, data)


def event(name: str, data: dict[str, Any]) -> bytes:
    """One SSE event; the data is one line of JSON, rendered as JSONResponse renders bodies."""
    payload = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return f"event: {name}\ndata: {payload}\n\n".encode()


def error_event(error: ServiceError) -> bytes:
    """Every stream's error event: the body an error answer would carry (errors.error_body)."""
    return event("error", error_body(error))
