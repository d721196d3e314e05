"""execute_action's core: run one server tool for the authorised project and time it."""

import time

from service.errors import StorageUnavailable
from service.schemas import ExecuteActionRequest, ExecuteActionResponse
from tools.errors import StoreUnavailable
from tools.registry import ToolContext, ToolLimits, ToolRegistry
from tools.storage import ObjectStore


def run_execute_action(
    request: ExecuteActionRequest, registry: ToolRegistry, store: ObjectStore, limits: ToolLimits
) -> ExecuteActionResponse:
    """Execute the named tool; tool failures come back as error observations."""
    started = time.perf_counter()
    context = ToolContext(project_id=request.project_id, store=store, limits=limits)
    try:
        observation = registry.execute(request.tool_name, request.tool_args, context)
    except StoreUnavailable as exc:
        raise StorageUnavailable(f"object storage is unavailable: {exc}") from exc
    elapsed_ms = (time.perf_counter() - started) * 1000
    return ExecuteActionResponse(
        session_id=request.session_id,
        tool_name=request.tool_name,
        observation=observation.text,
        is_error=observation.is_error,
        execution_time_ms=round(elapsed_ms, 3),
    )
