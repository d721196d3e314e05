"""Server-Sent Events: the response that carries a stream of events (a streamed step, an index's progress).

The events themselves are made by step/stream.py (event, error_event); this is their HTTP answer.
"""

import anyio
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

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
