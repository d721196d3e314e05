"""tools/parallel_read.py: reads overlap up to the worker count, results keep path order, errors surface."""

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from reactstep.tools.errors import StoreUnavailable
from reactstep.tools.parallel_read import map_files
from reactstep.tools.registry import ToolContext, ToolLimits
from reactstep.tools.store.local import LocalStore
from reactstep.tools.store.objects import ObjectInfo


class GatedStore:
    """A store whose reads meet at a barrier: a batch passes only when `width` reads are in flight."""

    def __init__(self, width: int, fail_on: str = "") -> None:
        self.barrier = threading.Barrier(width, timeout=10)
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0
        self.fail_on = fail_on
        self.started: list[str] = []

    def get(self, project_id: str, path: str) -> bytes:
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            self.started.append(path)
        try:
            if path == self.fail_on:
                raise StoreUnavailable("object store unreachable: EndpointConnectionError")
            self.barrier.wait()  # times out, and so fails the test, if reads ran one at a time
            return f"{project_id}:{path}".encode()
        finally:
            with self.lock:
                self.in_flight -= 1

    def list(self, project_id: str, prefix: str = "") -> Iterator[ObjectInfo]:
        raise AssertionError("map_files must not list")


def context_for(store: object) -> ToolContext:
    return ToolContext("demo", store, ToolLimits())  # type: ignore[arg-type]


def test_reads_overlap_up_to_the_worker_count_and_results_keep_order() -> None:
    store = GatedStore(width=4)
    paths = [f"f{number:02d}" for number in range(24)]
    results = list(map_files(context_for(store), paths, lambda path, data: (path, data), workers=4))
    assert results == [(path, f"demo:{path}".encode()) for path in paths]
    assert store.most_in_flight == 4


def test_a_failing_read_raises_and_later_reads_are_dropped() -> None:
    store = GatedStore(width=1, fail_on="f03")
    paths = [f"f{number:02d}" for number in range(100)]
    with pytest.raises(StoreUnavailable, match="EndpointConnectionError"):
        list(map_files(context_for(store), paths, lambda path, data: path, workers=1))
    # One worker, a window of two: at most f04 was queued behind the failure.
    assert store.started[-1] in ("f03", "f04")


def test_work_runs_on_the_content(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    for number in range(20):
        store.put("demo", f"n/{number}.txt", b"x" * number)
    paths = [f"n/{number}.txt" for number in range(20)]
    assert list(map_files(context_for(store), paths, lambda path, data: len(data))) == list(range(20))
