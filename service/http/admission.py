"""Admission: a bounded number of POST/PUT/DELETE requests at work, a bounded queue; the rest get 503 at once.

    POST ─► slots and queue full, or max_reading bodies on their way ─► 503 overloaded, body unread
         └► the body, whole, within body_timeout_s (no slot held meanwhile) ─► too slow: 408
                                                                            └► too big: 413
            └► a slot free and nobody waiting ─► run (the app takes the bytes from scope[BODY])
            └► queue not full ─► wait (at most queue_timeout_s) ─► a slot ─► run
                                                                └► timeout ─► 503 overloaded
    This is the one place a body is read and its size bounded (Content-Length and bytes, by its
    route's limit); http/bodies.py parses what is kept here. A body declared larger than its route's
    limit is not read, nor one whose client left midway: the refusal (413, 400) is kept in its place
    for the route to raise once its own checks (key, project) have passed, as if it had read it.
    GET (health, readiness, the contract, the manifest) is cheap and never waits.

A request counts against the limit only once its body is in, so clients that send a body slowly
(or never finish) cannot hold the slots: each is cut off at body_timeout_s, and at most
max_reading bodies are read at once (which bounds the memory they take).

The limits are per process: replicas behind a load balancer each have their own, which is what
stops one replica from queueing without bound. Everything runs on the server's one event loop.
"""

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from reactstep.service.errors import (
    BadRequest,
    Overloaded,
    PayloadTooLarge,
    RequestTimeout,
    ServiceError,
    error_response,
)

# The scope key of what was read: the body's bytes, or the refusal its route raises when it reads them.
BODY = "reactstep.body"


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

    @property
    def full(self) -> bool:
        """Whether a request arriving now would be refused: every slot taken and the queue full."""
        return self.active >= self.limit and len(self._waiters) >= self.max_queue

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
    """Reads each POST, PUT and DELETE body, then runs the request under the limiter; 503 overloaded
    with Retry-After when saturated, 408 request_timeout for a body that does not arrive in time."""

    def __init__(
        self,
        app: ASGIApp,
        limiter: AdmissionLimiter,
        retry_after_s: int,
        body_limit: Callable[[Scope], int],
        body_timeout_s: float,
        max_reading: int,
        rejected: Callable[[str], None] = lambda reason: None,
    ) -> None:
        self.app = app
        self.rejected = rejected  # told the code of each refusal (the metrics count them)
        self.limiter = limiter
        self.retry_after_s = retry_after_s
        self.body_limit = body_limit
        self.deadlines = Deadlines(body_timeout_s)
        self.max_reading = max_reading
        self.reading = 0  # bodies on their way in

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ADMITTED:
            await self.app(scope, receive, send)
            return
        if self.limiter.full or self.reading >= self.max_reading:
            await self._overloaded()(scope, receive, send)
            return
        self.reading += 1
        try:
            with self.deadlines.watch():
                scope[BODY] = await _read_body(scope, receive, self.body_limit(scope))
        except ServiceError as error:
            self.rejected(error.code)
            await error_response(error)(scope, receive, send)
            return
        finally:
            self.reading -= 1
        if not await self.limiter.acquire():
            await self._overloaded()(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.limiter.release()

    def _overloaded(self) -> JSONResponse:
        self.rejected(Overloaded.code)
        error = Overloaded(
            f"the server is at its limit of {self.limiter.limit} requests at work and "
            f"{self.limiter.max_queue} waiting; retry after {self.retry_after_s}s",
            retry_after_s=self.retry_after_s,
        )
        return error_response(error)


async def _read_body(scope: Scope, receive: Receive, limit: int) -> bytes | ServiceError:
    """The whole body, in memory; PayloadTooLarge past `limit`. A body declared larger than `limit`
    is left unread, and one cut short by a disconnect is dropped: their refusal stands in for them."""
    declared = _content_length(scope)
    if declared is not None and declared > limit:
        return PayloadTooLarge(f"the request body is larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # nobody will read the answer; still not an internal error
            return BadRequest("the client closed the connection before sending its whole body")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"the request body is larger than {limit} bytes")
        if not message.get("more_body", False):
            return b"".join((*chunks, chunk)) if chunks else chunk
        chunks.append(chunk)


class Deadlines:
    """Cuts off body reads that run past timeout_s: one task sweeps them every `tick` (a quarter of
    the timeout, at most a second) instead of a timer per request; it ends when nothing is read."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.tick = min(timeout_s / 4, 1.0)
        self._reading: dict[asyncio.Task[Any], float] = {}
        self._expired: set[asyncio.Task[Any]] = set()
        self._sweeper: asyncio.Task[None] | None = None

    def watch(self) -> "_Watch":
        """Around the awaits of one read: RequestTimeout instead of the sweeper's cancellation."""
        return _Watch(self)

    def begin(self, task: "asyncio.Task[Any]") -> None:
        """Start the clock on the task's read (and the sweeper, if it stopped)."""
        loop = task.get_loop()
        self._reading[task] = loop.time() + self.timeout_s
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = loop.create_task(self._sweep())

    def end(self, task: "asyncio.Task[Any]") -> bool:
        """Forget the read; whether the sweeper had cut it off."""
        del self._reading[task]
        if task not in self._expired:
            return False
        self._expired.discard(task)
        return True

    async def _sweep(self) -> None:
        # A task in _reading is suspended inside watch() whenever this runs: the cancellation lands there.
        loop = asyncio.get_running_loop()
        while self._reading:
            await asyncio.sleep(self.tick)
            now = loop.time()
            for task, deadline in list(self._reading.items()):
                if deadline <= now and task not in self._expired:
                    self._expired.add(task)
                    task.cancel()


class _Watch:
    """One read under its deadline (a plain context manager: this runs on every request)."""

    def __init__(self, deadlines: Deadlines) -> None:
        self._deadlines = deadlines
        self._task: asyncio.Task[Any] | None = None

    def __enter__(self) -> None:
        self._task = asyncio.current_task()
        assert self._task is not None
        self._deadlines.begin(self._task)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: Any) -> None:
        assert self._task is not None
        if self._deadlines.end(self._task) and isinstance(error, asyncio.CancelledError):
            self._task.uncancel()
            timeout_s = self._deadlines.timeout_s
            raise RequestTimeout(f"the request body did not arrive within {timeout_s:g}s") from error


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None
