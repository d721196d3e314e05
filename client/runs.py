"""`client.run(query, project=..., ...)`: the options of the reference loop, and the loop with its
trace, as one operation either client runs.

every step's usage.cost_usd ─► summed into the result's cost_usd (traces/format.py's CostSum)
trace=path ─► GET the project (its version goes into the trace's session line: traces/pinning.py)
          ─► every call of the loop appended to the file as it happens (traces/format.py's format, which
             `reactstep replay` reads)
"""

import uuid
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, Required, TypedDict, Unpack

from pydantic import BaseModel

from reactstep.client.agent.loop import (
    Approver,
    Listener,
    LocalSide,
    Question,
    RunResult,
    ThoughtSink,
    ToolRunner,
    refuse,
    run_loop,
)
from reactstep.client.api import operations
from reactstep.client.api.calls import Op
from reactstep.client.traces.format import CostSum, TraceRecorder


class RunOptions(TypedDict, total=False):
    """What `run` takes besides the question."""

    project: Required[str]  # the project id the server's tools work on
    tools: Sequence[BaseModel | Mapping[str, Any]]  # client tools (ClientTool), run by on_action
    on_action: ToolRunner | None  # (tool_name, tool_args) -> a text, or {observation, is_error}
    approve: Approver | None  # (ApprovalRequest) -> apply the write? Absent: every write is refused
    max_steps: int | None  # react_step calls at most, beyond the last (default 10)
    trace: str | PathLike[str] | None  # write the run's trace here (JSON lines; `reactstep replay` reads it)
    llm: BaseModel | Mapping[str, Any] | None  # LLMConfig: model, temperature, tool_calling, ...
    llm_key: str | None  # a key lent for the LLM call (user_api_keys.llmKey); never written to the trace
    stream: bool  # steps as event streams; thought deltas to on_thought
    on_thought: ThoughtSink | None
    on_step: Listener | None  # (kind, request, response) of each call, as the trace records it
    session_id: str | None  # default: a new UUID
    history: Sequence[Mapping[str, Any]]  # earlier turns ({role, content}) and steps, sent before this run's


def run(query: str, **options: Unpack[RunOptions]) -> Op[RunResult]:
    """The reference loop for one question, its trace written when asked."""
    if unknown := sorted(set(options) - set(RunOptions.__annotations__)):
        # A misspelt option (aprove=...) would otherwise be dropped, refusing every write in silence.
        raise TypeError(f"run() got unknown options {unknown}; it takes {sorted(RunOptions.__annotations__)}")
    question = Question(
        project_id=options["project"],
        session_id=options.get("session_id") or str(uuid.uuid4()),
        user_query=query,
        max_iterations=_or_default(options.get("max_steps"), 10),
        earlier=[dict(item) for item in options.get("history", ())],
        llm_config={key: value for key, value in _body(options.get("llm")).items() if value is not None},
        llm_key=options.get("llm_key"),
        stream=options.get("stream") or False,
        client_tools=[operations.body_of(tool) for tool in options.get("tools", ())],
    )
    on_step = options.get("on_step")
    cost = CostSum()
    local = LocalSide(
        run_tool=options.get("on_action"),
        approve=options.get("approve") or refuse,
        listeners=[cost] if on_step is None else [cost, on_step],
        on_thought=options.get("on_thought"),
    )
    trace = options.get("trace")
    if trace is None:
        result = yield from run_loop(question, local)
    else:
        version = (yield from operations.describe_project(question.project_id)).version
        question.include_llm_request = True  # the trace keeps what the LLM was asked, for replay's diffs
        with Path(trace).open("w") as stream:
            local.listeners.append(TraceRecorder(stream, question, version))
            result = yield from run_loop(question, local)
    result.cost_usd = cost.total_usd()
    return result


def _or_default(value: int | None, default: int) -> int:
    return default if value is None else value


def _body(value: BaseModel | Mapping[str, Any] | None) -> dict[str, Any]:
    return {} if value is None else operations.body_of(value)
