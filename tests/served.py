"""Helpers for tests that run `reactstep serve` as a process of its own, on a loopback port."""

import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

REACTSTEP = str(Path(sys.executable).parent / "reactstep")


def free_port() -> int:
    """A port nothing listens on now, on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until_up(url: str, process: "subprocess.Popen[Any]", timeout_s: float = 60) -> None:
    """Return once the server at url answers /healthz; fail if its process ends first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, "reactstep serve exited at start-up"
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} did not come up")


@contextmanager
def serving(env: dict[str, str]) -> "Iterator[tuple[str, subprocess.Popen[bytes]]]":
    """`reactstep serve` with this environment on a free port, up; interrupted (as Ctrl-C does) after."""
    port = free_port()
    process = subprocess.Popen(
        [REACTSTEP, "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process)
        yield url, process
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)


def settled_readiness(url: str, timeout_s: float = 60) -> dict[str, Any]:
    """/readyz's answer once the verdicts begun at start-up are in (no check reads `warming`)."""
    deadline = time.monotonic() + timeout_s
    while (report := httpx.get(f"{url}/readyz", timeout=30).json())["status"] == "warming":
        assert time.monotonic() < deadline, f"{url}/readyz still warming after {timeout_s:g}s"
        time.sleep(0.2)
    result: dict[str, Any] = report
    return result


class HealthPoller:
    """Asks /healthz every interval on its own thread while open; keeps the slowest answer's time."""

    def __init__(self, url: str, interval_s: float = 0.02, timeout_s: float = 30.0) -> None:
        self.url = url
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.slowest_s = 0.0
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "HealthPoller":
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        with httpx.Client(timeout=self.timeout_s) as http:
            while not self._stop.is_set():
                began = time.perf_counter()
                try:
                    status = http.get(f"{self.url}/healthz").status_code
                    if status != 200:
                        self.failures.append(f"/healthz answered {status}")
                except httpx.HTTPError as exc:
                    self.failures.append(f"/healthz failed: {exc!r}")
                self.slowest_s = max(self.slowest_s, time.perf_counter() - began)
                self._stop.wait(self.interval_s)


@dataclass(frozen=True)
class PolledAnswer:
    """A POST's answer and how /healthz fared while it was at work."""

    status: int
    """0 when no answer came (the connection failed or timed out)."""
    seconds: float
    slowest_health_s: float
    health_failures: list[str]
    text: str


def post_while_polling(url: str, path: str, body: bytes, timeout_s: float = 120.0) -> PolledAnswer:
    """POST a JSON body to url+path while a HealthPoller times /healthz."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with httpx.Client(timeout=timeout_s) as http, HealthPoller(url) as poller:
        began = time.perf_counter()
        try:
            answer = http.post(f"{url}{path}", content=body, headers=headers)
            status, text = answer.status_code, answer.text
        except httpx.HTTPError as exc:
            status, text = 0, repr(exc)
        seconds = time.perf_counter() - began
    return PolledAnswer(status, seconds, poller.slowest_s, poller.failures, text)
