"""call_syntax: reading calls without evaluating them, and the render/parse round trip."""

from typing import Any

import pytest

from reactstep.service.parsing.call_syntax import (
    Call,
    CallSyntaxError,
    parse_call,
    render_action,
    render_literal,
)
from reactstep.service.parsing.reply import parse_reply

TOOLS: dict[str, dict[str, Any]] = {
    "read_file": {
        "type": "object",
        "properties": {
            "file_path": {"type": "string"},
            "start_line": {"type": "integer"},
            "end_line": {"type": "integer"},
        },
        "required": ["file_path"],
    },
    "bash": {
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}},
        "required": ["command"],
    },
    "list_files": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "recursive": {"type": "boolean"}},
    },
    "remember": {
        "type": "object",
        "properties": {"key": {"type": "string"}, "value": {}},
        "required": ["key", "value"],
    },
}


@pytest.mark.parametrize(
    ("text", "pos", "expected"),
    [
        pytest.param("f()", 0, Call("f", (), {}, 3), id="empty"),
        pytest.param("x = f(1, b='2') trailing", 4, Call("f", (1,), {"b": "2"}, 15), id="offset"),
        pytest.param("read-file (path='a')", 0, Call("read-file", (), {"path": "a"}, 20), id="hyphen"),
        pytest.param('f(")(", s=")")', 0, Call("f", (")(",), {"s": ")"}, 14), id="parens-in-strings"),
        pytest.param("f(r'\\'', x=1)", 0, Call("f", ("\\'",), {"x": 1}, 13), id="raw-string-quote"),
        pytest.param('f("a" "b")', 0, Call("f", ("ab",), {}, 10), id="implicit-concat"),
        pytest.param(
            "f(n=-0.0, t=true, z=null, l=[], d={})",
            0,
            Call("f", (), {"n": -0.0, "t": True, "z": None, "l": [], "d": {}}, 37),
            id="literals",
        ),
    ],
)
def test_parse_call(text: str, pos: int, expected: Call) -> None:
    assert parse_call(text, pos) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("f(x.y)", "argument 1 is an attribute access", id="attribute"),
        pytest.param("f(a=[1, g()])", "'a' is a function call", id="nested-call"),
        pytest.param("f(a={'k': v})", "'a' is the name 'v'", id="name-in-dict"),
        pytest.param("f(a=True if 1 else 0)", "'a' is an expression", id="conditional"),
        pytest.param("f(a=-True)", "'a' is an expression", id="negated-bool"),
        pytest.param("f(a=1j)", "'a' is an expression", id="complex"),
        pytest.param("f(a=...)", "'a' is an expression", id="ellipsis"),
        pytest.param("f(a=[x for x in y])", "'a' is an expression", id="comprehension"),
        pytest.param("f(a=(yield))", "'a' is an expression", id="yield"),
        pytest.param("f(a=1 2)", "not valid call syntax", id="syntax-error"),
        pytest.param("f(a='x\n')", "unterminated string literal", id="newline-in-short-string"),
        pytest.param("f(a=1", "unbalanced parentheses", id="unbalanced"),
        pytest.param("f(" + "[" * 20 + "]" * 20 + ")", "nested more than 20 levels", id="deep"),
        pytest.param("not a call", "Write the action as a call", id="no-call"),
    ],
)
def test_parse_call_refuses(text: str, message: str) -> None:
    with pytest.raises(CallSyntaxError) as caught:
        parse_call(text, 0)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        pytest.param(
            "read_file",
            {"file_path": "a.py", "start_line": 3},
            'Action: read_file(file_path="a.py", start_line=3)',
            id="canonical",
        ),
        pytest.param("list_files", {}, "Action: list_files()", id="no-args"),
        pytest.param(
            "remember",
            {"value": [True, None, {"x": -1.5}], "key": "k"},
            'Action: remember(value=[True, None, {"x": -1.5}], key="k")',
            id="given-order-and-constants",
        ),
        pytest.param(
            "bash",
            {"command": 'say "hi"\\\n\t\x00\u2028é'},
            'Action: bash(command="say \\"hi\\"\\\\\\n\\t\\x00\\u2028é")',
            id="escapes",
        ),
        pytest.param(
            "remember",
            {"key": "t", "value": (1, "a")},
            'Action: remember(key="t", value=[1, "a"])',
            id="tuple",
        ),
        pytest.param(
            "remember",
            {"key": "f", "value": [float("inf"), float("-inf"), 1e16]},
            'Action: remember(key="f", value=[1e999, -1e999, 1e+16])',
            id="floats",
        ),
    ],
)
def test_render_action(tool: str, args: dict[str, Any], expected: str) -> None:
    assert render_action(tool, args) == expected


ROUND_TRIPS = [
    pytest.param("read_file", {"file_path": "src/app.py", "start_line": 3, "end_line": 40}, id="ints"),
    pytest.param("bash", {"command": "echo \"hi\" \\ 'x'\nprintf '\\t' # (", "timeout": 5}, id="quotes"),
    pytest.param("bash", {"command": "naïve ☃ 😀 \x00\x7f\u2028\ud800 end\r\n"}, id="unicode"),
    pytest.param(
        "remember",
        {
            "key": "cfg",
            "value": {
                "a": [1, -2, 3.5, -0.0, 1e300, None, True, False],
                "nested": {"x": {"y": []}, "": "empty key"},
            },
        },
        id="nested",
    ),
    pytest.param("remember", {"key": "", "value": float("-inf")}, id="infinity"),
    pytest.param("remember", {"key": "big", "value": -(10**30)}, id="big-int"),
    pytest.param("list_files", {}, id="empty"),
    pytest.param("list_files", {"recursive": False, "path": "Observation: x"}, id="label-like-text"),
]


@pytest.mark.parametrize(("tool", "args"), ROUND_TRIPS)
def test_render_then_parse_gives_same_args(tool: str, args: dict[str, Any]) -> None:
    text = render_action(tool, args)
    reply = parse_reply(text, TOOLS)
    assert reply.action is not None
    assert (reply.action.tool_name, reply.action.tool_args) == (tool, args)
    assert reply.action.raw_action_string == text


@pytest.mark.parametrize(
    ("value", "error"),
    [
        pytest.param(float("nan"), ValueError, id="nan"),
        pytest.param({1: "x"}, TypeError, id="int-key"),
        pytest.param({1, 2}, TypeError, id="set"),
        pytest.param(b"x", TypeError, id="bytes"),
    ],
)
def test_render_literal_refuses(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        render_literal(value)


@pytest.mark.parametrize("name", ["file-path", "from", "1st"])
def test_render_action_refuses_names_that_are_not_keywords(name: str) -> None:
    with pytest.raises(ValueError, match="cannot be written as a keyword argument"):
        render_action("tool", {name: 1})
