"""The reference thin client: drives the ReAct loop over HTTP, one step and one tool call at a time.

react_step -> final_answer | max_iterations_reached   -> done
           -> format_error     -> append {raw_output, format_error}, step again
           -> action_proposed  -> execute_action (server) or a local tool (client)
                                  -> append {thought, action_details, observation, is_error}
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

Event = dict[str, Any]
Listener = Callable[[str, dict[str, Any], dict[str, Any]], None]


class ClientError(Exception):
    """The server answered with an error body, or could not be reached."""


@dataclass
class AgentClient:
    """HTTP calls to a reactstep server."""

    server_url: str
    timeout_s: float = 300.0

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST JSON; return the JSON answer or raise ClientError with the server's error."""
        try:
            response = httpx.post(self.server_url + path, json=body, timeout=self.timeout_s)
        except httpx.HTTPError as exc:
            raise ClientError(f"cannot reach {self.server_url}: {exc}") from exc
        payload: dict[str, Any] = response.json()
        if response.status_code >= 400:
            error = payload.get("error", {})
            raise ClientError(f"{response.status_code} {error.get('code')}: {error.get('message')}")
        return payload


@dataclass
class Question:
    """One question for the loop, and how to ask it."""

    project_id: str
    session_id: str
    user_query: str
    max_iterations: int = 10
    llm_config: dict[str, Any] = field(default_factory=dict)
    llm_key: str | None = None


@dataclass
class Outcome:
    """How the loop ended."""

    status: str
    final_answer: str | None
    steps: int


def run_loop(client: AgentClient, question: Question, listener: Listener) -> Outcome:
    """Drive the loop until a final answer or the iteration budget runs out."""
    history: list[dict[str, Any]] = []
    for step in range(question.max_iterations + 1):
        request = _step_request(question, history, question.max_iterations - step)
        reply = client.post("/api/agent/react_step", request)
        listener("react_step", request, reply)
        status = reply["status"]
        if status in ("final_answer", "max_iterations_reached"):
            return Outcome(status, reply.get("final_answer"), step + 1)
        if status == "format_error":
            history.append({"raw_output": reply["raw_output"], "format_error": reply["format_error"]})
            continue
        history.append(_run_action(client, question, reply, listener))
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
    return request


def _run_action(
    client: AgentClient, question: Question, reply: dict[str, Any], listener: Listener
) -> dict[str, Any]:
    action = reply["action_details"]
    if action.get("executor") == "client":
        call = {"tool_name": action["tool_name"], "tool_args": action["tool_args"]}
        message = f"Error: this client has no tool {call['tool_name']!r}"
        observation: dict[str, Any] = {"observation": message, "is_error": True}
        listener("client_action", call, observation)
    else:
        request = {
            "project_id": question.project_id,
            "session_id": question.session_id,
            "tool_name": action["tool_name"],
            "tool_args": action["tool_args"],
        }
        observation = client.post("/api/agent/execute_action", request)
        listener("execute_action", request, observation)
    return {
        "thought": reply.get("thought", ""),
        "action_details": action,
        "observation": observation["observation"],
        "is_error": observation["is_error"],
    }
