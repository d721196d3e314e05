"""Optimizing an embedded collection without stalling the process that serves it.

qdrant-edge's `optimize()` holds the GIL for as long as it runs (5 s for 100k chunks on 2 cores, no
thread of the process ran meanwhile), so it runs in a child process, on a copy of the shard:

    writes go quiet and the collection holds >= optimize_after unoptimized points (OptimizeScheduler)
      ─► EdgeVectorStore.optimize: flush, copy the shard to <root>/.optimizing/<name> (writes wait)
      ─► child: python -m reactstep.tools.vector_store.edge_optimize <copy> <dimension> <dense names...>
      ─► no write since the copy? swap the copy in (searches wait ~0.5 s) : throw the copy away

A copy that a write made stale is never swapped in; the next quiet spell tries again.
"""

import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, TypeVar

from reactstep.tools.errors import VectorStoreUnavailable
from reactstep.tools.vector_store.edge_shard import shard_config, warm_files

logger = logging.getLogger("reactstep.vectors")
T = TypeVar("T")
Outcome = Literal["optimized", "unchanged", "stale"]  # swapped in; nothing to do; a write made the copy stale
STAGING = ".optimizing"  # under the store's root; never a collection name (those start with [A-Za-z0-9])
OPTIMIZED, UNCHANGED = "optimized", "unchanged"  # what the child prints


class OptimizeFailed(VectorStoreUnavailable):
    """The copy could not be made or optimized; the live shard is untouched."""


class OptimizeStopped(OptimizeFailed):
    """The store closed first (its child, if any, killed); the live shard is untouched."""


def copy_shard(live: Path, staging: Path) -> None:
    """A full copy of a flushed shard (segment files change in place, so no hard links)."""
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(live, staging)
    except OSError as exc:
        raise OptimizeFailed(f"cannot copy the collection to optimize it: {exc}") from exc


def swap_folders(live: Path, staging: Path, load: Callable[[], T]) -> T:
    """Move the folder at `staging` to `live` (the old one out of the way) and `load` it; when that
    fails, the old folder goes back to `live`."""
    retired = staging.with_name(f"{staging.name}.retired")
    os.rename(live, retired)
    os.rename(staging, live)
    try:
        return load()
    except Exception:
        os.rename(live, staging)
        os.rename(retired, live)
        raise


def start_optimizer(staging: Path, dimension: int, dense: Sequence[str]) -> "subprocess.Popen[str]":
    """The child process that optimizes the copy at `staging`."""
    command = [sys.executable, "-m", __name__, str(staging), str(dimension), *dense]
    try:
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as exc:
        raise OptimizeFailed(f"cannot start the process that optimizes the collection: {exc}") from exc


def finish_optimizer(child: "subprocess.Popen[str]") -> bool:
    """Wait for the child: whether it changed the copy; OptimizeFailed when it failed."""
    out, err = child.communicate()
    if child.returncode != 0 or out.strip() not in (OPTIMIZED, UNCHANGED):
        last = err.strip().splitlines()[-1:] or [f"exit status {child.returncode}"]
        raise OptimizeFailed(f"optimizing a copy of the collection failed: {last[0]}")
    return out.strip() == OPTIMIZED


class CopyOptimizer:
    """Optimizes a store's collections one at a time, each on a copy under `staging` (shared by all)."""

    def __init__(self, staging: Path) -> None:
        self._staging = staging
        self._running = threading.Lock()
        self._guard = threading.Lock()
        self._child: subprocess.Popen[str] | None = None
        self._stopped = False

    def run(
        self,
        name: str,
        dimension: int,
        dense: Sequence[str],
        copy: Callable[[Path], int],
        swap: Callable[[Path, int], bool],
    ) -> Outcome:
        """`copy` the collection to a folder (it returns its write count), optimize it in a child
        process, then `swap` it in (given that count, it says False for a stale copy)."""
        copied = self._staging / name
        with self._running:
            try:
                writes = copy(copied)
                with self._guard:
                    if self._stopped:
                        raise OptimizeStopped("the vector store is closing")
                    child = self._child = start_optimizer(copied, dimension, dense)
                try:
                    changed = finish_optimizer(child)
                except OptimizeFailed:
                    if self._stopped:  # stop() killed the child: no failure of the optimizer's own
                        raise OptimizeStopped("the vector store closed during the optimization") from None
                    raise
                finally:
                    with self._guard:
                        self._child = None
                if not changed:
                    return "unchanged"
                warm_files(copied)  # before the swap's locks: its load then finds the files in memory
                return "optimized" if swap(copied, writes) else "stale"
            finally:
                shutil.rmtree(self._staging, ignore_errors=True)

    def stop(self) -> None:
        """Start no more children, and kill the running one (ours, by its handle)."""
        with self._guard:
            self._stopped = True
            if self._child is not None:
                self._child.kill()


class SwapGate:
    """Searches share the shards; swapping one in waits until none is in flight and holds new ones."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._users = 0
        self._swapping = False

    @contextmanager
    def shared(self) -> Iterator[None]:
        """Use the shards (many threads at once)."""
        with self._changed:
            while self._swapping:
                self._changed.wait()
            self._users += 1
        try:
            yield
        finally:
            with self._changed:
                self._users -= 1
                self._changed.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Replace a shard: no search is running or starts meanwhile."""
        with self._changed:
            while self._swapping:
                self._changed.wait()
            self._swapping = True
            while self._users:
                self._changed.wait()
        try:
            yield
        finally:
            with self._changed:
                self._swapping = False
                self._changed.notify_all()


class OptimizeScheduler:
    """Runs `optimize(name)` on a thread of its own once a collection's writes have been quiet for
    `quiet_s` and it has at least `after` points written since its last optimization."""

    def __init__(self, optimize: Callable[[str], Outcome], after: int, quiet_s: float) -> None:
        self._optimize = optimize
        self._after = after
        self._quiet_s = quiet_s
        self._changed = threading.Condition()
        self._pending: dict[str, int] = {}  # points written since the last optimization, per collection
        self._last_write = 0.0
        self._stopped = False
        self._thread: threading.Thread | None = None

    def written(self, name: str, points: int) -> None:
        """Count a write of `points` points into collection `name`."""
        if self._after <= 0 or points <= 0:
            return
        with self._changed:
            self._pending[name] = self._pending.get(name, 0) + points
            self._last_write = time.monotonic()
            if self._thread is None and not self._stopped:
                self._thread = threading.Thread(target=self._run, name="vector-optimizer", daemon=True)
                self._thread.start()
            self._changed.notify_all()

    def optimized(self, name: str) -> None:
        """The collection was just optimized (or found optimal): nothing is pending."""
        with self._changed:
            self._pending.pop(name, None)

    def stop(self) -> None:
        """Stop planning; waits for a running optimization, which the caller ends first."""
        with self._changed:
            self._stopped = True
            self._changed.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        while (name := self._next()) is not None:
            try:
                self._optimize(name)  # calls optimized() unless the copy went stale
            except OptimizeStopped:
                logger.info("optimizing collection %r stopped: the vector store is closing", name)
                self.optimized(name)
            except Exception:  # the store stays as it was and serves; the next `after` writes try again
                logger.warning("optimizing collection %r failed", name, exc_info=True)
                self.optimized(name)

    def _next(self) -> str | None:
        """The next collection due, once writes have been quiet long enough; None when stopped."""
        with self._changed:
            while not self._stopped:
                due = [name for name, points in self._pending.items() if points >= self._after]
                wait = self._last_write + self._quiet_s - time.monotonic()
                if due and wait <= 0:
                    return due[0]
                self._changed.wait(timeout=wait if due else None)
            return None


def main(argv: Sequence[str]) -> int:
    """The child: optimize the shard at argv[0] (made for argv[1]-dimensional vectors named argv[2:])."""
    import qdrant_edge as edge

    os.nice(10)  # the serving process comes first
    directory, dimension, dense = argv[0], int(argv[1]), tuple(argv[2:])
    shard = edge.EdgeShard.load(directory, shard_config(dimension, dense))
    try:
        changed = shard.optimize()
        shard.flush()
    finally:
        shard.close()
    print(OPTIMIZED if changed else UNCHANGED)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
