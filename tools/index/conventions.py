"""What the project overview says about tests and habits, read off file names and the symbol index.

    test layout   test folders (tests/, test/, __tests__/, spec/) with their file counts, test file
                  naming patterns (test_*.py, *.test.ts, *_test.go ...), runner hints (conftest.py ...)
    conventions   naming style of functions and classes per language, Python docstring coverage,
                  build and tool configuration at the root

Every list is sorted, so the same project always reads the same.
"""

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import PurePosixPath

from reactstep.tools.index.symbols import SymbolIndex
from reactstep.tools.source.chunking import Symbol

__all__ = ["describe_conventions", "describe_tests", "is_test_path"]

TEST_FOLDERS = frozenset({"tests", "test", "__tests__", "spec", "specs"})
_SCRIPT = r"\.(?:js|jsx|ts|tsx|mjs|cjs|mts|cts)"
_TEST_NAMES = (
    ("test_*.py", re.compile(r"test_.*\.py")),
    ("*_test.py", re.compile(r".*_test\.py")),
    ("*.test.*", re.compile(rf".*\.test{_SCRIPT}")),
    ("*.spec.*", re.compile(rf".*\.spec{_SCRIPT}")),
    ("*_test.go", re.compile(r".*_test\.go")),
    ("*Test.java", re.compile(r".*Tests?\.java")),
)
_RUNNER_FILES = (
    ("pytest", re.compile(r"conftest\.py|pytest\.ini")),
    ("jest", re.compile(r"jest\.config\.\w+")),
    ("vitest", re.compile(r"vitest\.config\.\w+")),
)
CONFIG_FILES = frozenset(
    {"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "tox.ini", "noxfile.py", "mypy.ini"}
    | {"ruff.toml", "package.json", "tsconfig.json", "go.mod", "Cargo.toml", "pom.xml", "build.gradle"}
    | {"Makefile", "Dockerfile", ".editorconfig", ".pre-commit-config.yaml", "eslint.config.js"}
    | {".eslintrc.json", ".eslintrc.js", ".prettierrc", "biome.json", "deno.json"}
)
_STYLES = (
    ("snake_case", re.compile(r"_*[a-z][a-z0-9]*(_[a-z0-9]+)*_*")),
    ("camelCase", re.compile(r"_*[a-z][a-zA-Z0-9]*")),
    ("PascalCase", re.compile(r"_*[A-Z][a-zA-Z0-9]*")),
    ("UPPER_CASE", re.compile(r"_*[A-Z][A-Z0-9]*(_[A-Z0-9]+)*_*")),
)


def is_test_path(path: str) -> bool:
    """Whether the file is a test: under a test folder, named like one, or a test runner's file."""
    parts = PurePosixPath(path).parts
    if any(part in TEST_FOLDERS for part in parts[:-1]):
        return True
    name = parts[-1] if parts else ""
    return naming_pattern(path) is not None or any(pattern.fullmatch(name) for _, pattern in _RUNNER_FILES)


def naming_pattern(path: str) -> str | None:
    """The test naming pattern a file name follows, if any."""
    name = PurePosixPath(path).name
    return next((label for label, pattern in _TEST_NAMES if pattern.fullmatch(name)), None)


def describe_tests(paths: Iterable[str]) -> list[str]:
    """The overview's test layout bullets."""
    paths = sorted(paths)
    folders: Counter[str] = Counter()
    for path in paths:
        parts = PurePosixPath(path).parts[:-1]
        top = next((index for index, part in enumerate(parts) if part in TEST_FOLDERS), None)
        if top is not None:
            folders["/".join(parts[: top + 1]) + "/"] += 1
    naming = Counter(label for path in paths if (label := naming_pattern(path)) is not None)
    runners = sorted({label for path in paths for label, pattern in _RUNNER_FILES if _names(pattern, path)})
    lines = []
    if folders:
        lines.append("- Test folders: " + ", ".join(f"{f} ({_files(n)})" for f, n in sorted(folders.items())))
    if naming:
        counted = ", ".join(f"{label} ({_files(n)})" for label, n in sorted(naming.items()))
        lines.append(f"- Test files: {sum(naming.values())}, named {counted}")
    if runners:
        lines.append("- Runners: " + ", ".join(runners))
    return lines or ["- No tests found."]


def describe_conventions(paths: Iterable[str], index: SymbolIndex) -> list[str]:
    """The overview's conventions bullets."""
    lines = []
    by_language: dict[str, list[Symbol]] = {}
    for symbol in index.symbols():
        by_language.setdefault(index.language_of(symbol.path), []).append(symbol)
    for language, symbols in sorted(by_language.items()):
        styles = [
            _style_line(kinds, [s for s in symbols if s.kind in kinds and not _is_dunder(s.name)])
            for kinds in (("function", "method"), ("class",))
        ]
        if any(styles):
            lines.append(f"- {language}: " + ", ".join(style for style in styles if style))
    lines.extend(_docstring_lines(by_language.get("python", [])))
    configs = sorted(path for path in paths if path in CONFIG_FILES)
    if configs:
        lines.append("- Configuration: " + ", ".join(configs))
    return lines or ["- None detected."]


def _style_line(kinds: tuple[str, ...], symbols: list[Symbol]) -> str:
    """'functions snake_case (12 of 13)': the style most names follow."""
    if not symbols:
        return ""
    counts = [(sum(1 for s in symbols if pattern.fullmatch(s.name)), label) for label, pattern in _STYLES]
    best, label = max(counts, key=lambda item: item[0])  # max keeps the first of equal counts
    noun = "functions" if "function" in kinds else "classes"
    return f"{noun} {label} ({best} of {len(symbols)})" if best else ""


def _docstring_lines(symbols: list[Symbol]) -> list[str]:
    documented = [s for s in symbols if s.kind != "variable" and not _is_dunder(s.name)]
    if not documented:
        return []
    with_docstring = sum(1 for s in documented if s.docstring)
    return [f"- Python docstrings: {with_docstring} of {len(documented)} functions, methods and classes"]


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _names(pattern: re.Pattern[str], path: str) -> bool:
    return pattern.fullmatch(PurePosixPath(path).name) is not None


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"
