"""execute_action from the event loop: where each call runs.

a one-file read, local store     on the loop (microseconds of disk)
a one-file read, S3 store        its GET awaited on the loop (s3_loop.LoopReads), the tool run on
                                 the loop over those bytes (from a worker over LOOP_MAX_BYTES);
                                 when the GET gives anything else, or the tool answers with an
                                 error, on a worker thread as below
everything else                  on a worker thread
"""

import time

from reactstep.service.runtime import Runtime
from reactstep.service.schemas import ExecuteActionRequest, ExecuteActionResponse
from reactstep.service.worker_threads import on_worker
from reactstep.service.workspace.actions import run_execute_action, run_over_bytes, runs_on_loop

# A larger file is read on the loop but shown from a worker thread: read_file decodes and splits the
# whole file, ~1.8 ms a MiB on this VM, and the loop serves every other request meanwhile.
LOOP_MAX_BYTES = 1024 * 1024


async def execute_action(request: ExecuteActionRequest, runtime: Runtime) -> ExecuteActionResponse:
    """Run one tool call for the REST endpoint and the MCP server alike."""
    if runs_on_loop(request, runtime):
        return run_execute_action(request, runtime)
    spec = runtime.registry.get(request.tool_name)
    path = request.tool_args.get(spec.file_arg) if spec and spec.file_arg else None
    if runtime.loop_reads is None or not isinstance(path, str):
        return await on_worker(run_execute_action, request, runtime)
    started = time.perf_counter()
    read = await runtime.loop_reads.get(request.project_id, path)
    if isinstance(read, bytes):
        if len(read) <= LOOP_MAX_BYTES:
            answer = run_over_bytes(request, runtime, path, read, started)
        else:
            answer = await on_worker(run_over_bytes, request, runtime, path, read, started)
        if answer is not None:
            return answer
        return await on_worker(run_execute_action, request, runtime)
    return await on_worker(run_execute_action, request, runtime, read)
