"""The facts the overview is built from: entry points, test layout, conventions, and the index update."""

import pytest

from reactstep.tools.index.conventions import describe_conventions, describe_tests
from reactstep.tools.index.overview import build_overview
from reactstep.tools.index.symbols import SymbolIndex, SymbolIndexUpdate
from reactstep.tools.source.chunking import outline_file
from reactstep.tools.source.entry_points import find_entry_points
from reactstep.tools.store.objects import ObjectInfo


@pytest.mark.parametrize(
    ("path", "text", "language", "found"),
    [
        ("run.py", 'if __name__ == "__main__":\n    main()\n', "python", ('`if __name__ == "__main__"`',)),
        ("run.py", "if __name__ == '__main__' :\n    main()\n", "python", ('`if __name__ == "__main__"`',)),
        ("run.py", 'def f():\n    if __name__ == "__main__":\n        pass\n', "python", ()),
        (
            "pyproject.toml",
            '[project.scripts]\nb = "p.cli:b"\na = "p.cli:a"\n[project.gui-scripts]\ng = "p.gui:run"\n'
            '[tool.poetry.scripts]\nold = "p.old:main"\n',
            "toml",
            (
                "console script `a = p.cli:a`",
                "console script `b = p.cli:b`",
                "gui script `g = p.gui:run`",
                "poetry script `old = p.old:main`",
            ),
        ),
        ("pyproject.toml", "[project\nbroken", "toml", ()),
        ("sub/pyproject.toml", '[project.scripts]\nx = "y:z"\n', "toml", ("console script `x = y:z`",)),
        (
            "package.json",
            '{"name": "cli", "bin": "bin/cli.js", "main": "index.js"}',
            "json",
            ("bin `cli` -> bin/cli.js", "main -> index.js"),
        ),
        (
            "package.json",
            '{"bin": {"b": "b.js", "a": "a.js"}}',
            "json",
            ("bin `a` -> a.js", "bin `b` -> b.js"),
        ),
        ("package.json", "[1, 2]", "json", ()),
        ("package.json", "{oops", "json", ()),
        ("other.json", '{"main": "x.js"}', "json", ()),
    ],
)
def test_find_entry_points(path: str, text: str, language: str, found: tuple[str, ...]) -> None:
    assert find_entry_points(path, text, language) == found


@pytest.mark.parametrize(
    ("paths", "lines"),
    [
        ([], ["- No tests found."]),
        (
            ["tests/test_a.py", "tests/unit/test_b.py", "tests/conftest.py", "pkg/b_test.py"],
            [
                "- Test folders: tests/ (3 files)",
                "- Test files: 3, named *_test.py (1 file), test_*.py (2 files)",
                "- Runners: pytest",
            ],
        ),
        (
            [
                "web/__tests__/a.test.tsx",
                "web/b.spec.ts",
                "jest.config.js",
                "go/x_test.go",
                "src/test/FooTest.java",
            ],
            [
                "- Test folders: src/test/ (1 file), web/__tests__/ (1 file)",
                "- Test files: 4, named *.spec.* (1 file), *.test.* (1 file), *Test.java (1 file), "
                "*_test.go (1 file)",
                "- Runners: jest",
            ],
        ),
    ],
)
def test_describe_tests(paths: list[str], lines: list[str]) -> None:
    assert describe_tests(paths) == lines


def index_of(files: dict[str, str]) -> SymbolIndex:
    """The symbol index of some files, parsed as the indexer parses them."""
    update = SymbolIndexUpdate(None)
    infos = [ObjectInfo(path, len(text), f"etag-{path}", 0.0) for path, text in files.items()]
    for info in infos:
        update.record(info, files[info.path], outline_file(info.path, files[info.path]))
    return update.finish(infos)


def test_describe_conventions() -> None:
    index = index_of(
        {
            "a.py": 'class Thing:\n    """Doc."""\n\n    def __init__(self):\n        pass\n\n'
            "    def doIt(self):\n        pass\n\n\ndef run_all():\n    pass\n\n\ndef go():\n    pass\n",
            "b.ts": "export function loadAll() {}\nexport function LOAD_ALL() {}\n",
        }
    )
    assert describe_conventions(["a.py", "b.ts", "Makefile", "docs/pyproject.toml"], index) == [
        "- python: functions snake_case (2 of 3), classes PascalCase (1 of 1)",
        "- typescript: functions camelCase (1 of 2)",
        "- Python docstrings: 1 of 4 functions, methods and classes",
        "- Configuration: Makefile",
    ]
    assert describe_conventions([], SymbolIndex({})) == ["- None detected."]


def test_an_empty_project_has_a_short_overview() -> None:
    assert build_overview([], SymbolIndex({})) == (
        "# Project overview\n\n0 files, 0 symbols indexed.\n\n## Languages\n- No source files.\n\n"
        "## Layout\n- The project is empty.\n\n## Entry points\n- None found.\n\n"
        "## Most imported modules\n- No file imports another.\n\n## Tests\n- No tests found.\n\n"
        "## Conventions\n- None detected.\n"
    )


def test_long_lists_are_capped() -> None:
    extensions = ["js", "ts", "tsx", "go", "rs", "java", "md", "yaml", "toml", "json", "ini", "txt", "rst"]
    paths = [f"f{n:02}.py" for n in range(40)] + [f"d{n}/x.{ext}" for n, ext in enumerate(extensions)]
    overview = build_overview(paths, SymbolIndex({}))
    layout = overview.split("## Layout\n")[1].split("\n\n")[0].splitlines()
    assert (len(layout), layout[0], layout[-2], layout[-1]) == (
        31,
        "- d0/ (1 file)",
        "- f16.py",
        "- ...and 23 more entries",
    )
    languages = overview.split("## Languages\n")[1].split("\n\n")[0].splitlines()
    assert (languages[0], languages[-1]) == ("- python: 40 files", "- ...and 2 more languages")


def test_an_update_keeps_entries_of_unchanged_files() -> None:
    first = index_of({"a.py": "def a():\n    pass\n", "b.py": "def b():\n    pass\n"})
    update = SymbolIndexUpdate(first)
    same, changed, new = (
        ObjectInfo("a.py", 0, "etag-a.py", 0.0),
        ObjectInfo("b.py", 0, "etag-b2", 0.0),
        ObjectInfo("c.py", 0, "etag-c", 0.0),
    )
    assert [update.wants(info) for info in (same, changed, new)] == [False, True, True]
    update.record(changed, "def b2():\n    pass\n", outline_file("b.py", "def b2():\n    pass\n"))
    result = update.finish([same, changed, new])  # c.py was listed but not parsed (say, binary): no entry
    assert (sorted(result.files), update.parsed, update.changed) == (["a.py", "b.py"], 1, True)
    assert result.files["a.py"] is first.files["a.py"]
    assert [s.name for s in result.symbols()] == ["a", "b2"]
    unchanged = SymbolIndexUpdate(result)
    assert (unchanged.finish([same, changed]).files == result.files, unchanged.changed) == (True, False)
