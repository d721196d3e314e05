"""Index a project for code_search, find_definition, find_importers and project_overview: the core behind
POST /api/projects/{id}/index, `"index": true` on a sync, and `reactstep index`.

A run after the first one, with the same embedding model, re-indexes only the paths the project's
journal names since the version the index described, and any file changed behind the journal's
back (its etag is not the one its symbol index entry was parsed from); `"full": true` re-checks
every file against its points.
A run records itself in the project's head while it works (`indexing`: done/total, refreshed at most
once a second, so GET /api/projects/{id} shows progress from any replica) and, when it ends, moves
`indexed_version` to the version it started from: changes that land meanwhile keep the project stale.
"""

import logging
import threading
import time
from typing import Any

from pydantic import BaseModel, Field

from reactstep.service.llm.embedding_config import resolve_embedder
from reactstep.service.runtime import Runtime
from reactstep.service.schemas import EmbeddingModelConfig, StrictModel, UserApiKeys
from reactstep.service.workspace.failures import translated_backend_errors
from reactstep.service.workspace.index_metrics import measured_index_run
from reactstep.service.workspace.projects import require_project
from reactstep.tools.index.incremental import index_changes
from reactstep.tools.index.indexer import IndexReport, Progress, index_project
from reactstep.tools.projects.journal import ProjectHead
from reactstep.tools.vectors.retrieval import collection_name
from reactstep.tools.vectors.store import VectorStore

# IndexReport fields the response carries as they are.
REPORTED = ("collection", "files", "chunks", "embedded", "reused", "removed", "skipped", "parsed", "symbols")
PROGRESS_EVERY_S = 1.0
# More changed files than this since the last run: a whole run (one scroll beats many path lookups).
INCREMENTAL_MAX_CHANGES = 5_000
# A job whose progress was not refreshed for this long died with its process.
ABANDONED_AFTER_S = 60.0
logger = logging.getLogger("reactstep.index")


class IndexRequest(StrictModel):
    """POST /api/projects/{project_id}/index (the body may be empty)."""

    embedding_model_config: EmbeddingModelConfig | None = None
    user_api_keys: UserApiKeys = Field(default_factory=UserApiKeys)
    background: bool = False  # answer 202 at once; GET /api/projects/{id} shows the job
    stream: bool = False  # answer Server-Sent Events: progress, then the result
    full: bool = False  # re-check every file, not only those the journal names since the last run


class IndexResponse(BaseModel):
    """What one indexing run did."""

    project_id: str
    collection: str
    files: int
    chunks: int
    embedded: int
    reused: int
    removed: int
    skipped: int
    noise: dict[str, int] = {}  # files left out of search as vendored, generated, minified or data
    parsed: int
    symbols: int
    seconds: float
    indexed_version: int = 0
    incremental: bool = False  # only the files changed since the last run were looked at

    def summary(self) -> str:
        """The one line `reactstep index` always prints."""
        what = f"re-indexed {self.files} changed files" if self.incremental else f"indexed {self.files} files"
        return (
            f"{what}: {self.chunks} chunks, {self.embedded} embedded, "
            f"{self.reused} reused, {self.removed} removed, {self.skipped} skipped{self._noise_summary()}; "
            f"{self.parsed} parsed for {self.symbols} symbols in {self.seconds:.1f}s"
        )

    def _noise_summary(self) -> str:
        if not self.noise:
            return ""
        kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(self.noise.items()))
        return f", {sum(self.noise.values())} left out of search as noise ({kinds})"


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
    job = JobProgress(project_id, runtime, progress)
    with translated_backend_errors():
        embedder = resolve_embedder(
            request.embedding_model_config, request.user_api_keys, runtime.settings, runtime.embedder
        )
        vectors = runtime.vectors.get()
        collection = collection_name(embedder)
        named = None if request.full else changed_paths(project_id, head, collection, vectors, runtime)
        max_file_bytes = runtime.settings.index_max_file_bytes
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
) -> list[str] | None:
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
    if head.indexing is not None and not abandoned(head.indexing):
        return head.indexing
    started = threading.Event()
    failure: list[BaseException] = []

    def work() -> None:
        try:
            run_index(project_id, request, runtime, progress=lambda *_: started.set())
        except BaseException as exc:  # the client is gone; the head and the server log tell it
            logger.error("background index run of %s failed", project_id, exc_info=exc)
            failure.append(exc)
        finally:
            started.set()

    threading.Thread(target=work, name=f"index-{project_id}", daemon=True).start()
    started.wait(timeout=2.0)
    if failure:
        raise failure[0]
    with translated_backend_errors():
        now = runtime.projects.head(project_id)
    return now.indexing or {"state": "done", "indexed_version": now.indexed_version}


def abandoned(job: dict[str, Any]) -> bool:
    """Whether a job's progress has not been refreshed for too long: its process is gone."""
    return time.time() - float(job.get("updated", 0.0)) > ABANDONED_AFTER_S


class JobProgress:
    """The run's progress, kept in the project's head (throttled) and passed on to `forward`."""

    def __init__(self, project_id: str, runtime: Runtime, forward: Progress | None) -> None:
        self._project_id = project_id
        self._projects = runtime.projects
        self._forward = forward
        self._started = time.time()
        self._written = 0.0

    def start(self) -> None:
        """Record the job as running, with nothing done yet."""
        self._write(0, 0, "")

    def __call__(self, done: int, total: int, path: str) -> None:
        """One more file planned."""
        if self._forward is not None:
            self._forward(done, total, path)
        if time.monotonic() - self._written >= PROGRESS_EVERY_S or done == total:
            self._write(done, total, path)

    def finish(self) -> None:
        """The job is over, whichever way it ended."""
        self._projects.set_indexing(self._project_id, None)

    def _write(self, done: int, total: int, path: str) -> None:
        self._written = time.monotonic()
        job = {
            "state": "running",
            "started": self._started,
            "updated": time.time(),
            "done": done,
            "total": total,
            "path": path,
        }
        self._projects.set_indexing(self._project_id, job)


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
