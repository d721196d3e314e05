"""A unified diff (the server's approval preview) applied to the text it was made from: the new text an
ACP diff content shows beside the old one."""

import re

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
NO_NEWLINE = "\\ No newline at end of file"


class DiffMismatch(ValueError):
    """The diff does not apply to the text (the file changed since the preview)."""


def apply_unified_diff(before: str, diff: str) -> str:
    """`before` with the diff's hunks applied; DiffMismatch when a removed or kept line differs."""
    old = before.splitlines(keepends=True)
    new: list[str] = []
    at = 0  # lines of `old` already copied or consumed
    last = ""  # the kind of the diff line before ("+", "-" or " ")
    for line in diff.splitlines(keepends=True):
        if (hunk := HUNK.match(line)) is not None:
            start = int(hunk.group(1)) - (0 if hunk.group(2) == "0" else 1)
            new.extend(old[at:start])
            at = start
        elif line.startswith(("---", "+++")) and at == 0 and not new:
            continue  # the file headers
        elif line.rstrip("\r\n") == NO_NEWLINE:
            if last in ("+", " ") and new:  # the line before it ends the new text without a newline
                new[-1] = new[-1].rstrip("\r\n")
        elif line[:1] == "+":
            new.append(line[1:])
        elif line[:1] in ("-", " "):
            _check(old, at, line[1:])
            if line[:1] == " ":
                new.append(old[at])
            at += 1
        last = line[:1]
    return "".join(new + old[at:])


def _check(old: list[str], at: int, expected: str) -> None:
    if at >= len(old) or old[at].rstrip("\r\n") != expected.rstrip("\r\n"):
        raise DiffMismatch(f"line {at + 1} is not the one the diff names")
