"""The handler configure_logging installs: a StreamHandler that makes and writes the request lines
of one turn of an event loop together, when that turn ends.

    log_line, on a running loop ─► write_line: the line's parts held (scrubbed, stamped) ─► the
                                   loop's next pass (call_soon): every line held made, one write
    log_line with no loop, a record (emit), flush() ─► the lines held first, then what it writes

Under load one turn of the loop answers several requests (a dozen or more under wrk): their lines
are made in one run of the formatter, which stays warm in the CPU's caches, and cost one write call
instead of one each. Under wrk that took ~10 us of CPU off each request, a third of what the
request line cost. No line waits for a timer or for more lines: it goes out when the turn it was
made in ends, and nothing this handler writes overtakes it. At most MAX_HELD lines are held;
logging.shutdown() flushes the handler, so none is lost at exit.
"""

import asyncio
import logging
from typing import Any, TextIO

from reactstep.service.log_format import LineFormatter

MAX_HELD = 256


class TurnHandler(logging.StreamHandler[TextIO]):
    """A StreamHandler whose lines made on a running event loop go out when the loop's turn ends."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        self._held: list[tuple[LineFormatter, tuple[Any, ...]]] = []
        self._waiting: set[asyncio.AbstractEventLoop] = set()  # loops that will write the held lines

    def write_line(self, formatter: LineFormatter, *parts: Any) -> None:
        """Write the line formatter.line(*parts) makes: when this loop turn ends, if one runs here;
        else now."""
        loop = _running_loop()
        self.acquire()
        try:
            self._held.append((formatter, parts))
            if loop is not None and len(self._held) < MAX_HELD:
                if loop not in self._waiting:
                    self._waiting.add(loop)
                    loop.call_soon(self._turn_ended, loop)
                return
            try:
                self.flush()
            except Exception:  # as StreamHandler.emit: the handler reports it, the request goes on
                self.handleError(_lines_record())
        finally:
            self.release()

    def flush(self) -> None:
        """Write the lines held, then flush the stream."""
        self.acquire()
        try:
            self._write_held()
            super().flush()
        finally:
            self.release()

    def emit(self, record: logging.LogRecord) -> None:
        """Write a record after the lines held (handle() holds the lock)."""
        try:
            self._write_held()
        except Exception:
            self.handleError(record)
        super().emit(record)

    def _turn_ended(self, loop: asyncio.AbstractEventLoop) -> None:
        self.acquire()
        try:
            self._waiting.discard(loop)
            self.flush()
        except Exception:
            self.handleError(_lines_record())
        finally:
            self.release()

    def _write_held(self) -> None:
        if not self._held:
            return
        held, self._held = self._held, []
        lines = []
        for formatter, parts in held:
            try:
                lines.append(formatter.line(*parts) + self.terminator)
            except Exception:  # one line that cannot be made loses only itself
                self.handleError(_lines_record())
        self.stream.write("".join(lines))


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _lines_record() -> logging.LogRecord:
    """What handleError names when held lines could not be written."""
    return logging.makeLogRecord({"name": "reactstep.http", "msg": "(held request lines)"})
