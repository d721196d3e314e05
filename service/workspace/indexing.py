"""Index a project for code_search, find_definition, find_importers and project_overview: the core behind
POST /api/projects/{id}/index, `"index": true` on a sync, and `reactstep index`.

A run after the first one, with the same embedding model, re-indexes only the paths the project's
journal names since the version the index described, and any file changed behind the journal's
back (its etag is not the one its symbol index entry was parsed from); `"full": true` re-checks
every file against its points.
A run records itself in the project's head while it works (`indexing`: its phase, files and chunks
done of total, rewritten every second by a heartbeat thread, so GET /api/projects/{id} shows progress
from any replica) and, when it ends, moves `indexed_version` to the version it started from: changes
that land meanwhile keep the project stale. A job whose heartbeat stopped (its server was killed) is
abandoned: the next look at the project (GET, POST .../index) starts it again, so a project never
stays `indexing` for good. A run can be stopped (index_jobs.py): it ends at its next step with
IndexStopped, and the index stays consistent for the next run to complete.
"""

import logging
import threading
import time
import uuid
from typing import Any

from reactstep.contract.indexing import IndexRequest, IndexResponse
from reactstep.contract.projects import ProjectReport
from reactstep.service.errors import IndexStopped
from reactstep.service.llm.embedding_config import resolve_embedder
from reactstep.service.runtime import Runtime
from reactstep.service.workspace.index_jobs import StopSwitch, abandoned, begin_run, end_run
from reactstep.service.workspace.index_metrics import measured_index_run
from reactstep.service.workspace.projects import describe_project, require_project
from reactstep.tools.index.incremental import index_changes
from reactstep.tools.index.indexer import IndexReport, index_project
from reactstep.tools.index.progress import IndexProgress, Progress
from reactstep.tools.projects.journal import ProjectHead
from reactstep.tools.ranking.retrieval import collection_name
from reactstep.tools.store.paths import ProjectPath
from reactstep.tools.vector_store.store import VectorStore

# IndexReport fields the response carries as they are.
REPORTED = ("collection", "files", "chunks", "embedded", "reused", "removed", "skipped", "parsed", "symbols")
HEARTBEAT_S = 1.0  # the job's progress is written to the head (and passed on) this often
# More changed files than this since the last run: a whole run (one scroll beats many path lookups).
INCREMENTAL_MAX_CHANGES = 5_000
logger = logging.getLogger("reactstep.index")


def run_index(
    project_id: str, request: IndexRequest, runtime: Runtime, progress: Progress | None = None
) -> IndexResponse:
    """Bring the project's search index in line with its files in the store.

    When the index described an earlier version of the project with this model, only the paths the
    journal names since then are re-indexed, so the cost follows the change, not the project.
    """
    with measured_index_run(runtime, "run") as run:
        run.report = response = _run_index(project_id, request, runtime, progress)
    return response


def _run_index(
    project_id: str, request: IndexRequest, runtime: Runtime, progress: Progress | None
) -> IndexResponse:
    head = require_project(project_id, runtime)
    job = JobProgress(project_id, runtime, progress, request)
    embedder = resolve_embedder(
        request.embedding_model_config, request.user_api_keys, runtime.settings, runtime.embedder
    )
    vectors = runtime.vectors.get()
    collection = collection_name(embedder)
    named = None if request.full else changed_paths(project_id, head, collection, vectors, runtime)
    max_file_bytes = runtime.settings.file_max_bytes
    job.start()
    try:
        report = None
        if named is not None:
            report = index_changes(
                project_id,
                runtime.store,
                vectors,
                embedder,
                named,
                max_file_bytes=max_file_bytes,
                max_paths=INCREMENTAL_MAX_CHANGES,
                progress=job,
            )
        incremental = report is not None
        if report is None:
            report = index_project(
                project_id, runtime.store, vectors, embedder, max_file_bytes=max_file_bytes, progress=job
            )
    finally:
        job.finish()
    runtime.projects.mark_indexed(project_id, head.version, collection)
    return _response(project_id, report, head.version, incremental=incremental)


def changed_paths(
    project_id: str, head: ProjectHead, collection: str, vectors: VectorStore, runtime: Runtime
) -> list[ProjectPath] | None:
    """The paths the journal names since `collection` last described the project; None: a whole run."""
    behind = head.version - head.indexed_version
    if head.indexed_at is None or head.indexed_collection != collection or behind > INCREMENTAL_MAX_CHANGES:
        return None
    if collection not in vectors.collections():
        return None  # the vector store lost it (or was replaced): every file must be embedded again
    if behind <= 0:
        return []
    _, changes = runtime.projects.changes_since(project_id, head.indexed_version, limit=behind)
    return sorted({change.path for change in changes})


def start_index_job(project_id: str, request: IndexRequest, runtime: Runtime) -> dict[str, Any]:
    """Start the run in a background thread (unless one is at work) and return the job's state."""
    head = require_project(project_id, runtime)
    if head.indexing is not None and not abandoned(project_id, head.indexing, runtime):
        return head.indexing
    started = threading.Event()
    failure: list[BaseException] = []

    def work() -> None:
        try:
            run_index(project_id, request, runtime, progress=lambda _: started.set())
        except IndexStopped as stop:
            logger.info("background index run of %s stopped: %s", project_id, stop.message)
        except BaseException as exc:  # the client is gone; the head and the server log tell it
            logger.error("background index run of %s failed", project_id, exc_info=exc)
            failure.append(exc)
        finally:
            started.set()

    threading.Thread(target=work, name=f"index-{project_id}", daemon=True).start()
    started.wait(timeout=2.0)
    if failure:
        raise failure[0]
    now = runtime.projects.head(project_id)
    return now.indexing or {"state": "done", "indexed_version": now.indexed_version}


def describe_resuming(project_id: str, runtime: Runtime) -> ProjectReport:
    """GET /api/projects/{id}: the project's report; an abandoned index job is started again first."""
    report = describe_project(project_id, runtime)
    job = report.indexing
    if job is None or not abandoned(project_id, job, runtime):
        return report
    logger.warning("the index run of %s stopped with its server; starting it again", project_id)
    request = IndexRequest.model_validate(
        {"embedding_model_config": job.get("embedding_model_config"), "full": bool(job.get("full"))}
    )
    try:
        start_index_job(project_id, request, runtime)
    except Exception as exc:  # it cannot run again (its model needs keys, say): the project reads stale
        logger.error("restarting the index run of %s failed", project_id, exc_info=exc)
        runtime.projects.set_indexing(project_id, None)
    return describe_project(project_id, runtime)


class JobProgress:
    """The run's progress, kept in the project's head and passed on to `forward`.

    Each step goes to `forward` as it comes (scan, embed, write, done); a heartbeat thread writes the
    latest one to the head every HEARTBEAT_S and passes it on again, so both stay fresh while one
    long step (an embedding window, the last writes) is at work. A stop asked for the run (here, or
    on another replica: the heartbeat reads it from the head) ends it at its next step.
    """

    def __init__(
        self, project_id: str, runtime: Runtime, forward: Progress | None, request: IndexRequest
    ) -> None:
        self._project_id = project_id
        self._projects = runtime.projects
        self._forward = forward
        self._job = {
            "state": "running",
            "job_id": uuid.uuid4().hex,
            "started": time.time(),
            "embedding_model_config": _model_of(request),
            "full": request.full,
        }
        self._step = IndexProgress()
        self._passing = threading.Lock()  # one step at a time to `forward`, in the run's order
        self._stopped = threading.Event()
        self._heartbeat = threading.Thread(
            target=self._beat, name=f"index-heartbeat-{project_id}", daemon=True
        )
        self._switch = StopSwitch(project_id)

    def start(self) -> None:
        """Record the job as running, with nothing done yet, and start its heartbeat."""
        begin_run(self._switch)
        self._write()
        self._heartbeat.start()

    def __call__(self, step: IndexProgress) -> None:
        """The run reached `step`; IndexStopped when it was asked to stop."""
        self._switch.check()
        with self._passing:
            self._step = step
            if self._forward is not None:
                self._forward(step)

    def finish(self) -> None:
        """The job is over, whichever way it ended."""
        self._stopped.set()
        if self._heartbeat.is_alive():
            self._heartbeat.join()
        end_run(self._switch)
        self._projects.set_indexing(self._project_id, None)

    def _beat(self) -> None:
        while not self._stopped.wait(HEARTBEAT_S):
            try:
                with self._passing:
                    if self._forward is not None:
                        self._forward(self._step)
                self._write()
            except Exception as exc:  # the next beat tries again; the run goes on
                logger.warning("index heartbeat of %s failed: %s", self._project_id, exc)

    def _write(self) -> None:
        job = {**self._job, "updated": time.time(), **self._step.fields()}

        def written(current: dict[str, Any] | None) -> dict[str, Any]:
            if current is not None and current.get("job_id") == job["job_id"] and current.get("stopping"):
                self._switch.ask()  # asked on another replica; kept for the one that waits on it
                job["stopping"] = True
            return job

        self._projects.update_indexing(self._project_id, written)


def _model_of(request: IndexRequest) -> dict[str, Any] | None:
    """The run's model, to start it again after its server died (never the keys)."""
    config = request.embedding_model_config
    return None if config is None else config.model_dump(mode="json")


def _response(project_id: str, report: IndexReport, version: int, *, incremental: bool) -> IndexResponse:
    fields: dict[str, Any] = {name: getattr(report, name) for name in REPORTED}
    fields["noise"] = dict(sorted(report.noise.items()))
    return IndexResponse(
        project_id=project_id,
        seconds=round(report.seconds, 3),
        indexed_version=version,
        incremental=incremental,
        **fields,
    )
