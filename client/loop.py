"""The reference thin client: drives the ReAct loop over HTTP, one step and one tool call at a time.

react_step -> final_answer | max_iterations_reached | loop_detected  -> done
           -> format_error | truncated_output -> append {raw_output, format_error}, step again
           -> action_proposed  -> execute_action (server) or run_tool (executor "client")
                                  -> append {thought, action_details, observation, is_error}
A server write answers its first execute_action with `approval` {required, token, diff} and writes
nothing: `approve` decides; yes repeats the call with `approval_token` (that answer's observation goes
into the history), no makes the observation REJECTED. Listeners see each call, and the decision as an
`approval` event. With `stream`, react_step answers as Server-Sent Events: thought deltas go to
`on_thought` as they arrive, and the terminal `result` event is the step's response.
"""

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

Event = dict[str, Any]
Listener = Callable[[str, dict[str, Any], dict[str, Any]], None]
ThoughtSink = Callable[[str], None]
EventSink = Callable[[str, dict[str, Any]], None]  # (event name, data) of each event before `result`
ToolRunner = Callable[[str, dict[str, Any]], dict[str, Any]]  # (tool_name, tool_args) -> observation
Approver = Callable[[dict[str, Any]], bool]  # {tool_name, tool_args, diff} -> apply it?
REJECTED = "The user rejected this change; nothing was written."
ENDING_STATUSES = ("final_answer", "max_iterations_reached", "loop_detected")
RETRY_STATUSES = ("format_error", "truncated_output")


class ClientError(Exception):
    """The server answered with an error body, or could not be reached."""


class ApiError(ClientError):
    """The server answered with an error body: its HTTP status and error code are kept."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code


@dataclass
class AgentClient:
    """HTTP calls to a reactstep server."""

    server_url: str
    api_key: str | None = field(default=None, repr=False)  # a service key: sent, never shown
    timeout_s: float = 300.0

    @property
    def headers(self) -> dict[str, str]:
        """The Authorization header when the client has a service key."""
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST JSON; return the JSON answer or raise ClientError with the server's error."""
        try:
            response = httpx.post(
                self.server_url + path, json=body, headers=self.headers, timeout=self.timeout_s
            )
        except httpx.HTTPError as exc:
            raise ClientError(f"cannot reach {self.server_url}: {exc}") from exc
        payload: dict[str, Any] = response.json()
        if response.status_code >= 400:
            raise api_error(response.status_code, payload)
        return payload

    def post_events(self, path: str, body: dict[str, Any], on_event: EventSink) -> dict[str, Any]:
        """POST JSON, read the Server-Sent Events (each before `result` to on_event); the result's data."""
        try:
            with httpx.stream(
                "POST", self.server_url + path, json=body, headers=self.headers, timeout=self.timeout_s
            ) as response:
                if response.status_code >= 400:
                    raise api_error(response.status_code, json.loads(response.read()))
                return read_events(response.iter_lines(), on_event)
        except httpx.HTTPError as exc:
            raise ClientError(f"the stream from {self.server_url} failed: {exc}") from exc


def api_error(status: int, payload: Any) -> ApiError:
    """The ApiError for an error answer (`{error: {code, message}}`, or whatever else came)."""
    error = payload.get("error", {}) if isinstance(payload, dict) else {}
    error = error if isinstance(error, dict) else {}
    return ApiError(status, str(error.get("code")), str(error.get("message")))


def read_events(lines: Iterator[str], on_event: EventSink) -> dict[str, Any]:
    """Events to on_event until `result`: its data, or ClientError for an `error` event or a cut stream."""
    name, data = "", ""
    for line in lines:
        if line.startswith("event:"):
            name = line.removeprefix("event:").strip()
        elif line.startswith("data:"):
            data += line.removeprefix("data:").strip()
        elif not line and name:
            payload: dict[str, Any] = json.loads(data)
            if name == "result":
                return payload
            if name == "error":
                error = payload.get("error", {})
                raise ClientError(f"error event {error.get('code')}: {error.get('message')}")
            on_event(name, payload)
            name, data = "", ""
    raise ClientError("the event stream ended without a result")


@dataclass
class Question:
    """One question for the loop, and how to ask it."""

    project_id: str
    session_id: str
    user_query: str
    max_iterations: int = 10
    llm_config: dict[str, Any] = field(default_factory=dict)
    llm_key: str | None = None
    stream: bool = False
    client_tools: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Outcome:
    """How the loop ended."""

    status: str
    final_answer: str | None
    steps: int


def refuse(call: dict[str, Any]) -> bool:
    """The approver of a client nobody can ask: every change is refused."""
    return False


@dataclass
class LocalSide:
    """What the client does itself: run its declared tools, and decide on approvals."""

    run_tool: ToolRunner | None = None
    approve: Approver = refuse


def run_loop(
    client: AgentClient,
    question: Question,
    listener: Listener,
    on_thought: ThoughtSink | None = None,
    local: LocalSide | None = None,
) -> Outcome:
    """Drive the loop until a final answer, a loop, or the iteration budget runs out."""
    local = local or LocalSide()
    history: list[dict[str, Any]] = []
    for step in range(question.max_iterations + 1):
        request = _step_request(question, history, question.max_iterations - step)
        if question.stream:
            reply = client.post_events("/api/agent/react_step", request, _thoughts_to(on_thought))
        else:
            reply = client.post("/api/agent/react_step", request)
        listener("react_step", request, reply)
        status = reply["status"]
        if status in ENDING_STATUSES:
            return Outcome(status, reply.get("final_answer"), step + 1)
        if status in RETRY_STATUSES:
            history.append({"raw_output": reply["raw_output"], "format_error": reply["format_error"]})
            continue
        history.append(_run_action(client, question, reply, listener, local))
    return Outcome("max_iterations_reached", None, question.max_iterations + 1)


def _step_request(question: Question, history: list[dict[str, Any]], left: int) -> dict[str, Any]:
    request: dict[str, Any] = {
        "project_id": question.project_id,
        "session_id": question.session_id,
        "user_query": question.user_query,
        "conversation_history": list(history),
        "llm_config": question.llm_config,
        "max_iterations_left": left,
    }
    if question.llm_key:
        request["user_api_keys"] = {"llmKey": question.llm_key}
    if question.stream:
        request["stream"] = True
    if question.client_tools:
        request["client_tools"] = question.client_tools
    return request


def _thoughts_to(on_thought: ThoughtSink | None) -> EventSink:
    """An event sink passing each `thought` event's delta to on_thought (others are dropped)."""

    def on_event(name: str, payload: dict[str, Any]) -> None:
        if name == "thought" and on_thought is not None:
            on_thought(payload["delta"])

    return on_event


def _run_action(
    client: AgentClient, question: Question, reply: dict[str, Any], listener: Listener, local: LocalSide
) -> dict[str, Any]:
    action = reply["action_details"]
    if action.get("executor") == "client":
        observation = _run_client_tool(action, listener, local.run_tool)
    else:
        observation = _run_server_tool(client, question, action, listener, local.approve)
    return {
        "thought": reply.get("thought", ""),
        "action_details": action,
        "observation": observation["observation"],
        "is_error": observation["is_error"],
    }


def _run_client_tool(
    action: dict[str, Any], listener: Listener, run_tool: ToolRunner | None
) -> dict[str, Any]:
    call = {"tool_name": action["tool_name"], "tool_args": action["tool_args"]}
    if run_tool is None:
        message = f"Error: this client has no tool {call['tool_name']!r}"
        observation: dict[str, Any] = {"observation": message, "is_error": True}
    else:
        observation = run_tool(call["tool_name"], call["tool_args"])
    listener("client_action", call, observation)
    return observation


def _run_server_tool(
    client: AgentClient, question: Question, action: dict[str, Any], listener: Listener, approve: Approver
) -> dict[str, Any]:
    request = {
        "project_id": question.project_id,
        "session_id": question.session_id,
        "tool_name": action["tool_name"],
        "tool_args": action["tool_args"],
    }
    observation = client.post("/api/agent/execute_action", request)
    listener("execute_action", request, observation)
    approval = observation.get("approval") or {}
    if not approval.get("required"):
        return observation
    call = {
        "tool_name": action["tool_name"],
        "tool_args": action["tool_args"],
        "diff": approval.get("diff", ""),
    }
    approved = approve(call)
    listener("approval", call, {"approved": approved})
    if not approved:
        return {"observation": REJECTED, "is_error": False}
    approved_request = {**request, "approval_token": approval.get("token")}
    observation = client.post("/api/agent/execute_action", approved_request)
    listener("execute_action", approved_request, observation)
    return observation
