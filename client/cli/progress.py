"""A progress bar for long CLI work: drawn on a terminal, silent when output is piped."""

import sys
import time
from typing import TextIO


class ProgressBar:
    """Redraws one line at most ten times a second; `finish` ends the line."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self._label = label
        self._stream = stream if stream is not None else sys.stderr
        self._enabled = self._stream.isatty()
        self._last_draw = 0.0

    def __call__(self, done: int, total: int, item: str) -> None:
        """Report that `done` of `total` items are finished, the latest being `item`."""
        now = time.monotonic()
        if not self._enabled or (now - self._last_draw < 0.1 and done < total):
            return
        self._last_draw = now
        width = 30
        filled = width * done // max(total, 1)
        bar = "#" * filled + "." * (width - filled)
        self._stream.write(f"\r{self._label} [{bar}] {done}/{total} {item[-40:]:<40}")
        self._stream.flush()

    def finish(self) -> None:
        """Move past the bar so the summary starts on its own line."""
        if self._enabled and self._last_draw:
            self._stream.write("\n")
            self._stream.flush()
