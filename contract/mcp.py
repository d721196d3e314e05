"""POST /mcp: the JSON-RPC 2.0 messages of the Model Context Protocol, as far as the contract says."""

from typing import Any, Literal

from pydantic import ConfigDict

from reactstep.contract.common import WireModel, nulls_left_out


class JsonRpcError(WireModel):
    """A JSON-RPC error object."""

    code: int
    message: str


# What makes a message one the MCP SDK reads: a request or notification (a method), a response (an
# id and a result) or an error; anyOf, not oneOf, as the SDK reads extra keys beside them.
MESSAGE_KINDS = [
    {"required": ["method"], "properties": {"method": {"type": "string"}}},
    {"required": ["id", "result"], "properties": {"id": {"type": ["string", "integer"]}}},
    {"required": ["error"]},
]


def _message_schema(schema: dict[str, Any]) -> None:
    """Keys left out when absent; `id` alone may be null (a response to a request it could not read)."""
    nulls_left_out(schema)
    schema["properties"]["id"] = {"type": ["string", "integer", "null"]}
    schema["anyOf"] = MESSAGE_KINDS


class JsonRpcMessage(WireModel):
    """A JSON-RPC 2.0 request, notification or response, as MCP uses them."""

    model_config = ConfigDict(extra="allow", json_schema_extra=_message_schema)

    jsonrpc: Literal["2.0"]
    id: str | int | None = None
    method: str | None = None
    params: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    error: JsonRpcError | None = None
