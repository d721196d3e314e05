"""Glob patterns from the model, matched against project paths in linear time.

Patterns follow .gitignore rules (pathspec.GitIgnoreSpec): `*` and `?` stay within one
folder, `**` crosses folders, a pattern without an inner '/' matches a name at any depth,
a pattern naming a folder matches everything below it, and a later `!pattern` takes back
what an earlier one matched. Paths are matched from the project root. Braces expand first,
as in most shells and ripgrep: `*.{ts,tsx}` is `*.ts` and `*.tsx`.

pathspec translates globs to regular expressions; Python's `re` can take exponential
time on some of them (`*a*a*a*a*a*b`), so matching runs on RE2 through pathspec's re2
backend, which is linear in the path length whatever the pattern.
"""

import re
from collections.abc import Sequence

import pathspec

from reactstep.tools.errors import ToolError

MAX_GLOBS = 50
MAX_GLOB_CHARS = 1024
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")  # an innermost {a,b} group


class GlobSet:
    """Compiled globs: a path matches when the last pattern that matches it is not a `!` one."""

    def __init__(self, patterns: Sequence[str]) -> None:
        lines = list(patterns)
        # Negations alone would match nothing; they read as "everything except".
        if lines and all(line.startswith("!") for line in lines):
            lines.insert(0, "**")
        self._spec = _compile(lines)

    def matches(self, path: str) -> bool:
        """Whether the project-relative `path` is selected by the patterns."""
        return bool(self._spec.match_file(path))


def as_list(value: str | Sequence[str] | None) -> list[str]:
    """One pattern or many as a list; None or '' is no pattern."""
    if value is None or value == "":
        return []
    return [value] if isinstance(value, str) else list(value)


def compile_globs(patterns: Sequence[str]) -> GlobSet:
    """Check and compile patterns; a ToolError names the first one that is not usable."""
    if len(patterns) > MAX_GLOBS:
        raise ToolError(f"too many glob patterns ({len(patterns)}); give at most {MAX_GLOBS}")
    expanded: list[str] = []
    for pattern in patterns:
        _check(pattern)
        expanded.extend(_expand_braces(pattern))
    if len(expanded) > MAX_GLOBS:
        raise ToolError(f"the globs expand to more than {MAX_GLOBS} patterns; use fewer braces")
    return GlobSet(list(dict.fromkeys(expanded)))


def _expand_braces(pattern: str) -> list[str]:
    """`a{b,c}d` -> ['abd', 'acd'], innermost groups first; nothing else changes."""
    match = _BRACES.search(pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    expanded: list[str] = []
    for choice in match.group(1).split(","):
        expanded.extend(_expand_braces(head + choice + tail))
        if len(expanded) > MAX_GLOBS:
            break  # compile_globs refuses the lot; stop before the list grows further
    return expanded


def _check(pattern: str) -> None:
    """Refuse a pattern that is too long or that .gitignore rules would silently ignore."""
    if len(pattern) > MAX_GLOB_CHARS:
        raise ToolError(f"glob pattern is longer than {MAX_GLOB_CHARS} characters")
    if not pattern.strip():
        raise ToolError("glob pattern is empty; use '**' for every file")
    if pattern.startswith("#"):
        raise ToolError(f"glob {pattern!r} starts with '#', which makes it a comment; write '\\#' instead")
    compiled = _compile([pattern])
    if not any(item.include is not None for item in compiled.patterns):
        raise ToolError(f"glob {pattern!r} is not a valid pattern (an unclosed '[', or nothing to match)")


def _compile(lines: list[str]) -> pathspec.GitIgnoreSpec:
    """GitIgnoreSpec on the RE2 backend; pathspec's own errors become ToolErrors."""
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines, backend="re2")
    except ValueError as exc:  # GitIgnorePatternError is a ValueError
        raise ToolError(f"invalid glob pattern: {exc}") from exc
