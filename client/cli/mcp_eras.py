"""What the `reactstep mcp` relay adds to a message for the server, by the revision the IDE speaks.

2026-07-28 IDE          the message names its revision in params._meta: the same POST with the
                        MCP-Protocol-Version, Mcp-Method and Mcp-Name headers that revision asks for
2025 IDE, elicitation   after initialize, each request goes up as 2026-07-28 (the IDE's capability
                        in _meta): an input_required answer becomes elicitation/create requests to
                        the IDE, their answers go back with requestState, and only the final
                        result, without the 2026 fields, reaches the IDE; so a write asks the person
2025 IDE, neither       as it came, with the version initialize agreed (the approval_token flow)
"""

import base64
import re
from typing import Any

MODERN = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # -> Mcp-Name
MODERN_ONLY = ("resultType", "ttlMs", "cacheScope")  # result fields a 2025 IDE does not know
ASKING: dict[str, Any] = {"elicitation": {"form": {}}}
HEADER_SAFE = re.compile(r"[\x20-\x7e]*")
INPUT_ROUNDS = 4  # input_required rounds before the relay gives up on a call


def modern_version(message: dict[str, Any]) -> str | None:
    """The revision a 2026-07-28 client names in the message's _meta; None for a 2025 one."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def modern_headers(message: dict[str, Any], version: str) -> dict[str, str]:
    """The routing headers of a 2026-07-28 POST: its version, method and (for a named call) name."""
    method = str(message.get("method", ""))
    headers = {"mcp-protocol-version": version, "mcp-method": method}
    named = NAMED_BY.get(method)
    params = message.get("params") or {}
    if named is not None and isinstance(params.get(named), str):
        headers["mcp-name"] = header_value(params[named])
    return headers


def header_value(text: str) -> str:
    """A header's text, base64 in the revision's =?base64?...?= form when not plain visible ASCII."""
    if HEADER_SAFE.fullmatch(text) and text == text.strip():
        return text
    return f"=?base64?{base64.b64encode(text.encode()).decode()}?="


def declares_elicitation(initialize: dict[str, Any]) -> bool:
    """Whether a 2025 IDE's initialize says it can ask the person (form elicitation)."""
    capabilities = (initialize.get("params") or {}).get("capabilities") or {}
    elicitation = capabilities.get("elicitation")
    return isinstance(elicitation, dict) and ("form" in elicitation or "url" not in elicitation)


def upgraded(message: dict[str, Any]) -> dict[str, Any]:
    """A 2025 IDE's request as 2026-07-28, declaring the elicitation the IDE offers."""
    params = dict(message.get("params") or {})
    params["_meta"] = {**(params.get("_meta") or {}), VERSION_KEY: MODERN, CAPABILITIES_KEY: ASKING}
    return {**message, "params": params}


def retried(message: dict[str, Any], answers: dict[str, Any], state: str | None) -> dict[str, Any]:
    """The request again, carrying the person's answers and the server's requestState."""
    params = {**message["params"], "inputResponses": answers}
    if state is not None:
        params["requestState"] = state
    return {**message, "params": params}


def input_requests(answer: dict[str, Any]) -> dict[str, Any] | None:
    """An input_required answer's requests (key -> {method, params}); None for a final answer."""
    result = answer.get("result")
    if not isinstance(result, dict) or result.get("resultType") != "input_required":
        return None
    requests = result.get("inputRequests") or {}
    return requests if isinstance(requests, dict) else {}


def request_state(answer: dict[str, Any]) -> str | None:
    """The requestState of an input_required answer."""
    state = answer["result"].get("requestState")
    return state if isinstance(state, str) else None


def as_2025(answer: dict[str, Any]) -> dict[str, Any]:
    """A final answer without the fields only 2026-07-28 has."""
    result = answer.get("result")
    if not isinstance(result, dict):
        return answer
    return {**answer, "result": {key: value for key, value in result.items() if key not in MODERN_ONLY}}
