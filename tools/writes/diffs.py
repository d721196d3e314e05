"""A text file's change as a unified diff, the way git shows it, and the lines it adds and removes."""

import difflib

CONTEXT_LINES = 3
NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(path: str, before: str | None, after: str) -> str:
    """The diff from `before` (None: the file does not exist yet) to `after`, with git's headers."""
    old_name = "/dev/null" if before is None else f"a/{path}"
    lines = difflib.unified_diff(
        _lines(before or ""), _lines(after), fromfile=old_name, tofile=f"b/{path}", n=CONTEXT_LINES
    )
    shown = [line if ends_a_line(line) else f"{line}\n{NO_NEWLINE}" for line in lines]
    if not shown:  # an empty new file: no hunk, only the headers
        shown = [f"--- {old_name}\n", f"+++ b/{path}\n"]
    return "".join(shown)


def changed_lines(before: str | None, after: str) -> tuple[int, int]:
    """How many lines the change adds and removes, counted as the diff counts them."""
    matcher = difflib.SequenceMatcher(None, _lines(before or ""), _lines(after))
    added = removed = 0
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag != "equal":
            removed += old_end - old_start
            added += new_end - new_start
    return added, removed


def ends_a_line(line: str) -> bool:
    """Whether a diff line keeps a line ending ("\\n", "\\r\\n" or any other splitlines knows)."""
    return line.splitlines()[0] != line


def _lines(text: str) -> list[str]:
    """Lines with their endings, split where read_file splits them."""
    return text.splitlines(keepends=True)
