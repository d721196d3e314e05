"""Python call syntax for actions, read without evaluating anything.

    parse_call:  name ─► scan to the matching ")" (strings, comments, nesting limit)
                      ─► ast.parse("_(...)") ─► literal walk of each argument ─► Call
    render_action: name + args ─► Action: name(k=<literal>, ...)  (parse_call reads it back)
    example_action: a tool's required arguments with placeholders of their types, rendered

Tool names are matched with a regex rather than parsed, so names such as "read-file" work.
"""

import ast
import keyword
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

MAX_NESTING = 20

TOOL_NAME = re.compile(r"[A-Za-z0-9_][\w.\-]*")
_CALL_HEAD = re.compile(rf"({TOOL_NAME.pattern})[ \t]*\(")
# JSON spellings are common drift; they read as the Python constants they mean.
_JSON_NAMES: dict[str, Any] = {"true": True, "false": False, "null": None}
_LITERALS_HINT = "strings, numbers, True/False/None, lists or dicts"
_TOO_DEEP = f"Arguments are nested more than {MAX_NESTING} levels deep."
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


class CallSyntaxError(ValueError):
    """The call text is not a single call with literal arguments; the message is for the model."""


@dataclass(frozen=True)
class Call:
    """A parsed call: tool name, literal arguments, and where the call text ends."""

    name: str
    positional: tuple[Any, ...]
    keywords: dict[str, Any]
    end: int


def is_call_start(text: str, pos: int) -> bool:
    """Whether a tool name followed by "(" starts at pos."""
    return _CALL_HEAD.match(text, pos) is not None


def parse_call(text: str, pos: int) -> Call:
    """Parse the call starting at pos; text after its closing parenthesis is left alone."""
    head = _CALL_HEAD.match(text, pos)
    if head is None:
        raise CallSyntaxError('Write the action as a call, e.g. tool_name(arg="value").')
    end = _matching_paren(text, head.end() - 1)
    node = _parse_expression("_" + text[head.end() - 1 : end])
    if not isinstance(node, ast.Call):
        raise CallSyntaxError("The action must be a single call such as tool_name(arg=1).")
    positional = tuple(_literal(arg, f"argument {i + 1}") for i, arg in enumerate(node.args))
    return Call(head.group(1), positional, _keywords(node.keywords), end)


def _parse_expression(source: str) -> ast.expr:
    try:
        return ast.parse(source, mode="eval").body
    except SyntaxError as exc:
        raise CallSyntaxError(f"The action is not valid call syntax: {exc.msg}.") from None
    except (RecursionError, MemoryError, ValueError):
        raise CallSyntaxError("The action is too complex to parse; simplify it.") from None


def _keywords(nodes: list[ast.keyword]) -> dict[str, Any]:
    keywords: dict[str, Any] = {}
    for node in nodes:
        if node.arg is None:
            raise CallSyntaxError("Pass arguments as name=value; **kwargs is not allowed.")
        if node.arg in keywords:
            raise CallSyntaxError(f"Argument '{node.arg}' is given more than once.")
        keywords[node.arg] = _literal(node.value, f"'{node.arg}'")
    return keywords


def _matching_paren(text: str, open_at: int) -> int:
    """Index just past the bracket closing the one at open_at, skipping strings and comments."""
    depth, i = 0, open_at
    while i < len(text):
        char = text[i]
        if char in "([{":
            depth += 1
            if depth > MAX_NESTING:
                raise CallSyntaxError(_TOO_DEEP)
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        elif char in "'\"":
            i = _string_end(text, i)
            continue
        elif char == "#":
            newline = text.find("\n", i)
            i = len(text) if newline < 0 else newline
            continue
        i += 1
    raise CallSyntaxError("The action has unbalanced parentheses; close every '(' you open.")


def _string_end(text: str, start: int) -> int:
    """Index just past the string literal whose opening quote is at start."""
    quote = text[start] * 3 if text.startswith(text[start] * 3, start) else text[start]
    i = start + len(quote)
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text.startswith(quote, i):
            return i + len(quote)
        elif text[i] == "\n" and len(quote) == 1:
            break
        else:
            i += 1
    raise CallSyntaxError("The action has an unterminated string literal.")


def _literal(node: ast.expr, where: str) -> Any:
    """The value of a literal node; anything that would need evaluating is refused.

    Recursion is bounded: parse_call has already refused brackets nested beyond MAX_NESTING.
    """
    match node:
        case ast.Constant(value=value) if value is None or isinstance(value, str | int | float):
            return value
        case ast.UnaryOp(op=ast.USub() | ast.UAdd(), operand=ast.Constant(value=value)) if _is_number(value):
            return -value if isinstance(node.op, ast.USub) else value
        case ast.Name(id=name) if name in _JSON_NAMES:
            return _JSON_NAMES[name]
        case ast.List(elts=items) | ast.Tuple(elts=items):
            return [_literal(item, where) for item in items]
        case ast.Dict(keys=keys, values=values):
            return _dict_literal(keys, values, where)
    raise CallSyntaxError(
        f"Arguments must be literal values ({_LITERALS_HINT}); {where} is {_describe(node)}."
    )


def _is_number(value: object) -> TypeGuard[int | float]:
    """Whether a constant is an int or float; True and False are not numbers here."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _dict_literal(keys: list[ast.expr | None], values: list[ast.expr], where: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key_node, value_node in zip(keys, values, strict=True):
        key = None if key_node is None else _literal(key_node, where)
        if not isinstance(key, str):
            raise CallSyntaxError(f"Dict keys must be strings; {where} has a key that is not.")
        result[key] = _literal(value_node, where)
    return result


def _describe(node: ast.expr) -> str:
    """How a refused node reads in an error message."""
    match node:
        case ast.Call():
            return "a function call"
        case ast.Name(id=name):
            return f"the name {name!r}"
        case ast.Attribute():
            return "an attribute access"
        case ast.JoinedStr():
            return "an f-string"
        case ast.Lambda():
            return "a lambda"
        case ast.Constant(value=bytes()):
            return "a bytes literal"
    return "an expression"


def render_action(tool_name: str, tool_args: Mapping[str, Any]) -> str:
    """Canonical action text, e.g. Action: tool(arg="value", n=3); parse_call reads it back."""
    for name in tool_args:
        if not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(f"argument name {name!r} cannot be written as a keyword argument")
    rendered = ", ".join(f"{name}={render_literal(value)}" for name, value in tool_args.items())
    return f"Action: {tool_name}({rendered})"


def render_literal(value: Any) -> str:
    """A Python literal for a JSON-like value; tuples become lists."""
    if value is None or isinstance(value, int):  # bool is an int: True, False
        return repr(value)
    if isinstance(value, float):
        return _render_float(value)
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(render_literal(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(_render_item(key, item) for key, item in value.items()) + "}"
    raise TypeError(f"cannot render {type(value).__name__} as an action argument")


def _render_item(key: Any, value: Any) -> str:
    if not isinstance(key, str):
        raise TypeError(f"dict keys must be strings, got {type(key).__name__}")
    return f"{_quote(key)}: {render_literal(value)}"


def _render_float(value: float) -> str:
    if math.isnan(value):
        raise ValueError("NaN has no literal form")
    if math.isinf(value):
        # 1e999 overflows to inf when parsed, so infinity survives the round trip.
        return "1e999" if value > 0 else "-1e999"
    return repr(value)


def _quote(text: str) -> str:
    """A double-quoted literal; unprintable characters are escaped so the action stays one line."""
    parts = []
    for char in text:
        if char in _ESCAPES:
            parts.append(_ESCAPES[char])
        elif char.isprintable():
            parts.append(char)
        elif ord(char) < 0x100:
            parts.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            parts.append(f"\\u{ord(char):04x}")
        else:
            parts.append(f"\\U{ord(char):08x}")
    return '"' + "".join(parts) + '"'


# A corrected example, for the format_error message about a tool

_PLACEHOLDERS: dict[str, Any] = {
    "string": "...",
    "integer": 1,
    "number": 1.0,
    "boolean": True,
    "array": [],
    "object": {},
}


def example_action(tool: str, schema: Mapping[str, Any]) -> str:
    """Action: tool(required=<placeholder>, ...), the required arguments with values of their types."""
    properties = schema.get("properties", {})
    required = [name for name in schema.get("required", []) if name in properties]
    args = {name: _placeholder(properties[name]) for name in required}
    try:
        return render_action(tool, args)
    except (ValueError, TypeError):  # a name that is not a Python identifier
        return f'{{"name": "{tool}", "arguments": {{...}}}}'


def _placeholder(spec: Any) -> Any:
    kinds = spec.get("type") if isinstance(spec, Mapping) else None
    if isinstance(kinds, list):
        kinds = next((kind for kind in kinds if kind != "null"), None)
    if kinds is None and isinstance(spec, Mapping):
        options = [o.get("type") for o in spec.get("anyOf", []) if isinstance(o, Mapping)]
        kinds = next((kind for kind in options if kind and kind != "null"), None)
    return _PLACEHOLDERS.get(str(kinds), "...")
