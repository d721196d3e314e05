"""The client's .gitignore reader agrees with git: each case's answer is what `git status --ignored`
(git 2.39) said of the same files under the same .gitignore."""

import pytest

from reactstep.client.workspace.gitignore import IgnoreRules

CASES = [
    (
        "build/\n*.log\n",
        ["build/out.txt", "app.log", "src/app.log", "src/app.py", "buildx/a.py"],
        ["app.log", "build/out.txt", "src/app.log"],
    ),
    (
        "/root.txt\ndocs/*.md\n",
        ["root.txt", "sub/root.txt", "docs/a.md", "docs/sub/a.md", "x/docs/a.md"],
        ["docs/a.md", "root.txt"],
    ),
    (
        "**/cache\nlogs/**\na/**/b\n",
        ["cache/x", "p/cache/x", "logs/a", "logs/x/y", "a/b", "a/x/y/b", "a/bb"],
        ["a/b", "a/x/y/b", "cache/x", "logs/a", "logs/x/y", "p/cache/x"],
    ),
    (
        "*.py[co]\nfile?.txt\n[!a]x\n",
        ["m.pyc", "m.py", "file1.txt", "file12.txt", "bx", "ax"],
        ["bx", "file1.txt", "m.pyc"],
    ),
    (
        "\\#hash\n\\!bang\ntrail\\ \nname   \n",
        ["#hash", "!bang", "trail ", "name", "name   "],
        ["!bang", "#hash", "name", "trail "],
    ),
    ("*.txt\n!keep.txt\n", ["a.txt", "keep.txt", "d/keep.txt"], ["a.txt"]),
    ("build/\n!build/keep.txt\n", ["build/keep.txt", "build/x.txt"], ["build/keep.txt", "build/x.txt"]),
    ("*\n!*/\n!*.py\n", ["a.py", "d/a.py", "d/a.txt", "a.txt"], ["a.txt", "d/a.txt"]),
    ("x[\n", ["x[", "x"], []),
]


@pytest.mark.parametrize(("rules", "paths", "ignored"), CASES)
def test_the_files_git_ignores(rules: str, paths: list[str], ignored: list[str]) -> None:
    spec = IgnoreRules.from_lines(rules.splitlines())
    assert sorted(path for path in paths if spec.ignores(path)) == ignored


def test_a_directory_rule_names_the_directory() -> None:
    spec = IgnoreRules.from_lines(["build/", "logs"])
    assert [spec.ignores(path) for path in ("build/", "build", "logs/", "logs")] == [True, False, True, True]
