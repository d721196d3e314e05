"""Work a client stops waiting for is stopped: a react_step whose client closes its connection is
cancelled at once, so its model call is not left running (and billed) for nobody.

    admission (the body is in: from here on, receive() only tells of the client leaving)
    ─► CancelOnDisconnect, on the routes it guards: the app runs in the request's task while a
       watcher task waits on receive()
       ─► the app answers first (its last byte out): the watcher ends; nothing else changes
       └► http.disconnect first ─► the request's task is cancelled: the model call's await raises
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

from reactstep.service.errors import ClientClosedRequest, error_response
from reactstep.service.http.admission import BODY
from reactstep.service.logs import context as logs

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
        answered = False  # whether the answer has begun (a stream's 200)
        # The work runs in this task; one watcher task cancels it when the client goes.
        gone = _Gone(asyncio.current_task())

        async def send_noting(message: Message) -> None:
            nonlocal answered
            answered = answered or message["type"] == "http.response.start"
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                gone.answered = True  # before the send: the server says "disconnect" once it is out
            await send(message)

        watch = asyncio.get_running_loop().create_task(gone.watch(receive))
        try:
            await self.app(scope, gone.receive, send_noting)
        except asyncio.CancelledError:
            if not gone.seen or gone.task.uncancel() > 0:  # the server's own cancellation (shutdown) too
                raise
        except Exception as failure:
            if not gone.seen:
                raise
            logger.error("a request failed while its work was cancelled", exc_info=failure)
        finally:
            watch.cancel()  # no await since the app returned: the watcher cannot cancel anything after us
        if not gone.seen:
            return
        logs.note(cancelled=True, cancel_ms=round((time.perf_counter() - gone.seen) * 1000, 3))
        self.cancelled(path)
        if not answered:  # the status and code of the request's log line and metrics
            await error_response(ClientClosedRequest())(scope, gone.receive, send)


class _Gone:
    """Whether (and since when) the client of `task` has gone; the one reader of receive() after the body."""

    def __init__(self, task: "asyncio.Task[object] | None") -> None:
        assert task is not None  # an ASGI app always runs in a task
        self.task = task
        self.seen = 0.0  # perf_counter() when the disconnect came; 0: not (yet)
        self.answered = False  # the answer's last byte was sent: a disconnect now is the server's
        self._left = asyncio.Event()

    async def watch(self, receive: Receive) -> None:
        """Wait for the disconnect, then cancel the work."""
        while (await receive())["type"] != "http.disconnect":
            pass
        if self.answered:  # a server reports a finished answer as a disconnect (ASGI's http.disconnect)
            return
        self.seen = time.perf_counter()
        self._left.set()
        self.task.cancel()

    async def receive(self) -> Message:
        """The app's receive(): the disconnect, once it came (the body was read before: admission)."""
        await self._left.wait()
        return {"type": "http.disconnect"}
