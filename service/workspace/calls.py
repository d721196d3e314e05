"""execute_action from the event loop: where each call runs.

a one-file read of a local store     on the loop (microseconds of disk)
a one-file read of an S3 store       its GET awaited on the loop (s3_loop.LoopReads), the tool run
                                     on the loop over those bytes; when the GET gives anything else,
                                     or the tool answers with an error, on a worker thread as below
everything else                      on a worker thread
"""

import time

from reactstep.service.runtime import Runtime
from reactstep.service.schemas import ExecuteActionRequest, ExecuteActionResponse
from reactstep.service.worker_threads import on_worker
from reactstep.service.workspace.actions import run_execute_action, run_over_bytes, runs_on_loop


async def execute_action(request: ExecuteActionRequest, runtime: Runtime) -> ExecuteActionResponse:
    """Run one tool call for the REST endpoint and the MCP server alike."""
    if runs_on_loop(request, runtime):
        return run_execute_action(request, runtime)
    spec = runtime.registry.get(request.tool_name)
    reads = runtime.loop_reads
    path = request.tool_args.get(spec.file_arg) if spec and spec.file_arg and reads else None
    if reads is None or not isinstance(path, str):
        return await on_worker(run_execute_action, request, runtime)
    started = time.perf_counter()
    read = await reads.get(request.project_id, path)
    if isinstance(read, bytes):
        answer = run_over_bytes(request, runtime, path, read, started)
        if answer is not None:
            return answer
        return await on_worker(run_execute_action, request, runtime)
    return await on_worker(run_execute_action, request, runtime, read)
