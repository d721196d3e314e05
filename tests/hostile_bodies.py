"""Bodies a hostile client sends to make one request stall a replica: each list and map of the contract
filled to the body size limit with its worst item. tests/service/http/test_stalls.py sends each to a real
`reactstep serve` while a poller times /healthz; bench/stalls.py prints the worst stall over all of them.

Each is built two ways: to just under `size` bytes (the server's REACTSTEP_MAX_BODY_BYTES), which passes
the size check and meets json_shape's counts; and as large as those counts allow, which reaches the
parser and the validator.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from reactstep.service.http.bodies import measure
from reactstep.service.limits import MAX_CONTAINERS, MAX_ITEMS

PROJECT = "stall"
STEP = {"project_id": PROJECT, "session_id": "s", "user_query": "q", "max_iterations_left": 3}
ACTION = {"project_id": PROJECT, "session_id": "s", "tool_name": "read_file"}
COMPLETED = {
    "thought": "t",
    "action_details": {
        "tool_name": "read_file",
        "tool_args": {"file_path": "a.py"},
        "raw_action_string": "x",
    },
    "observation": "o",
}


def deep(levels: int) -> Any:
    """An object nested `levels` deep: what makes a validator try every branch at every level."""
    value: Any = 0
    for _ in range(levels):
        value = {"a": [value]}
    return value


# The worst items of a list: a number (the cheapest to send, one error per union branch), an object of
# the wrong shape (errors for every missing field of every branch), an object nested deep, and an item
# one field short of valid (a near miss: its branch validates the rest).
WORST_ITEMS: dict[str, Any] = {
    "numbers": 0,
    "wrong objects": {"x": 1},
    "deep objects": deep(12),
    "near misses": {key: value for key, value in COMPLETED.items() if key != "observation"},
}


@dataclass(frozen=True)
class Hostile:
    """A body that grows one list or map of one endpoint with copies of its worst item."""

    name: str
    path: str
    template: Callable[[Any], Any]
    """The body around the list (given a list) or map (given a dict)."""
    item: Any
    within_bounds_status: int
    """The answer to the body within json_shape's counts (a model that answers, for a valid step)."""
    kind: Literal["list", "map"] = "list"
    key: str = "k{:07d}"
    """A map's keys, numbered (all as wide, so the body's size is known before it is made)."""

    def build(self, size: int, within_bounds: bool = False) -> bytes:
        """The body with as many copies as keep it under `size` bytes; within_bounds: and within the
        counts json_shape allows, so that it is parsed and validated rather than refused unparsed."""
        empty = len(json.dumps(self.template([] if self.kind == "list" else {})))
        one = (
            json.dumps(self.item)
            if self.kind == "list"
            else json.dumps({self.key.format(0): self.item})[1:-1]
        )
        count = max(1, (size - empty - 1024) // (len(one) + 2))  # and ", " between
        if within_bounds:  # an item's arrays and objects, and its items (a map entry's key is one more)
            shape = measure(json.dumps(self.item).encode())
            items = shape.items + (1 if self.kind == "list" else 2)
            count = min(count, (MAX_ITEMS - 100) // items)
            if shape.containers:
                count = min(count, (MAX_CONTAINERS - 100) // shape.containers)
        if self.kind == "list":
            return json.dumps(self.template([self.item] * count)).encode()
        return json.dumps(
            self.template({self.key.format(number): self.item for number in range(count)})
        ).encode()


def _tool(parameters: Any) -> dict[str, Any]:
    return {"name": "t", "parameters": parameters}


def _mcp_call(arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "read_file", "arguments": arguments},
    }


def _with_tool_args(tool_args: Any) -> dict[str, Any]:
    step = {**COMPLETED, "action_details": {**COMPLETED["action_details"], "tool_args": tool_args}}
    return {**STEP, "conversation_history": [step]}


STEP_PATH = "/api/agent/react_step"
ACTION_PATH = "/api/agent/execute_action"
SYNC_PATH = f"/api/projects/{PROJECT}/sync"
MCP_PATH = f"/mcp/{PROJECT}"

HOSTILE: list[Hostile] = [
    *[
        Hostile(
            f"conversation_history: {kind}",
            STEP_PATH,
            lambda items: {**STEP, "conversation_history": items},
            item,
            422,
        )
        for kind, item in WORST_ITEMS.items()
    ],
    *[
        Hostile(f"client_tools: {kind}", STEP_PATH, lambda items: {**STEP, "client_tools": items}, item, 422)
        for kind, item in WORST_ITEMS.items()
    ],
    Hostile(
        "client_tools[0].parameters: keys",
        STEP_PATH,
        lambda keys: {**STEP, "client_tools": [_tool({"type": "object", **keys})]},
        0,
        422,
        "map",
    ),
    Hostile(
        "client_tools[0].parameters.properties: schemas",
        STEP_PATH,
        lambda keys: {**STEP, "client_tools": [_tool({"type": "object", "properties": keys})]},
        {"type": "string", "enum": ["a", "b"]},
        400,  # context_window_exceeded: its schema alone is ~90,000 tokens
        "map",
    ),
    Hostile("history tool_args: a list", STEP_PATH, lambda items: _with_tool_args({"a": items}), 0, 200),
    Hostile("history tool_args: keys", STEP_PATH, _with_tool_args, 0, 422, "map"),
    Hostile("tool_args: keys", ACTION_PATH, lambda keys: {**ACTION, "tool_args": keys}, 0, 422, "map"),
    *[
        Hostile(
            f"tool_args.file_path: {kind}",
            ACTION_PATH,
            lambda items: {**ACTION, "tool_args": {"file_path": items}},
            item,
            200,  # an observation: read_file's file_path must be a string
        )
        for kind, item in WORST_ITEMS.items()
        if kind != "near misses"
    ],
    Hostile("sync files: bad digests", SYNC_PATH, lambda keys: {"files": keys}, 0, 422, "map", "f{:07d}.py"),
    Hostile(
        "sync files: valid digests",
        SYNC_PATH,
        lambda keys: {"files": keys},
        "0" * 64,
        422,
        "map",
        "src/f{:07d}.py",
    ),
    Hostile(
        "mcp tools/call arguments: a list", MCP_PATH, lambda items: _mcp_call({"file_path": items}), 0, 200
    ),
    Hostile("mcp tools/call arguments: keys", MCP_PATH, _mcp_call, 0, 200, "map"),
    Hostile(
        "mcp batch: messages",
        MCP_PATH,
        lambda items: items,
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        400,
    ),
]
