"""execute_action from the event loop: where each call runs.

a one-file read, local store     on the loop (microseconds of disk)
everything else                  on a worker thread (an S3 read waits there for the bucket)
"""

from reactstep.contract.actions import ExecuteActionRequest, ExecuteActionResponse
from reactstep.service.runtime import Runtime
from reactstep.service.worker_threads import on_worker
from reactstep.service.workspace.actions import run_execute_action, runs_on_loop
from reactstep.tools.writes.approval import Approvals


async def execute_action(
    request: ExecuteActionRequest, runtime: Runtime, approvals: Approvals | None = None
) -> ExecuteActionResponse:
    """Run one tool call for the REST endpoint and the MCP server alike (the tool looked up once);
    `approvals` as run_execute_action takes them."""
    spec = runtime.registry.get(request.tool_name)
    if runs_on_loop(spec, runtime):
        return run_execute_action(request, spec, runtime, approvals)
    return await on_worker(run_execute_action, request, spec, runtime, approvals)
