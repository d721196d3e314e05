"""execute_action's core: run one server tool for the authorised project and time it."""

import time
from collections.abc import Iterator
from contextlib import contextmanager

from reactstep.service.errors import EmbeddingFailed, StorageUnavailable, VectorStoreUnavailable
from reactstep.service.llm.embedding_config import resolve_embedder
from reactstep.service.runtime import Runtime
from reactstep.service.schemas import Approval, ExecuteActionRequest, ExecuteActionResponse
from reactstep.tools.errors import StoreUnavailable
from reactstep.tools.registry import ToolContext
from reactstep.tools.vectors import store as vectors
from reactstep.tools.vectors.embeddings import EmbeddingError
from reactstep.tools.vectors.retrieval import CodeIndex
from reactstep.tools.writes.approval import PendingApproval


def run_execute_action(request: ExecuteActionRequest, runtime: Runtime) -> ExecuteActionResponse:
    """Execute the named tool; tool failures come back as error observations."""
    started = time.perf_counter()
    with translated_backend_errors():
        context = tool_context(request, runtime)
        observation = runtime.registry.execute(request.tool_name, request.tool_args, context)
    elapsed_ms = (time.perf_counter() - started) * 1000
    return ExecuteActionResponse(
        session_id=request.session_id,
        tool_name=request.tool_name,
        observation=observation.text,
        is_error=observation.is_error,
        execution_time_ms=round(elapsed_ms, 3),
        approval=_approval(observation.approval),
    )


def tool_context(request: ExecuteActionRequest, runtime: Runtime) -> ToolContext:
    """What the tool may touch; the search index is opened only for tools that use it."""
    spec = runtime.registry.get(request.tool_name)
    index = None
    if spec is not None and spec.uses_index:
        embedder = resolve_embedder(
            request.embedding_model_config, request.user_api_keys, runtime.settings, runtime.embedder
        )
        index = CodeIndex(runtime.vectors.get(), embedder, runtime.retrieval)
    return ToolContext(
        request.project_id,
        runtime.store,
        runtime.limits,
        index,
        approvals=runtime.approvals,
        approval_token=request.approval_token,
    )


def _approval(pending: PendingApproval | None) -> Approval | None:
    """The response's `approval` object for a write tool's preview."""
    if pending is None:
        return None
    return Approval(required=True, token=pending.token, diff=pending.diff, expires_at=pending.expires_at)


@contextmanager
def translated_backend_errors() -> Iterator[None]:
    """Back-end failures the model cannot fix become 502/503 errors with a code."""
    try:
        yield
    except StoreUnavailable as exc:
        raise StorageUnavailable(f"object storage is unavailable: {exc}") from exc
    except vectors.VectorStoreUnavailable as exc:
        raise VectorStoreUnavailable(f"the vector store is unavailable: {exc}") from exc
    except EmbeddingError as exc:
        raise EmbeddingFailed(f"the embedding model failed: {exc}") from exc
