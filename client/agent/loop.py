"""The reference loop of a thin client, written once as an operation (calls.py) both clients run.

react_step -> final_answer | max_iterations_reached | loop_detected  -> done
           -> format_error | truncated_output -> append {raw_output, format_error}, step again
           -> action_proposed  -> execute_action (server) or on_action (executor "client")
                                  -> append {thought, action_details, observation, is_error}
A server write answers its first execute_action with `approval` {required, token, diff} and writes
nothing: `approve` decides; yes repeats the call with `approval_token` (that answer's observation goes
into the history), no makes the observation REJECTED. The listener sees each call as (kind, request,
response) — `react_step`, `execute_action`, `client_action`, `approval`, and `step_error` for a
react_step answered with an error (status, code, message; then the error is raised): the trace's
records. With `stream`, thought deltas go to `on_thought` as they arrive. Every callback may be async with
AsyncClient (it is awaited). A run interrupted during a step (Ctrl-C, a cancelled task) has its request
closed, which the server takes as the step's cancellation (its model call is closed too); the listeners
hear it as a `step_error` with code client_closed_request, called there and then (the run is being torn
down: an async listener's coroutine is not awaited).
"""

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from reactstep.client.api import operations
from reactstep.client.api.calls import Op
from reactstep.client.api.errors import ApiError, BadResponse, ClientError, StreamError
from reactstep.client.api.wire import ActionDetails, ExecuteActionResponse, ReactStepResponse, wire_of

Listener = Callable[[str, dict[str, Any], dict[str, Any]], Any]
ThoughtSink = Callable[[str], Any]
# (tool_name, tool_args) -> the observation: its text, or {observation, is_error}
ToolRunner = Callable[[str, dict[str, Any]], Any]
REJECTED = "The user rejected this change; nothing was written."
ENDING_STATUSES = ("final_answer", "max_iterations_reached", "loop_detected")
RETRY_STATUSES = ("format_error", "truncated_output")


class ApprovalRequest(BaseModel):
    """A write a server tool proposes: what `approve` decides on."""

    model_config = ConfigDict(defer_build=True)  # built at the first approval, not at import

    tool_name: str
    tool_args: dict[str, Any]
    diff: str


Approver = Callable[[ApprovalRequest], Any]  # -> apply it? (a bool, or an awaitable of one)


def refuse(call: ApprovalRequest) -> bool:
    """The approver of a client nobody can ask: every change is refused."""
    return False


@dataclass
class Question:
    """One question for the loop, and how to ask it (a trace's session line holds it, but the key)."""

    project_id: str
    session_id: str
    user_query: str
    max_iterations: int = 10
    earlier: list[dict[str, Any]] = field(default_factory=list)  # earlier turns and steps, sent first
    llm_config: dict[str, Any] = field(default_factory=dict)
    llm_key: str | None = None
    stream: bool = False
    client_tools: list[dict[str, Any]] = field(default_factory=list)
    include_llm_request: bool = False  # each step answers with the text the LLM was asked (a trace's)
    # by step (0 first): the prompt_fit {elided, left_out} it pins, not counted (a replay: as recorded)
    prompt_fits: dict[int, dict[str, int]] = field(default_factory=dict)


@dataclass
class LocalSide:
    """What the client does itself: run its declared tools, decide on approvals, watch each call."""

    run_tool: ToolRunner | None = None
    approve: Approver = refuse
    listeners: list[Listener] = field(default_factory=list)  # each call, in order (printer, trace)
    on_thought: ThoughtSink | None = None


@dataclass
class RunResult:
    """How the loop ended: its status, the answer (final_answer only), the steps and the history."""

    status: str
    answer: str | None
    steps: int
    history: list[dict[str, Any]] = field(default_factory=list)
    cost_usd: float | None = None  # the steps' usage.cost_usd summed (runs.py); None: no step was priced


def run_loop(question: Question, local: LocalSide) -> Op[RunResult]:
    """Drive the loop until a final answer, a loop, or the iteration budget runs out."""
    history: list[dict[str, Any]] = []
    for step in range(question.max_iterations + 1):
        request = _step_request(question, history, step)
        try:
            if question.stream:
                reply = yield from operations.streamed_step(request, _thoughts_to(local.on_thought))
            else:
                reply = yield from operations.step(request)
        except ApiError as error:  # the run ends here; the listeners (a trace) hear how
            yield from _heard(local, "step_error", request, error_record(error))
            raise
        except GeneratorExit:  # interrupted mid-step: the client closed the request, and with it the op
            _heard_interrupted(local, request, question.stream)
            raise
        yield from _heard(local, "react_step", request, wire_of(reply))
        if reply.status in ENDING_STATUSES:
            return RunResult(reply.status, reply.final_answer, step + 1, history)
        if reply.status in RETRY_STATUSES:
            history.append({"raw_output": reply.raw_output or "", "format_error": reply.format_error or ""})
            continue
        if reply.action_details is None:
            raise BadResponse(f"a {reply.status} step without action_details")
        history.append((yield from _run_action(question, reply, reply.action_details, local)))
    return RunResult("max_iterations_reached", None, question.max_iterations + 1, history)


def error_record(error: ApiError) -> dict[str, Any]:
    """A react_step's error as a trace records it: {status, code, message, stream} (`stream`: an `error`
    event ended a stream begun with 200)."""
    return {
        "status": error.status,
        "code": error.code,
        "message": error.message,
        "stream": isinstance(error, StreamError),
    }


INTERRUPTED = "the run was interrupted during this step: its request was closed, and the server cancelled it"


def _heard_interrupted(local: LocalSide, request: dict[str, Any], stream: bool) -> None:
    """Tell the listeners (a trace) that the step under way was cancelled, as a step_error record."""
    record = {"status": 499, "code": "client_closed_request", "message": INTERRUPTED, "stream": stream}
    for listener in local.listeners:
        told = listener("step_error", request, record)
        if inspect.iscoroutine(told):
            told.close()  # nothing can await it now


def _step_request(question: Question, history: list[dict[str, Any]], step: int) -> dict[str, Any]:
    request: dict[str, Any] = {
        "project_id": question.project_id,
        "session_id": question.session_id,
        "user_query": question.user_query,
        "conversation_history": [*question.earlier, *history],
        "llm_config": question.llm_config,
        "max_iterations_left": question.max_iterations - step,
    }
    if question.llm_key:
        request["user_api_keys"] = {"llmKey": question.llm_key}
    if question.stream:
        request["stream"] = True
    if question.client_tools:
        request["client_tools"] = question.client_tools
    if question.include_llm_request:
        request["include_llm_request"] = True
    if (fit := question.prompt_fits.get(step)) is not None:
        request["prompt_fit"] = fit
    return request


def _thoughts_to(on_thought: ThoughtSink | None) -> Callable[[str, dict[str, Any]], Any]:
    """An event sink passing each `thought` event's delta to on_thought (others are dropped)."""

    def on_event(name: str, payload: dict[str, Any]) -> Any:
        if name == "thought" and on_thought is not None:
            return on_thought(payload["delta"])
        return None

    return on_event


def _heard(local: LocalSide, kind: str, request: dict[str, Any], response: dict[str, Any]) -> Op[None]:
    for listener in local.listeners:
        yield from operations.invoke(listener, kind, request, response)


def _run_action(
    question: Question, reply: ReactStepResponse, action: ActionDetails, local: LocalSide
) -> Op[dict[str, Any]]:
    if action.executor == "client":
        observation = yield from _run_client_tool(action, local)
    else:
        observation = yield from _run_server_tool(question, action, local)
    return {
        "thought": reply.thought,
        "action_details": wire_of(action),
        "observation": observation["observation"],
        "is_error": observation["is_error"],
    }


def _run_client_tool(action: ActionDetails, local: LocalSide) -> Op[dict[str, Any]]:
    call = {"tool_name": action.tool_name, "tool_args": action.tool_args}
    if local.run_tool is None:
        message = f"Error: this client has no tool {action.tool_name!r}"
        observation: dict[str, Any] = {"observation": message, "is_error": True}
    else:
        ran = yield from operations.invoke(local.run_tool, action.tool_name, action.tool_args)
        observation = observation_of(ran)
    yield from _heard(local, "client_action", call, observation)
    return observation


def observation_of(ran: Any) -> dict[str, Any]:
    """What a client tool returned, as {observation, is_error}: a text is a good observation."""
    if isinstance(ran, str):
        return {"observation": ran, "is_error": False}
    if isinstance(ran, dict) and isinstance(ran.get("observation"), str):
        return {**ran, "is_error": bool(ran.get("is_error", False))}
    raise ClientError(f"a client tool returned {type(ran).__name__}, not a text or {{observation, is_error}}")


def _run_server_tool(question: Question, action: ActionDetails, local: LocalSide) -> Op[dict[str, Any]]:
    request = {
        "project_id": question.project_id,
        "session_id": question.session_id,
        "tool_name": action.tool_name,
        "tool_args": action.tool_args,
    }
    answer: ExecuteActionResponse = yield from operations.execute(request)
    yield from _heard(local, "execute_action", request, wire_of(answer))
    if answer.approval is None or not answer.approval.required:
        return wire_of(answer)
    call = ApprovalRequest(tool_name=action.tool_name, tool_args=action.tool_args, diff=answer.approval.diff)
    approved = bool((yield from operations.invoke(local.approve, call)))
    yield from _heard(local, "approval", call.model_dump(), {"approved": approved})
    if not approved:
        return {"observation": REJECTED, "is_error": False}
    approved_request = {**request, "approval_token": answer.approval.token}
    answer = yield from operations.execute(approved_request)
    yield from _heard(local, "execute_action", approved_request, wire_of(answer))
    return wire_of(answer)
