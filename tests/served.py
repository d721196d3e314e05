"""Helpers for tests that run `reactstep serve` as a process of its own, on a loopback port."""

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
