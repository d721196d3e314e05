"""execute_action's core: run one server tool for the authorised project and time it.

Tools write through a JournaledStore, so an approved write bumps the project's version and appears in
its change feed with origin "tool"; the written file is then re-indexed before the answer goes out,
so the next code_search sees the new code.
"""

import time
from dataclasses import replace

from reactstep.contract.actions import Approval, ExecuteActionRequest, ExecuteActionResponse
from reactstep.service.llm.embedding_config import resolve_embedder
from reactstep.service.logs import context as logs
from reactstep.service.runtime import Runtime
from reactstep.service.workspace.projects import require_project
from reactstep.service.workspace.reindexing import reindex_changes
from reactstep.tools.projects.journal import Change
from reactstep.tools.projects.journaled import JournaledStore
from reactstep.tools.ranking.retrieval import CodeIndex
from reactstep.tools.registry import Observation, ToolContext, ToolSpec
from reactstep.tools.store.objects import ObjectStore
from reactstep.tools.writes.approval import Approvals, PendingApproval


def runs_on_loop(spec: ToolSpec | None, runtime: Runtime) -> bool:
    """Whether a call of `spec` is light enough for the event loop: one file read from local disk."""
    return spec is not None and spec.reads_one_file and runtime.store.local


def run_execute_action(
    request: ExecuteActionRequest,
    spec: ToolSpec | None,
    runtime: Runtime,
    approvals: Approvals | None = None,
) -> ExecuteActionResponse:
    """Execute the named tool (`spec`: the registry's entry for its name, looked up once by the caller;
    None for a name it does not know); tool failures come back as error observations. `approvals`:
    what signs and checks a write's token, when not the runtime's (MCP's tokens bound to a caller).

    A missing project is 404 project_not_found, never a tool's answer. A tool that reads one file
    shows the project exists by succeeding, so its project head is read only when it fails: one
    store request per read_file instead of two.
    """
    started = time.perf_counter()
    head = None if spec and spec.reads_one_file else require_project(request.project_id, runtime)
    store = JournaledStore(runtime.store, runtime.projects, "tool")
    if spec is None:
        observation = runtime.registry.unknown(request.tool_name)
    else:
        context = tool_context(request, spec, runtime, store, approvals or runtime.approvals)
        observation = spec.call(request.tool_args, context)
    if head is None and observation.is_error:
        require_project(request.project_id, runtime)
    if (
        store.changes and head is not None and head.indexed_at is not None
    ):  # never indexed: code_search says so
        observation = _reindexed(request, runtime, store.changes, observation)
    return _answer(request, spec, runtime, observation, started)


def _answer(
    request: ExecuteActionRequest,
    spec: ToolSpec | None,
    runtime: Runtime,
    observation: Observation,
    started: float,
) -> ExecuteActionResponse:
    """The response, the run measured from `started`."""
    elapsed_ms = (time.perf_counter() - started) * 1000
    _measure(request.tool_name if spec is not None else "unknown", elapsed_ms, observation.is_error, runtime)
    return ExecuteActionResponse(
        session_id=request.session_id,
        tool_name=request.tool_name,
        observation=observation.text,
        is_error=observation.is_error,
        execution_time_ms=round(elapsed_ms, 3),
        approval=_approval(observation.approval),
    )


def _measure(tool: str, elapsed_ms: float, is_error: bool, runtime: Runtime) -> None:
    """The run, into the metrics (by a registered tool's name only) and the request's log line."""
    runtime.metrics.tool_call(tool, elapsed_ms / 1000, is_error)
    logs.note(tool=tool, tool_ms=round(elapsed_ms, 3), is_error=is_error)


def tool_context(
    request: ExecuteActionRequest, spec: ToolSpec, runtime: Runtime, store: ObjectStore, approvals: Approvals
) -> ToolContext:
    """What the tool may touch; the search index is opened only for tools that use it."""
    index = None
    if spec.uses_index:
        embedder = resolve_embedder(
            request.embedding_model_config, request.user_api_keys, runtime.settings, runtime.embedder
        )
        index = CodeIndex(runtime.vectors.get(), embedder, runtime.retrieval)
    return ToolContext(
        request.project_id,
        store,
        runtime.limits,
        index,
        approvals=approvals,
        approval_token=request.approval_token,
    )


def _reindexed(
    request: ExecuteActionRequest,
    runtime: Runtime,
    changes: list[Change],
    observation: Observation,
) -> Observation:
    """Re-index the files the tool wrote (when the project has an index) before answering."""
    failure = reindex_changes(
        request.project_id, changes, runtime, request.embedding_model_config, request.user_api_keys
    )
    if failure is None:
        return observation
    paths = ", ".join(sorted({change.path for change in changes}))
    note = f"\n(The search index was not updated for {paths}: {failure}; POST /index.)"
    return replace(observation, text=observation.text + note)


def _approval(pending: PendingApproval | None) -> Approval | None:
    """The response's `approval` object for a write tool's preview."""
    if pending is None:
        return None
    return Approval(required=True, token=pending.token, diff=pending.diff, expires_at=pending.expires_at)
