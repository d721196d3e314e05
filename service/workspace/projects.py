"""A project's life over HTTP: create, describe, delete, and the 404 every other route answers first.

A project exists once PUT /api/projects/{id} created it (or, for projects stored before versions
existed, once it has files). Its head in the store carries the version, the indexed version and
any index job at work; the files, the search index and the symbol index sit beside it.
"""

from reactstep.contract.projects import ProjectReport
from reactstep.service.runtime import Runtime
from reactstep.service.worker_threads import on_worker
from reactstep.tools.projects.journal import ProjectHead
from reactstep.tools.ranking.retrieval import collection_name


def require_project(project_id: str, runtime: Runtime) -> ProjectHead:
    """The project's head, or 404 project_not_found (before any LLM call or tool run)."""
    return runtime.projects.head(project_id)


async def require_project_from_loop(project_id: str, runtime: Runtime) -> ProjectHead:
    """require_project for an endpoint: a local store answers in microseconds, on the event loop; a
    remote one on a worker thread."""
    if runtime.store.local:
        return require_project(project_id, runtime)
    return await on_worker(require_project, project_id, runtime)


def create_project(project_id: str, runtime: Runtime) -> tuple[ProjectReport, bool]:
    """Create the project if it is new (idempotent); its report and whether it was created now."""
    created = runtime.projects.create(project_id)
    return describe_project(project_id, runtime), created


def describe_project(project_id: str, runtime: Runtime) -> ProjectReport:
    """Files, bytes and indexed chunks of the project, with its versions and index state."""
    head = require_project(project_id, runtime)
    listed = list(runtime.store.list(project_id))
    chunks = _chunk_count(project_id, runtime)
    return ProjectReport(
        project_id=project_id,
        files=len(listed),
        bytes=sum(info.size for info in listed),
        chunks=chunks,
        version=head.version,
        indexed_version=head.indexed_version,
        index_state=head.index_state,
        indexing=head.indexing,
        created=head.created,
    )


def delete_project(project_id: str, runtime: Runtime) -> None:
    """Remove the project's files, journal, symbol index, overview and search points."""
    require_project(project_id, runtime)
    vectors = runtime.vectors.get()
    for collection in vectors.collections():
        points = vectors.project_points(collection, project_id)
        if points:
            vectors.delete(collection, list(points))
    runtime.projects.delete(project_id)


def _chunk_count(project_id: str, runtime: Runtime) -> int:
    """Chunks the default embedding model's collection holds for the project (0 if never indexed)."""
    vectors = runtime.vectors.get()
    collection = collection_name(runtime.embedder)
    return vectors.count(collection, project_id) if collection in vectors.collections() else 0
