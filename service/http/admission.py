"""Admission: a bounded number of POST/PUT/DELETE requests at work, a bounded queue; the rest get 503 at once.

    POST ─► a slot free and nobody waiting ─► run
         └► queue not full ─► wait (at most queue_timeout_s) ─► a slot ─► run
                                                             └► timeout ─► 503 overloaded
         └► queue full ─► 503 overloaded + Retry-After, without reading the body
    GET (health, readiness, the contract, the manifest) is cheap and never waits.

The limits are per process: replicas behind a load balancer each have their own, which is what
stops one replica from queueing without bound. Everything runs on the server's one event loop.
"""

import asyncio
from collections import deque

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from reactstep.service.errors import Overloaded


class AdmissionLimiter:
    """At most `limit` holders and `max_queue` waiters; slots go to waiters in arrival order."""

    def __init__(self, limit: int, max_queue: int, wait_s: float) -> None:
        self.limit = limit
        self.max_queue = max_queue
        self.wait_s = wait_s
        self.active = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        """Requests queued for a slot."""
        return len(self._waiters)

    async def acquire(self) -> bool:
        """Take a slot, waiting in the queue if there is room; False means refuse the request."""
        if self.active < self.limit and not self._waiters:
            self.active += 1
            return True
        if len(self._waiters) >= self.max_queue:
            return False
        ticket: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(ticket)
        try:
            async with asyncio.timeout(self.wait_s):
                await ticket
        except TimeoutError:
            return self._give_up(ticket)
        except BaseException:
            self._give_up(ticket)
            raise
        return True

    def release(self) -> None:
        """Hand the slot to the longest waiter, or free it."""
        while self._waiters:
            ticket = self._waiters.popleft()
            if not ticket.done():
                ticket.set_result(None)  # the slot passes on; `active` is unchanged
                return
        self.active -= 1

    def _give_up(self, ticket: asyncio.Future[None]) -> bool:
        """Leave the queue; a slot handed over at this very moment is passed on, not lost."""
        if ticket in self._waiters:
            self._waiters.remove(ticket)
        if ticket.done() and not ticket.cancelled():
            self.release()
        return False


# Methods that do work worth bounding: the steps, the tools, uploads and deletes. GETs stay free.
ADMITTED = frozenset({"POST", "PUT", "DELETE"})


class AdmissionMiddleware:
    """Runs each POST, PUT and DELETE under the limiter; 503 overloaded with Retry-After when saturated."""

    def __init__(self, app: ASGIApp, limiter: AdmissionLimiter, retry_after_s: int) -> None:
        self.app = app
        self.limiter = limiter
        self.retry_after_s = retry_after_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ADMITTED:
            await self.app(scope, receive, send)
            return
        if not await self.limiter.acquire():
            await self._overloaded()(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.limiter.release()

    def _overloaded(self) -> JSONResponse:
        error = Overloaded(
            f"the server is at its limit of {self.limiter.limit} requests at work and "
            f"{self.limiter.max_queue} waiting; retry after {self.retry_after_s}s"
        )
        headers = {"retry-after": str(self.retry_after_s)}
        return JSONResponse(error.to_body(), status_code=error.status, headers=headers)
