"""Operations written once, run by either client: a generator yields what it needs, the client does it.

    op = operations.step(request)            a generator, no I/O of its own
      yield Call(...)      ─► Client: httpx.Client.send (retried by retries.py)     ─► the Response
                              AsyncClient: await httpx.AsyncClient.send                (read, 2xx)
      yield Call(..., on_event=f) ─► the event stream read; each event before `result`
                              to f; ─► the `result` event's data
      yield Invoke(f, args) ─► f(*args) (awaited first when the AsyncClient gets an awaitable)
      return value        ─► what the client's method returns
An error (ApiError, ConnectionFailed, or what a callback raised) is thrown into the generator at
its yield, so an operation catches the answers it expects (a 404 that means "not there").
"""

import inspect
import json
from collections.abc import AsyncGenerator, Callable, Generator
from contextlib import aclosing, closing
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar
from urllib.parse import quote

import httpx

from reactstep.client.api.errors import BadResponse, ConnectionFailed, StreamError, api_error

T = TypeVar("T")
EventSink = Callable[[str, dict[str, Any]], Any]  # (event name, data) of each event before `result`


@dataclass
class Call:
    """One HTTP request of an operation; `on_event` set: its answer is an event stream."""

    method: str
    path: str
    json: Any = None
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    on_event: EventSink | None = None


@dataclass
class Invoke:
    """A call of the user's code (a tool, an approval, a listener), which may be async for AsyncClient."""

    function: Callable[..., Any]
    args: tuple[Any, ...] = ()


Op = Generator["Call | Invoke", Any, T]


def project_path(project_id: str, tail: str = "") -> str:
    """/api/projects/{id}<tail>, the id quoted whole."""
    return f"/api/projects/{quote(project_id, safe='')}{tail}"


def file_path(project_id: str, path: str) -> str:
    """/api/projects/{id}/files/{path}, the path's slashes kept."""
    return project_path(project_id, "/files/" + quote(path, safe="/"))


def event_of(name: str, data: str) -> tuple[str, dict[str, Any]]:
    """One event as (name, payload); an `error` event raises StreamError with its error body."""
    try:
        payload = json.loads(data)
    except ValueError as exc:
        raise BadResponse(f"event {name!r} holds no JSON: {data[:200]!r}") from exc
    if not isinstance(payload, dict):
        raise BadResponse(f"event {name!r} holds no JSON object: {data[:200]!r}")
    if name == "error":
        raise api_error(200, payload, StreamError)
    return name, payload


def no_result() -> ConnectionFailed:
    """The error for a stream that ended before its `result` event."""
    return ConnectionFailed("the event stream ended without a result")


class SyncSender(Protocol):
    """What the sync client offers an operation: one call done, or its events read."""

    def send(self, call: Call) -> httpx.Response: ...

    def events(self, call: Call) -> Generator[tuple[str, dict[str, Any]], None, None]: ...


class AsyncSender(Protocol):
    """What the async client offers an operation."""

    async def send(self, call: Call) -> httpx.Response: ...

    def events(self, call: Call) -> AsyncGenerator[tuple[str, dict[str, Any]], None]: ...


def drive(op: Op[T], sender: SyncSender) -> T:
    """Run an operation with the sync client: each Call sent, each Invoke called."""
    reply: Any = None
    error: BaseException | None = None
    with closing(op):  # an interrupt leaves no operation half-run (its trace file closed)
        while True:
            try:
                step = op.throw(error) if error is not None else op.send(reply)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            reply, error = None, None
            try:
                if isinstance(step, Invoke):
                    reply = step.function(*step.args)
                elif step.on_event is None:
                    reply = sender.send(step)
                else:
                    reply = _read_to_result(sender.events(step), step.on_event)
            except Exception as exc:
                error = exc


async def drive_async(op: Op[T], sender: AsyncSender) -> T:
    """Run an operation with the async client: each Call sent, each Invoke called and awaited if need be."""
    reply: Any = None
    error: BaseException | None = None
    with closing(op):  # a cancelled task leaves no operation half-run
        while True:
            try:
                step = op.throw(error) if error is not None else op.send(reply)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            reply, error = None, None
            try:
                if isinstance(step, Invoke):
                    reply = await settled(step.function(*step.args))
                elif step.on_event is None:
                    reply = await sender.send(step)
                else:
                    reply = await _aread_to_result(sender.events(step), step.on_event)
            except Exception as exc:
                error = exc


async def settled(value: Any) -> Any:
    """A callback's value, awaited when it is awaitable (an async callback)."""
    return await value if inspect.isawaitable(value) else value


def _read_to_result(
    events: Generator[tuple[str, dict[str, Any]], None, None], on_event: EventSink
) -> dict[str, Any]:
    with closing(events):
        for name, data in events:
            if name == "result":
                return data
            on_event(name, data)
    raise no_result()


async def _aread_to_result(
    events: AsyncGenerator[tuple[str, dict[str, Any]], None], on_event: EventSink
) -> dict[str, Any]:
    async with aclosing(events):
        async for name, data in events:
            if name == "result":
                return data
            await settled(on_event(name, data))
    raise no_result()
