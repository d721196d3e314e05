"""Entry points one file declares, found while it is indexed: for the project overview.

    *.py          `if __name__ == "__main__"` at the top level
    pyproject.toml  [project.scripts], [project.gui-scripts], [tool.poetry.scripts]
    package.json    "bin" and "main"

`main` functions come from the symbol index itself, not from here.
"""

import json
import re
import tomllib
from pathlib import PurePosixPath
from typing import Any

__all__ = ["find_entry_points"]

_MAIN_GUARD = re.compile(r"""^if\s+__name__\s*==\s*(['"])__main__\1\s*:""", re.MULTILINE)


def find_entry_points(path: str, text: str, language: str) -> tuple[str, ...]:
    """How the file starts a program, as short descriptions; () when it does not."""
    name = PurePosixPath(path).name
    if language == "python" and _MAIN_GUARD.search(text):
        return ('`if __name__ == "__main__"`',)
    if name == "pyproject.toml":
        return _console_scripts(text)
    if name == "package.json":
        return _package_entry_points(text)
    return ()


def _console_scripts(text: str) -> tuple[str, ...]:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return ()
    project = _table(document.get("project"))
    poetry = _table(_table(document.get("tool")).get("poetry"))
    found: list[str] = []
    for kind, scripts in (
        ("console script", project.get("scripts")),
        ("gui script", project.get("gui-scripts")),
        ("poetry script", poetry.get("scripts")),
    ):
        found.extend(f"{kind} `{name} = {target}`" for name, target in sorted(_table(scripts).items()))
    return tuple(found)


def _package_entry_points(text: str) -> tuple[str, ...]:
    try:
        document = json.loads(text)
    except ValueError:
        return ()
    package = _table(document)
    found: list[str] = []
    bin_field = package.get("bin")
    if isinstance(bin_field, str):
        found.append(f"bin `{package.get('name', '')}` -> {bin_field}")
    for name, target in sorted(_table(bin_field).items()):
        found.append(f"bin `{name}` -> {target}")
    if isinstance(package.get("main"), str):
        found.append(f"main -> {package['main']}")
    return tuple(found)


def _table(value: Any) -> dict[str, Any]:
    """A TOML table or JSON object, or {} when the value is anything else."""
    return value if isinstance(value, dict) else {}
