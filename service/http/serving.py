"""Run the app with uvicorn: in the foreground for `serve`, or on a loopback thread for the CLI and tests."""

import socket
import threading
import time
from types import TracebackType

import uvicorn
from starlette.applications import Starlette


def uvicorn_config(
    app: Starlette, host: str = "127.0.0.1", port: int = 0, log_level: str = "info", own_logging: bool = False
) -> uvicorn.Config:
    """How `serve` runs the app (the benchmarks run their baselines the same way).

    uvicorn's access log stays off: the app logs each request itself (ObserveMiddleware), with its
    id. With `own_logging`, logs.configure_logging has set up the handlers and uvicorn adds none, so
    its own lines come out in the same format.
    """
    log_config = None if own_logging else uvicorn.config.LOGGING_CONFIG
    return uvicorn.Config(
        app, host=host, port=port, log_level=log_level, access_log=False, log_config=log_config
    )


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to host:port and listening; OSError when the address is taken or not ours."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=2048)


def serve_forever(app: Starlette, listening: socket.socket, log_level: str) -> None:
    """Serve on a bound socket until interrupted, logging through logs.configure_logging's handlers."""
    host, port = listening.getsockname()[:2]
    config = uvicorn_config(app, host, port, log_level, own_logging=True)
    uvicorn.Server(config).run(sockets=[listening])


class BackgroundServer:
    """The app on 127.0.0.1 at a free port, in a daemon thread; a context manager."""

    def __init__(self, app: Starlette, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = _free_port(host)
        self._server = uvicorn.Server(uvicorn_config(app, host, self.port, log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    @property
    def url(self) -> str:
        """Base URL of the running server."""
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> "BackgroundServer":
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the in-process server did not start")
            time.sleep(0.01)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


def _free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port
