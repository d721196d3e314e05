"""An indexing run, counted: its outcome (ok or the error code) and the chunks it embedded."""

import contextlib
from collections.abc import Iterator
from typing import Protocol

from reactstep.service.errors import ServiceError
from reactstep.service.runtime import Runtime


class _Embedded(Protocol):
    embedded: int


class IndexRun:
    """What the run reports, once it has (`report` stays None when it fails)."""

    report: _Embedded | None = None


@contextlib.contextmanager
def measured_index_run(runtime: Runtime, kind: str) -> Iterator[IndexRun]:
    """Count the run in the app's metrics; kind: run (POST index, sync, the CLI) or write (after a tool)."""
    run = IndexRun()
    outcome = "error"
    try:
        yield run
        outcome = "ok"
    except ServiceError as error:
        outcome = error.code
        raise
    finally:
        embedded = run.report.embedded if run.report is not None else 0
        runtime.metrics.index_job(kind, outcome, embedded)
