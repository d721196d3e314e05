"""Unified diffs as git shows them, and the line counts the write tools report."""

import pytest

from reactstep.tools.writes.diffs import changed_lines, unified_diff

CASES = {
    "new file": (None, "a\nb\n", "--- /dev/null\n+++ b/f.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n", (2, 0)),
    "new empty file": (None, "", "--- /dev/null\n+++ b/f.txt\n", (0, 0)),
    "emptied": ("a\n", "", "--- a/f.txt\n+++ b/f.txt\n@@ -1 +0,0 @@\n-a\n", (0, 1)),
    "no final newline": (
        "a\nb",
        "a\nc",
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n"
        "+c\n\\ No newline at end of file\n",
        (1, 1),
    ),
    "final newline added": (
        "a",
        "a\n",
        "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n",
        (1, 1),
    ),
    "crlf kept": (
        "a\r\nb\r\n",
        "a\r\nB\r\n",
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+B\r\n",
        (1, 1),
    ),
    "context is three lines": (
        "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
        "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
        "--- a/f.txt\n+++ b/f.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n",
        (1, 1),
    ),
}


@pytest.mark.parametrize(("before", "after", "diff", "counts"), CASES.values(), ids=CASES)
def test_diff_and_counts(before: str | None, after: str, diff: str, counts: tuple[int, int]) -> None:
    assert unified_diff("f.txt", before, after) == diff
    assert changed_lines(before, after) == counts
