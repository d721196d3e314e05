"""tool_args: reading an action's input, and binding it to the tool's JSON Schema."""

import json
from typing import Any

import pytest

from reactstep.service.parsing.binding import bind_arguments
from reactstep.service.parsing.tool_args import (
    ArgumentError,
    ToolInput,
    arguments_value,
    input_value,
    tool_input,
)

READ_FILE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string"},
        "start_line": {"type": "integer"},
        "end_line": {"type": "integer"},
    },
    "required": ["file_path"],
}
NESTED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "minimum": 1},
        "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
    },
    "minProperties": 1,
}
SIX_REQUIRED: dict[str, Any] = {"properties": {name: {} for name in "abcdef"}, "required": list("abcdef")}


@pytest.mark.parametrize(
    ("given", "schema", "expected"),
    [
        pytest.param(
            ToolInput(("a.py", 3)), READ_FILE, {"file_path": "a.py", "start_line": 3}, id="positional"
        ),
        pytest.param(
            ToolInput(("a.py",), {"end_line": 9}),
            READ_FILE,
            {"file_path": "a.py", "end_line": 9},
            id="positional-then-keyword",
        ),
        pytest.param(ToolInput(text="a.py"), READ_FILE, {"file_path": "a.py"}, id="text-to-first-required"),
        pytest.param(ToolInput(text="x"), {"properties": {"q": {}}}, {"q": "x"}, id="text-to-only"),
    ],
)
def test_bind(given: ToolInput, schema: dict[str, Any], expected: dict[str, Any]) -> None:
    assert bind_arguments(given, schema)[0] == expected


@pytest.mark.parametrize(
    ("given", "schema", "message"),
    [
        pytest.param(
            ToolInput(text="x"),
            {"properties": {"a": {}, "b": {}}},
            "plain-text input is ambiguous for this tool; pass name=value arguments",
            id="ambiguous-text",
        ),
        pytest.param(
            ToolInput(("a", 1, 2, 3)),
            READ_FILE,
            "takes at most 3 positional argument(s), got 4",
            id="too-many-positional",
        ),
        pytest.param(
            ToolInput(("a",), {"file_path": "b"}),
            READ_FILE,
            "argument 'file_path' is given twice",
            id="given-twice",
        ),
        pytest.param(
            ToolInput(keywords={"n": json.loads("[" * 21 + "]" * 21)}),
            {"properties": {"n": {}}},
            "arguments are nested more than 20 levels deep",
            id="too-deep",
        ),
        pytest.param(
            ToolInput(keywords={"n": 0}),
            NESTED,
            "argument 'n': 0 is less than the minimum of 1",
            id="minimum",
        ),
        pytest.param(
            ToolInput(keywords={"items": [{"name": 1}]}),
            NESTED,
            "argument 'items[0].name' must be string, got 1",
            id="nested-path",
        ),
        pytest.param(ToolInput(), NESTED, "arguments: {} should be non-empty", id="whole-object"),
        pytest.param(
            ToolInput(),
            SIX_REQUIRED,
            "missing required argument 'a'; missing required argument 'b'; "
            "missing required argument 'c'; missing required argument 'd'; and 2 more",
            id="at-most-four-problems",
        ),
    ],
)
def test_bind_refuses(given: ToolInput, schema: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgumentError) as caught:
        bind_arguments(given, schema)[0]
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param('{"a": [1, null]}', {"a": [1, None]}, id="object"),
        pytest.param('"src/app.py"', "src/app.py", id="json-string"),
        pytest.param('"a" and "b"', '"a" and "b"', id="quoted-words-stay-text"),
        pytest.param("ls -la", "ls -la", id="plain-text"),
    ],
)
def test_input_value(content: str, expected: Any) -> None:
    assert input_value(content) == expected


def test_input_value_refuses_bad_object() -> None:
    with pytest.raises(ArgumentError, match="Action Input is not a valid JSON object"):
        input_value('{"a": NaN}')


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param('{"command": "ls"}', {"command": "ls"}, id="json-encoded"),
        pytest.param({"command": "ls"}, {"command": "ls"}, id="object"),
        pytest.param(None, None, id="null"),
    ],
)
def test_arguments_value(value: Any, expected: Any) -> None:
    assert arguments_value(value) == expected


# Refused until issue 10: a lone value now goes to the tool's one (or one required) parameter.
@pytest.mark.parametrize(("value", "expected"), [("ls", "ls"), ("[1]", [1]), ([1], [1]), (5, 5)])
def test_arguments_value_keeps_lone_values(value: Any, expected: Any) -> None:
    assert arguments_value(value) == expected


def test_tool_input() -> None:
    assert tool_input("t", None) == ToolInput()
    assert tool_input("t", {"a": 1}) == ToolInput(keywords={"a": 1})
    assert tool_input("t", "text") == ToolInput(text="text")
    assert tool_input("t", [1]) == ToolInput(text=[1])  # refused until issue 10
    with pytest.raises(ArgumentError, match="The input for t must be a JSON object"):
        tool_input("t", object())
