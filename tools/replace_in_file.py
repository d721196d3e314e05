"""replace_in_file: find and replace in one file (literal text or an RE2 regex), after approval.

seeds/002 Decision 3: every call previews; the preview's diff shows each replacement, and the user's
approval writes exactly that. A regex's `replace` may name groups as \\1 or \\g<name>.
"""

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reactstep.tools.errors import InvalidRegex, ToolError
from reactstep.tools.matching.regex import compile_re2
from reactstep.tools.registry import Observation, ToolContext, ToolSpec
from reactstep.tools.write_flow import Change, run_write

# \1..\99, \g<name or number>, or an escaped character, in a regex replacement.
_TEMPLATE_ESCAPE = re.compile(r"\\(?:(\d{1,2})|g<([^<>]*)>|(.))", re.DOTALL)
_ESCAPED = {"n": "\n", "t": "\t", "\\": "\\"}
_SHOWN_CHARS = 120


class ReplaceInFileArgs(BaseModel):
    """Arguments of replace_in_file."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Path of an existing file, relative to the project root.")
    find: str = Field(
        min_length=1, description="The text to find, exactly as in the file, indentation included."
    )
    replace: str = Field(description="What to put in its place ('' deletes it).")
    regex: bool = Field(
        False,
        description="Treat find as an RE2 regular expression (^ and $ match at each line); "
        "replace may then use \\1 or \\g<name>.",
    )
    count: int | None = Field(None, ge=1, description="Replace at most this many matches; all by default.")


def replace_in_file(args: ReplaceInFileArgs, context: ToolContext) -> Observation:
    """Preview the replacements, or write them when the call carries the user's approval."""

    def plan(path: str, current: str | None) -> Change:
        if current is None:
            raise ToolError(f"file not found: {path}")
        text, made = _regex_replace(args, current) if args.regex else _literal_replace(args, current)
        if made == 0:
            kind = "the regex" if args.regex else "the text"
            raise ToolError(
                f"no match for {kind} {_shown(args.find)} in {path}; nothing to replace. It must match "
                "exactly, whitespace and indentation included: read_file shows the current text"
            )
        return Change(text, f"{made} replacement{'' if made == 1 else 's'}")

    return run_write(SPEC.name, args, args.path, plan, context)


def _literal_replace(args: ReplaceInFileArgs, text: str) -> tuple[str, int]:
    found = text.count(args.find)
    made = min(found, args.count) if args.count else found
    return text.replace(args.find, args.replace, made), made


def _regex_replace(args: ReplaceInFileArgs, text: str) -> tuple[str, int]:
    pattern = _compile(args.find)
    pieces = _parse_template(args.replace, pattern)

    def expand(match: Any) -> str:
        return "".join(piece if isinstance(piece, str) else (match.group(piece) or "") for piece in pieces)

    result, made = pattern.subn(expand, text, count=args.count or 0)
    return str(result), int(made)


def _compile(find: str) -> Any:
    """The RE2 regex, with ^ and $ at every line; a ToolError says why a pattern is not valid."""
    try:
        return compile_re2(find, multiline=True)
    except InvalidRegex as exc:
        raise ToolError(
            f"invalid regex {_shown(find)} ({exc.reason}); replace_in_file uses RE2 syntax: no lookaround "
            "or backreferences in find; escape ( ) [ ] { } . * + ? | with a backslash to match them, "
            "or set regex=false to find the text literally"
        ) from exc


def _parse_template(template: str, pattern: Any) -> list[str | int]:
    """The replacement as literal text and group numbers, each reference checked."""
    pieces: list[str | int] = []
    position = 0
    for escape in _TEMPLATE_ESCAPE.finditer(template):
        pieces.append(template[position : escape.start()])
        number, name, char = escape.groups()
        if char is not None:
            pieces.append(_ESCAPED.get(char, "\\" + char))
        else:
            pieces.append(_group(number, name, pattern))
        position = escape.end()
    pieces.append(template[position:])
    return pieces


def _group(number: str | None, name: str | None, pattern: Any) -> int:
    """The group a \\N or \\g<...> reference names, if the pattern has it."""
    reference = number if number is not None else str(name)
    group = int(reference) if reference.isdigit() else pattern.groupindex.get(reference)
    if group is None or group > pattern.groups:
        raise ToolError(
            f"replace refers to group {reference!r}, which the regex does not have; "
            "write \\\\ in replace for a literal backslash"
        )
    return int(group)


def _shown(text: str) -> str:
    """A repr of `text`, cut to keep the observation short."""
    return repr(text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "...")


SPEC = ToolSpec(
    name="replace_in_file",
    description=(
        "Finds text in one file and replaces it: every match, or the first `count`. find is literal "
        "text unless regex=true (RE2 syntax). The user sees the diff of all replacements and must "
        "approve it before anything is written."
    ),
    category="writing",
    args_model=ReplaceInFileArgs,
    run=replace_in_file,
    example='replace_in_file(path="src/app.py", find="return 42", replace="return 43")',
    aliases={
        "file_path": "path",
        "filepath": "path",
        "file": "path",
        "old_str": "find",
        "old_string": "find",
        "old": "find",
        "search": "find",
        "new_str": "replace",
        "new_string": "replace",
        "new": "replace",
        "replacement": "replace",
    },
    read_only=False,
    requires_approval=True,
)
