"""Work a client stops waiting for is stopped: a react_step whose client closes its connection is
cancelled at once, so its model call is not left running (and billed) for nobody.

    admission (the body is in: from here on, receive() only tells of the client leaving)
    ─► CancelOnDisconnect, on the routes it guards: the app runs as a task while receive() is watched
       ─► the app answers first: the watch ends; nothing else changes
       └► http.disconnect first ─► the task is cancelled: the model call's await raises
          CancelledError, which is no provider fault (no retry starts), and its HTTP connection to
          the model server is closed ─► reactstep_requests_cancelled_total{route}, and the request's
          log line says `cancelled` (with how long the work took to stop); a step whose answer had
          not begun is logged and counted as 499 client_closed_request (nobody reads it)

A streamed step (step/stream.py) is cancelled here the same way; its answer had begun (200), so its
line keeps that status. The app reads no body (admission has it) and hears of the disconnect from
this layer alone: it is the one reader of receive() once the body is in.
"""

import asyncio
import logging
import time
from collections.abc import Callable, Collection

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reactstep.service import logs
from reactstep.service.errors import ClientClosedRequest, error_response
from reactstep.service.http.admission import BODY

logger = logging.getLogger("reactstep.http")


class CancelOnDisconnect:
    """Cancels the guarded routes' work when their client disconnects; passes every other request on."""

    def __init__(self, app: ASGIApp, paths: Collection[str], cancelled: Callable[[str], None]) -> None:
        self.app = app
        self.paths = frozenset(paths)
        self.cancelled = cancelled  # told the route template of each cancelled request (the metrics)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = getattr(scope.get("route"), "path", None) if scope["type"] == "http" else None
        if path not in self.paths or not isinstance(scope.get(BODY), bytes):  # a body left unread: refused
            await self.app(scope, receive, send)
            return
        left = asyncio.Event()
        answered = False  # whether the answer has begun (a stream's 200)

        async def receive_disconnect() -> Message:
            await left.wait()
            return {"type": "http.disconnect"}

        async def send_noting(message: Message) -> None:
            nonlocal answered
            answered = answered or message["type"] == "http.response.start"
            await send(message)

        work = asyncio.ensure_future(self.app(scope, receive_disconnect, send_noting))
        watch = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait((work, watch), return_when=asyncio.FIRST_COMPLETED)
        except BaseException:  # the server itself cancels us (shutdown): neither task outlives it
            work.cancel()
            watch.cancel()
            raise
        if work.done():
            watch.cancel()
            work.result()  # its exception, if any, goes on to ObserveMiddleware as it would have
            return
        await self._cancel(work, left, path)
        if not answered:  # the status and code of the request's log line and metrics
            await error_response(ClientClosedRequest())(scope, receive_disconnect, send)

    async def _cancel(self, work: "asyncio.Future[None]", left: asyncio.Event, path: str) -> None:
        """Cancel the work and wait for it to end (its cleanup closes the model call)."""
        began = time.perf_counter()
        left.set()
        work.cancel()
        await asyncio.wait((work,))  # our own cancellation (shutdown) still reaches us here
        if not work.cancelled() and (failure := work.exception()) is not None:
            logger.error("a request failed while its work was cancelled", exc_info=failure)
        logs.note(cancelled=True, cancel_ms=round((time.perf_counter() - began) * 1000, 3))
        self.cancelled(path)


async def _disconnected(receive: Receive) -> None:
    """Return once the client has gone."""
    while (await receive())["type"] != "http.disconnect":
        pass
