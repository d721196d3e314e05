"""A .gitignore file's rules, as git reads them, so a sync leaves out what git leaves out.

    blank lines and `#` comments    skipped (`\\#` is a name starting with #); trailing spaces dropped
                                    unless escaped (`\\ `)
    !pattern                        a later match un-ignores (`\\!` is a name starting with !)
    pattern/                        directories only
    a `/` at the start or inside    anchored at the .gitignore's folder; else it matches at any depth
    *  ?  [abc] [!a-z]              within one path part;  `**/x`, `x/**`, `a/**/b` across parts
A path is ignored when a folder on its way is, else when the last rule that matches it is not a `!` one
(so nothing inside an ignored folder comes back, as in git). A path is given relative to the .gitignore's
folder, with a trailing `/` when it is a directory.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    negated: bool


class IgnoreRules:
    """The rules of one .gitignore file."""

    def __init__(self, rules: list[_Rule]) -> None:
        self._rules = rules

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> "IgnoreRules":
        """The rules of a .gitignore file's lines (lines that say nothing are skipped)."""
        return cls([rule for line in lines if (rule := _rule(line)) is not None])

    def ignores(self, relative: str) -> bool:
        """Whether the path (relative; a directory ends with '/') is ignored: a folder on its way is,
        or the last rule that matches it ignores it."""
        parts = relative.rstrip("/").split("/")
        folders = ("/".join(parts[:depth]) + "/" for depth in range(1, len(parts)))
        return any(self._decides(folder) for folder in folders) or self._decides(relative)

    def _decides(self, relative: str) -> bool:
        ignored = False
        for rule in self._rules:
            if rule.negated == ignored and rule.pattern.match(relative):
                ignored = not rule.negated
        return ignored


def _rule(line: str) -> _Rule | None:
    text = _strip_trailing_spaces(line)
    if not text or text.startswith("#"):
        return None
    negated = text.startswith("!")
    if negated:
        text = text[1:]
    directory_only = text.endswith("/")
    text = text.rstrip("/")
    if not text:
        return None
    anchored = "/" in text
    text = text.removeprefix("/")
    body = _translate(text)
    start = "" if anchored or (body or "").startswith("(?:.*/)?") else "(?:.*/)?"
    if body is None:
        return None  # an unclosed [ matches nothing, as in git
    end = "/" if directory_only else "/?"
    return _Rule(re.compile(f"{start}{body}{end}$", re.DOTALL), negated)


def _strip_trailing_spaces(line: str) -> str:
    text = line.rstrip("\r\n")
    stripped = text.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(text):
        return stripped[:-1] + " "  # `\ `: one space kept
    return stripped


def _translate(text: str) -> str | None:
    out: list[str] = []
    at = 0
    parts = text.split("/")
    if parts[0] == "**" and len(parts) > 1:  # **/x: at any depth
        out.append("(?:.*/)?")
        at = 3
    while at < len(text):
        if text.startswith("/**/", at):
            out.append("/(?:.*/)?")
            at += 4
        elif text.startswith("/**", at) and at + 3 == len(text):  # x/**: everything inside
            out.append("/.*")
            at += 3
        elif text.startswith("**", at):
            out.append("[^/]*")  # ** not a whole part: like *
            at += 2
        elif text[at] == "*":
            out.append("[^/]*")
            at += 1
        elif text[at] == "?":
            out.append("[^/]")
            at += 1
        elif text[at] == "[":
            if (end := _class_end(text, at)) is None:
                return None
            out.append(_class(text[at + 1 : end]))
            at = end + 1
        elif text[at] == "\\" and at + 1 < len(text):
            out.append(re.escape(text[at + 1]))
            at += 2
        else:
            out.append(re.escape(text[at]))
            at += 1
    return "".join(out)


def _class_end(text: str, start: int) -> int | None:
    at = start + 1
    if text[at : at + 1] in ("!", "^"):
        at += 1
    if text[at : at + 1] == "]":
        at += 1
    while at < len(text) and text[at] != "]":
        at += 2 if text[at] == "\\" else 1
    return at if at < len(text) else None


def _class(inside: str) -> str:
    negated = inside[:1] in ("!", "^")
    if negated:
        inside = inside[1:]
    escaped = "".join("\\" + char if char in "\\^[]" and char != "-" else char for char in inside)
    return f"[{'^/' if negated else ''}{escaped}]" if not negated else f"[^/{escaped}]"
