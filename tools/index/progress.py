"""How far an indexing run has come, in the units a progress bar can draw.

scan ──► embed ──► write ──► done
files_done/files_total   grow while files are planned (scan)
chunks_done/chunks_total grow while new chunks are embedded (embed), one step per window;
                         chunks_total is every chunk the run must write new points for
write: the last upserts, moved lines, deleted points, the symbol index and the overview
done:  chunks_done == chunks_total
"""

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

Phase = Literal["scan", "embed", "write", "done"]
PHASES: tuple[Phase, ...] = ("scan", "embed", "write", "done")


@dataclass(frozen=True)
class IndexProgress:
    """One step of a run: its phase, files planned and chunks embedded, and the latest path."""

    phase: Phase = "scan"
    files_done: int = 0
    files_total: int = 0
    chunks_done: int = 0
    chunks_total: int = 0
    path: str = ""

    def fields(self) -> dict[str, Any]:
        """The step as JSON fields (an SSE `progress` event, the head's `indexing` job)."""
        return asdict(self)

    def moved(self, **changes: Any) -> "IndexProgress":
        """The next step."""
        return replace(self, **changes)


Progress = Callable[[IndexProgress], None]


class RunProgress:
    """A run's progress as it goes, passed on to `forward` (when there is one) at each step."""

    def __init__(self, forward: Progress | None) -> None:
        self._forward = forward
        self.step = IndexProgress()

    def planned(self, files_done: int, files_total: int, chunks_total: int, path: str) -> None:
        """One more file planned (scan): `chunks_total` new chunks to embed so far."""
        self._tell(files_done=files_done, files_total=files_total, chunks_total=chunks_total, path=path)

    def embedding(self) -> None:
        """Every file is planned; embedding starts."""
        self._tell(phase="embed")

    def embedded(self, chunks: int, path: str) -> None:
        """`chunks` more chunks embedded (or found in the cache) and handed to the writer."""
        self._tell(phase="embed", chunks_done=self.step.chunks_done + chunks, path=path)

    def writing(self) -> None:
        """Embedding is over: the last writes, the symbol index and the overview."""
        self._tell(phase="write")

    def done(self) -> None:
        """The run is over."""
        self._tell(phase="done", chunks_done=self.step.chunks_total)

    def _tell(self, **changes: object) -> None:
        self.step = self.step.moved(**changes)
        if self._forward is not None:
            self._forward(self.step)
