"""Index runs at work: which ones this process runs, which ones died with their server, and stopping
one (DELETE /api/projects/{id}/index) from any replica.

    DELETE ─► no run in the head ─► 200 {stopped: false}
           ─► a run whose heartbeat stopped (its server died) ─► cleared (never restarted) ─► 200
           ─► a run at work ─► `stopping: true` in the head's job (compare-and-swap), and the runs of
              this process told at once ─► the run ends at its next step (a file planned, an
              embedding window written): IndexStopped ─► the head's job cleared ─► 200 {stopped: true}
              a run on another replica reads the flag with its next heartbeat (indexing.py, each second)
              still at work after STOP_WAIT_S ─► 202 with the job (it is stopping)

A stopped run leaves the index as a crash would, only sooner: `indexed_version` stays where the last
complete run put it (the project reads stale), points already written are kept, and the next run
re-plans every file they belong to (points carry their file's etag and chunk count), so it completes
the index without embedding again what the stopped run wrote.
"""

import threading
import time
from typing import Any

from reactstep.contract.indexing import IndexAccepted, IndexStop
from reactstep.service.errors import IndexStopped
from reactstep.service.runtime import Runtime
from reactstep.service.workspace.projects import require_project

STOP_WAIT_S = 30.0  # a DELETE waits this long for the run to end, then answers 202
STOP_POLL_S = 0.1


class StopSwitch:
    """One run's stop: asked here (DELETE on this replica) or read from the head (another replica)."""

    def __init__(self, project_id: str) -> None:
        self.project_id = project_id
        self._asked = threading.Event()

    def ask(self) -> None:
        """Stop the run at its next step."""
        self._asked.set()

    def check(self) -> None:
        """IndexStopped when the run was asked to stop (the run calls this at each step)."""
        if self._asked.is_set():
            raise IndexStopped(
                f"the index run of {self.project_id!r} was stopped (DELETE /api/projects/"
                f"{self.project_id}/index); POST /api/projects/{self.project_id}/index completes it"
            )


_running: dict[str, list[StopSwitch]] = {}  # runs this process works on, by project
_running_lock = threading.Lock()


def begin_run(switch: StopSwitch) -> None:
    """A run of this process begins: never judged abandoned while it works; stoppable here."""
    with _running_lock:
        _running.setdefault(switch.project_id, []).append(switch)


def end_run(switch: StopSwitch) -> None:
    """The run is over, whichever way it ended."""
    with _running_lock:
        runs = _running[switch.project_id]
        runs.remove(switch)
        if not runs:
            del _running[switch.project_id]


def abandoned(project_id: str, job: dict[str, Any], runtime: Runtime) -> bool:
    """Whether a job's heartbeat stopped: no process runs it any more (this one does not)."""
    with _running_lock:
        if project_id in _running:
            return False
    silent = time.time() - float(job.get("updated", 0.0))
    return silent > runtime.settings.index_abandoned_after_s


def stop_index_run(
    project_id: str, runtime: Runtime, wait_s: float = STOP_WAIT_S
) -> tuple[int, IndexStop | IndexAccepted]:
    """DELETE /api/projects/{id}/index: stop the run at work and wait up to `wait_s` for it to end."""
    head = require_project(project_id, runtime)
    job = head.indexing
    if job is None:
        return 200, _stopped(project_id, runtime, stopped=False)
    if abandoned(project_id, job, runtime):
        runtime.projects.update_indexing(project_id, lambda current: None)
        return 200, _stopped(project_id, runtime, stopped=True)
    runtime.projects.update_indexing(project_id, lambda current: current and {**current, "stopping": True})
    with _running_lock:
        for switch in _running.get(project_id, ()):
            switch.ask()
    deadline = time.monotonic() + wait_s
    while (now := runtime.projects.head(project_id).indexing) is not None and now.get("stopping"):
        if time.monotonic() > deadline:
            return 202, IndexAccepted(project_id=project_id, indexing=now)
        time.sleep(STOP_POLL_S)
    return 200, _stopped(project_id, runtime, stopped=True)


def _stopped(project_id: str, runtime: Runtime, *, stopped: bool) -> IndexStop:
    head = runtime.projects.head(project_id)
    version, state = head.indexed_version, head.index_state
    return IndexStop(project_id=project_id, stopped=stopped, indexed_version=version, index_state=state)
