"""A write's preview (the server's unified diff) applied to the text it was made from gives the text
the write leaves: what an ACP diff content shows as newText."""

import pytest

from reactstep.client.acp.diff_text import DiffMismatch, apply_unified_diff
from reactstep.tools.writes.diffs import unified_diff

TWELVE = "".join(f"{n}\n" for n in range(1, 13))


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("a\nb\nc\n", "a\nB\nc\n"),
        ("", "x\ny"),  # a new file without a final newline
        ("x\ny", "x\ny\n"),  # a final newline added
        ("a\nb", "a\nc"),  # the last line changed, no final newline on either side
        ("a\n", ""),  # emptied
        (TWELVE, TWELVE.replace("3\n", "X\n").replace("11\n", "Y\n")),  # two hunks
        ("a\r\nb\r\n", "a\r\nc\r\n"),  # CRLF kept
    ],
)
def test_the_diff_applied_to_the_old_text_gives_the_new(before: str, after: str) -> None:
    assert apply_unified_diff(before, unified_diff("f.py", before or None, after)) == after


def test_a_diff_made_from_other_text_does_not_apply() -> None:
    with pytest.raises(DiffMismatch, match="line 2 is not the one the diff names"):
        apply_unified_diff("a\nZ\nc\n", unified_diff("f.py", "a\nb\nc\n", "a\nB\nc\n"))
