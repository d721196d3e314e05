"""tools/matching/globs.py: gitignore glob rules, brace expansion, refusals, and linear-time matching."""

import time

import pytest

from reactstep.tools.errors import ToolError
from reactstep.tools.matching.globs import as_list, compile_globs
from tests.timing import LOAD_SLACK_S

PATHS = ["a.py", "src/a.py", "src/deep/b.py", "src/deep/b.pyc", "docs/src/c.md", "x.min.js", "#hash"]


@pytest.mark.parametrize(
    ("patterns", "selected"),
    [
        (["*.py"], ["a.py", "src/a.py", "src/deep/b.py"]),
        (["/*.py"], ["a.py"]),
        (["src/*.py"], ["src/a.py"]),
        (["src/**/*.py"], ["src/a.py", "src/deep/b.py"]),
        (["**/deep/*"], ["src/deep/b.py", "src/deep/b.pyc"]),
        (["src"], ["src/a.py", "src/deep/b.py", "src/deep/b.pyc", "docs/src/c.md"]),
        (["/src/"], ["src/a.py", "src/deep/b.py", "src/deep/b.pyc"]),
        (["*.py?"], ["src/deep/b.pyc"]),
        (["*.py[cd]"], ["src/deep/b.pyc"]),
        (["*.{md,js}"], ["docs/src/c.md", "x.min.js"]),
        (["{src,docs}/*.{py,md}"], ["src/a.py"]),
        (["src/**", "!*.pyc", "!src/a.py"], ["src/deep/b.py"]),
        (["!*.py*"], ["docs/src/c.md", "x.min.js", "#hash"]),
        (["\\#hash"], ["#hash"]),
        ([], []),
    ],
)
def test_selection(patterns: list[str], selected: list[str]) -> None:
    globs = compile_globs(patterns)
    assert [path for path in PATHS if globs.matches(path)] == selected


@pytest.mark.parametrize(
    ("patterns", "message"),
    [
        (["a["], "glob 'a[' is not a valid pattern (an unclosed '[', or nothing to match)"),
        (["/"], "glob '/' is not a valid pattern (an unclosed '[', or nothing to match)"),
        (["\\"], "invalid glob pattern: Invalid git pattern: '\\\\'"),
        (["# note"], "glob '# note' starts with '#', which makes it a comment; write '\\#' instead"),
        ([""], "glob pattern is empty; use '**' for every file"),
        (["a" * 1025], "glob pattern is longer than 1024 characters"),
        (["*"] * 51, "too many glob patterns (51); give at most 50"),
        (["{a,b}" * 6], "the globs expand to more than 50 patterns; use fewer braces"),
        (["{a,b}" * 200], "the globs expand to more than 50 patterns; use fewer braces"),
    ],
)
def test_refusals(patterns: list[str], message: str) -> None:
    with pytest.raises(ToolError) as caught:
        compile_globs(patterns)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("value", "listed"),
    [(None, []), ("", []), ("*.py", ["*.py"]), (["a", "b"], ["a", "b"]), ((), [])],
)
def test_as_list(value: str | list[str] | None, listed: list[str]) -> None:
    assert as_list(value) == listed


def test_matching_time_is_linear_in_the_path() -> None:
    # Python's re explores ~C(200, 40) ways to split this name; RE2 reads it once.
    globs = compile_globs(["*a" * 40 + "*b"])
    start = time.perf_counter()
    assert globs.matches("a" * 200) is False
    assert time.perf_counter() - start < 1.0 + LOAD_SLACK_S
