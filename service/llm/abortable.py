"""A model call made on a worker thread, stopped from the event loop: its socket is shut.

The gateway makes a whole (not streamed) call synchronously on a thread of its own (gateway.py); a
cancelled await does not stop a thread. So the sync pool's connections (clients.py) come from a
network backend that notes, for the call under way (the context variable abortable_call sets; the
thread runs in a copy of that context), the connection it writes to and reads from. abort() shuts
that socket: the thread's read returns at once (the call fails, its connection is dropped, never
pooled again), and the model server sees its request closed, instead of working on to the call's
timeout for nobody.

    gateway.complete ─► abortable_call() ─► worker thread: write request, read reply (noted)
                        └► the step is cancelled ─► abort(): shutdown(SHUT_RDWR) on that socket
"""

import contextlib
import contextvars
import socket
import typing
from collections.abc import Iterator

import httpcore
import httpx


class CallHandle:
    """One call's connection, as its thread uses it; abort() from any thread shuts it."""

    def __init__(self) -> None:
        self.aborted = False
        self.stream: _NotedStream | None = None

    def abort(self) -> None:
        """Stop the call: its socket is shut now, or its next read or write fails."""
        self.aborted = True
        stream = self.stream
        if stream is not None:
            stream.shut()

    def use(self, stream: "_NotedStream") -> None:
        """The call's thread is about to use `stream` (set before `aborted` is read: no lost abort)."""
        self.stream = stream
        if self.aborted:
            raise httpcore.ReadError("the call was cancelled")


_current: contextvars.ContextVar[CallHandle | None] = contextvars.ContextVar(
    "reactstep_llm_call", default=None
)


@contextlib.contextmanager
def abortable_call() -> Iterator[CallHandle]:
    """A handle on the connection of the call made in (a copy of) this context."""
    handle = CallHandle()
    token = _current.set(handle)
    try:
        yield handle
    finally:
        _current.reset(token)


class _NotedStream(httpcore.NetworkStream):
    """A connection that tells the current call when it is used."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if (call := _current.get()) is not None:
            call.use(self)
        return self._inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if (call := _current.get()) is not None:
            call.use(self)
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: typing.Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _NotedStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)

    def shut(self) -> None:
        """Shut the socket both ways: a blocked read returns, the peer sees the close."""
        sock = self._inner.get_extra_info("socket")
        with contextlib.suppress(OSError):  # already closed by its thread: nothing left to stop
            sock.shutdown(socket.SHUT_RDWR)


class _NotingBackend(httpcore.NetworkBackend):
    """httpcore's blocking sockets, each wrapped in a _NotedStream."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        return _NotedStream(self._inner.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        return _NotedStream(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def abortable_transport() -> httpx.HTTPTransport:
    """httpx's transport with httpx's defaults, over the noting backend."""
    transport = httpx.HTTPTransport()
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)  # httpx's defaults
    # httpx has no seam for the network backend: its pool is replaced by one made the same way with it.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=_NotingBackend(),
    )
    return transport
