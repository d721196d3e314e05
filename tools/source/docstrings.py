"""The first paragraph of a docstring or of a comment block: the one-line summary a symbol carries."""

from __future__ import annotations

import inspect

__all__ = ["comment_summary", "docstring_summary"]

_COMMENT_MARKERS = ("/**", "/*", "///", "//!", "//", "#", "*")


def docstring_summary(raw: str) -> str:
    """The first paragraph of a docstring's text (without its quotes)."""
    return _first_paragraph(inspect.cleandoc(raw).splitlines())


def comment_summary(comments: list[str]) -> str:
    """The first paragraph of consecutive comments, their markers (`//`, `#`, `/** */`, ...) removed."""
    return _first_paragraph([_strip_marker(line) for comment in comments for line in comment.splitlines()])


def _strip_marker(line: str) -> str:
    line = line.strip().removesuffix("*/")
    for marker in _COMMENT_MARKERS:
        if line.startswith(marker):
            return line[len(marker) :].strip()
    return line


def _first_paragraph(lines: list[str]) -> str:
    """Lines up to the first blank line or doc tag (`@param`), joined with spaces."""
    paragraph: list[str] = []
    for line in (line.strip() for line in lines):
        if paragraph and (not line or line.startswith("@")):
            break
        if line and not line.startswith("@"):
            paragraph.append(line)
    return " ".join(paragraph)
