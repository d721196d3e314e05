"""Keep search current as a change is made: the files an approved write or a save (PUT or DELETE of
a file) changed are re-indexed before the answer goes out, so code_search, find_definition and
find_importers never miss them.

    changes ─► project never indexed, or indexed with another model ─► nothing (POST .../index)
            ─► index_paths(the changed paths) ─► mark_indexed(last version, since the one before)
            ─► the model or a back-end failed ─► the change stays made; the answer says why the
               index is stale (the next POST .../index repairs it)
"""

import logging

from reactstep.contract.common import EmbeddingModelConfig, UserApiKeys
from reactstep.service.errors import ServiceError
from reactstep.service.llm.embedding_config import resolve_embedder
from reactstep.service.runtime import Runtime
from reactstep.service.workspace.index_metrics import measured_index_run
from reactstep.tools.index.incremental import index_paths
from reactstep.tools.projects.journal import Change
from reactstep.tools.ranking.retrieval import collection_name
from reactstep.tools.store.paths import ProjectPath

logger = logging.getLogger("reactstep.index")


def reindex_changes(
    project_id: str,
    changes: list[Change],
    runtime: Runtime,
    model: EmbeddingModelConfig | None = None,
    keys: UserApiKeys | None = None,
) -> str | None:
    """Re-index the changed files when the project has an index of this model; why not, on failure.

    None when the index is current with the changes or the project has no index to keep current.
    """
    if not changes:
        return None
    paths = sorted({change.path for change in changes})
    try:
        _reindex(project_id, changes, paths, runtime, model, keys or UserApiKeys())
    except ServiceError as exc:
        return exc.message
    except Exception as exc:  # the change is made either way; its index waits for the next run
        logger.error("re-indexing %s of %s failed", ", ".join(paths), project_id, exc_info=exc)
        return f"{type(exc).__name__} (see the server log)"
    return None


def saved_index_state(project_id: str, changes: list[Change], runtime: Runtime) -> str | None:
    """Re-index what a PUT or DELETE changed; the project's index state after it (None: unknown)."""
    failure = reindex_changes(project_id, changes, runtime)
    if failure is not None:
        logger.warning("the search index of %s is stale after a save: %s", project_id, failure)
    try:
        return runtime.projects.head(project_id).index_state
    except ServiceError:  # the file is stored; a failed look at the head must not say otherwise
        return None


def _reindex(
    project_id: str,
    changes: list[Change],
    paths: list[ProjectPath],
    runtime: Runtime,
    model: EmbeddingModelConfig | None,
    keys: UserApiKeys,
) -> None:
    head = runtime.projects.head(project_id)
    if head.indexed_at is None:
        return  # never indexed: code_search says so, and the first run indexes everything
    embedder = resolve_embedder(model, keys, runtime.settings, runtime.embedder)
    collection = collection_name(embedder)
    if head.indexed_collection not in (None, collection):
        return  # indexed with another model: this one's points are not the project's index
    vectors = runtime.vectors.get()
    if collection not in vectors.collections():
        return
    with measured_index_run(runtime, "write") as job:
        job.report = index_paths(
            project_id,
            runtime.store,
            vectors,
            embedder,
            paths,
            max_file_bytes=runtime.settings.file_max_bytes,
        )
    # Current up to these changes only if it was current up to the version before them.
    runtime.projects.mark_indexed(project_id, changes[-1].version, collection, since=changes[0].version - 1)
