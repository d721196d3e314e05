"""Read many stored files at once: a small thread pool, results in the order the paths came.

    paths ─► FETCH_WORKERS threads, each: work(path, store.get(path)) ─► results, in path order

A remote store answers each GET in milliseconds, so one-by-one reads of a few hundred files
add up to seconds; overlapping them hides most of that. `work` runs in the pool too, so a
file's bytes can be dropped as soon as it has been digested. At most 2 x workers files are
in flight or waiting, which bounds memory however many files there are.
"""

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from reactstep.tools.registry import ToolContext
from reactstep.tools.store.paths import ProjectPath

# Below boto3's default of 10 pooled connections, so no thread waits for a connection.
FETCH_WORKERS = 8

Result = TypeVar("Result")


def map_files(
    context: ToolContext,
    paths: Sequence[ProjectPath],
    work: Callable[[str, bytes], Result],
    workers: int = FETCH_WORKERS,
) -> Iterator[Result]:
    """Yield work(path, content) for each path, in order; a failing read or work raises here."""
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="read-file")
    pending: deque[Future[Result]] = deque()
    try:
        for path in paths:
            pending.append(pool.submit(_read_and_work, context, path, work))
            if len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        # On an error or an early stop, reads not yet started are dropped, not waited for.
        pool.shutdown(wait=False, cancel_futures=True)


def _read_and_work(context: ToolContext, path: ProjectPath, work: Callable[[str, bytes], Result]) -> Result:
    """One file: fetch it, then digest it."""
    return work(path, context.store.get(context.project_id, path))
