"""Local processes for the client's shell tools, each in a process group of its own that dies with the client.

    ShellProcess(command, cwd) ─► `bash -c` in a new session (its own process group), stdin closed,
        stdout and stderr on one pipe (interleaved as a terminal shows them) ─► a reader thread
        decodes it into an OutputCapture (head + tail of what is unread, the middle counted)
    wait(timeout) ─► exit code, or None when the time ran out
    stop() ─► SIGTERM to the group, SIGKILL after a grace period, reaped (no zombie is left)
    at interpreter exit, or on SIGTERM/SIGHUP under exit_on_termination_signals() ─► stop_all()

A SIGKILL of the client cannot be caught; its processes then outlive it.
"""

import atexit
import codecs
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from types import FrameType

STOP_GRACE_S = 1.0
READ_CHUNK_BYTES = 65_536


@dataclass(frozen=True)
class Captured:
    """Output read at once: its start and end, and how many characters between them were dropped."""

    head: str
    tail: str = ""
    omitted: int = 0


class OutputCapture:
    """Output not read yet, bounded: the first and last `limit // 2` characters are kept."""

    def __init__(self, limit: int) -> None:
        self._half = max(limit // 2, 1)
        self._lock = threading.Lock()
        self._head, self._tail, self._omitted = "", "", 0

    def append(self, text: str) -> None:
        """Add output as it arrives."""
        with self._lock:
            if not self._tail and len(self._head) < self._half:
                room = self._half - len(self._head)
                self._head, text = self._head + text[:room], text[room:]
            tail = self._tail + text
            self._omitted += max(len(tail) - self._half, 0)
            self._tail = tail[-self._half :]

    def take(self) -> Captured:
        """Everything unread since the last take, which starts afresh."""
        with self._lock:
            captured = Captured(self._head, self._tail, self._omitted)
            self._head, self._tail, self._omitted = "", "", 0
            return captured


class ShellProcess:
    """One `bash -c` command running in its own process group."""

    def __init__(self, command: str, cwd: str, output_limit: int) -> None:
        self.output = OutputCapture(output_limit)
        with _signals_deferred():  # a SIGTERM mid-spawn would leave a process nobody tracks
            self._popen = subprocess.Popen(
                ["bash", "-c", command],
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group, so stop() reaches every process it started
            )
            assert self._popen.stdout is not None
            self._reader = threading.Thread(target=_pump, args=(self._popen.stdout.fileno(), self.output))
            self._reader.daemon = True
            self._reader.start()
            _track(self)

    @property
    def exit_code(self) -> int | None:
        """The exit code (negative: the signal that ended it), or None while it runs."""
        return self._popen.poll()

    def wait(self, timeout_s: float) -> int | None:
        """Wait for the command to end; None if it still runs after timeout_s."""
        try:
            return self._popen.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def terminate(self) -> None:
        """Ask every process of the group to end (SIGTERM), without waiting."""
        _signal_group(self._popen.pid, signal.SIGTERM)

    def stop(self) -> int:
        """End the whole process group (politely first) and return the command's exit code."""
        self.terminate()
        code = self.wait(STOP_GRACE_S)
        # Whatever is left of the group (a child ignoring SIGTERM, a straggler of a finished command).
        _signal_group(self._popen.pid, signal.SIGKILL)
        if code is None:
            code = self._popen.wait()
        self.finish_reading()
        _untrack(self)
        return code

    def finish_reading(self) -> None:
        """Wait briefly for the last output after the process group is gone."""
        self._reader.join(STOP_GRACE_S)
        if not self._reader.is_alive() and self._popen.stdout is not None:
            self._popen.stdout.close()


def _pump(descriptor: int, capture: OutputCapture) -> None:
    """Decode the pipe into the capture until every writer has closed it."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while chunk := os.read(descriptor, READ_CHUNK_BYTES):
        capture.append(decoder.decode(chunk))
    capture.append(decoder.decode(b"", final=True))


def _signal_group(group_id: int, signal_number: signal.Signals) -> None:
    with suppress(ProcessLookupError, PermissionError):  # the group is gone already
        os.killpg(group_id, signal_number)


_LIVE: set[ShellProcess] = set()
_LIVE_LOCK = threading.Lock()
_AT_EXIT = threading.Event()


def _track(process: ShellProcess) -> None:
    with _LIVE_LOCK:
        if not _AT_EXIT.is_set():
            atexit.register(stop_all)
            _AT_EXIT.set()
        _LIVE.add(process)


def _untrack(process: ShellProcess) -> None:
    with _LIVE_LOCK:
        _LIVE.discard(process)


def stop_all() -> None:
    """Stop every process this interpreter started and has not stopped yet."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for process in live:
        process.terminate()  # all at once, so the grace periods overlap
    for process in live:
        process.stop()


@contextmanager
def exit_on_termination_signals() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into SystemExit (so cleanup runs) while the block runs in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = (signal.SIGTERM, signal.SIGHUP)
    previous = {number: signal.signal(number, _exit_on_signal) for number in caught}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


_SPAWNING = threading.Event()
_PENDING: list[int] = []


def _exit_on_signal(signal_number: int, frame: FrameType | None) -> None:
    if _SPAWNING.is_set():
        _PENDING.append(signal_number)
        return
    sys.exit(128 + signal_number)


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold a termination signal's exit until the block is done (the handler runs in this thread)."""
    _SPAWNING.set()
    try:
        yield
    finally:
        _SPAWNING.clear()
        if _PENDING:
            sys.exit(128 + _PENDING.pop())
