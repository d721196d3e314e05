"""Where an import leads: the project files a Python or JS/TS import names, relative imports resolved.

python  `from .models import User` in app/views.py ──► module app.models ──► app/models.py
        (or app/models/__init__.py); `from . import models` also reaches app/models.py itself.
        An absolute name matches a file's path from the root, from its top package, or with a
        leading src/ or lib/ dropped.
js/ts   "./x" in web/a.ts ──► web/x, then web/x.ts .tsx .js ... and web/x/index.*; "./x.js" may
        name web/x.ts. Bare names ("react") are packages, outside the project.
others  not resolved: matched by their module text.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from reactstep.tools.source.chunking import Import

__all__ = ["ImportTarget", "ModuleResolver", "describe_import", "is_python", "is_script"]

PYTHON_SUFFIXES = (".py", ".pyi")
SCRIPT_SUFFIXES = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_SCRIPT_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})
# An ES-module import names the compiled file; in a TS project the source has the TS suffix.
_COMPILED_TO_SOURCE = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}
_SOURCE_ROOTS = ("src", "lib")


@dataclass(frozen=True)
class ImportTarget:
    """A project file an import reaches, and the names it takes from it (() for the module itself)."""

    path: str
    names: tuple[str, ...]


def is_python(language: str) -> bool:
    """Whether imports in this language resolve as Python modules."""
    return language == "python"


def is_script(language: str) -> bool:
    """Whether imports in this language resolve as JS/TS module paths."""
    return language in _SCRIPT_LANGUAGES


class ModuleResolver:
    """Resolves imports against the set of project files."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._paths = frozenset(paths)
        modules: dict[str, list[str]] = {}
        for path in sorted(self._paths):
            for name in python_module_names(path, self._paths):
                modules.setdefault(name, []).append(path)
        # Two files with one name: the shorter path wins, as the nearer one to the root.
        self._modules = {name: min(found, key=lambda p: (len(p), p)) for name, found in modules.items()}

    def python_module(self, name: str) -> str | None:
        """The file of an absolute Python module name."""
        return self._modules.get(name)

    def script_module(self, base: str) -> str | None:
        """The file a JS/TS module path names (project-relative, no leading './')."""
        stem, suffix = posixpath.splitext(base)
        candidates = [
            base,
            *(base + s for s in SCRIPT_SUFFIXES),
            *(f"{base}/index{s}" for s in SCRIPT_SUFFIXES),
        ]
        candidates += [stem + s for s in _COMPILED_TO_SOURCE.get(suffix, ())]
        return next((path for path in candidates if path in self._paths), None)

    def targets(self, statement: Import, language: str) -> list[ImportTarget]:
        """The project files an import statement reaches; [] for packages outside the project."""
        if is_python(language):
            return self._python_targets(statement)
        if is_script(language) and statement.module.startswith("."):
            base = posixpath.normpath(posixpath.join(posixpath.dirname(statement.path), statement.module))
            path = None if base.startswith("..") else self.script_module(base)
            return [ImportTarget(path, statement.names)] if path is not None else []
        return []

    def _python_targets(self, statement: Import) -> list[ImportTarget]:
        module = absolute_python_module(statement.path, statement.module)
        if module is None:
            return []
        found = []
        path = self.python_module(module) if module else None
        if path is not None:
            found.append(ImportTarget(path, statement.names))
        for name in statement.names:  # `from app import models` imports the module app/models.py
            submodule = self.python_module(f"{module}.{name}" if module else name)
            if submodule is not None and name != "*":
                found.append(ImportTarget(submodule, ()))
        return found


def absolute_python_module(importer: str, module: str) -> str | None:
    """`..models` in app/api/views.py is app.models; None when the dots climb above the root."""
    level = len(module) - len(module.lstrip("."))
    if level == 0:
        return module
    package = PurePosixPath(importer).parent.parts
    if level - 1 > len(package):
        return None
    base = package[: len(package) - (level - 1)]
    rest = module[level:]
    return ".".join((*base, rest) if rest else base)


def python_module_names(path: str, paths: frozenset[str]) -> list[str]:
    """The names a Python file is imported by: from the root, from its top package, without src/."""
    pure = PurePosixPath(path)
    if pure.suffix not in PYTHON_SUFFIXES:
        return []
    parts = list(pure.with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    if not parts:
        return []
    names = {".".join(parts)}
    first = len(parts) - 1  # climbs while the folder above is a package (has an __init__.py)
    while first > 0 and f"{'/'.join(parts[:first])}/__init__.py" in paths:
        first -= 1
    if is_package or first < len(parts) - 1:
        names.add(".".join(parts[first:]))
    if parts[0] in _SOURCE_ROOTS and len(parts) > 1:
        names.add(".".join(parts[1:]))
    return sorted(names)


def describe_import(statement: Import, language: str) -> str:
    """One import as a short statement: `from .models import User` or `import { a } from "./x"`."""
    names = ", ".join(statement.names)
    if is_python(language):
        if not statement.names:
            return f"import {statement.module}"
        return f"from {statement.module} import {names}"
    if is_script(language):
        return f'import {_script_clause(statement.names)}"{statement.module}"'
    return f"import {statement.module}" + (f" ({names})" if names else "")


def _script_clause(names: tuple[str, ...]) -> str:
    """`default, *, { a, b } from ` for the names a JS/TS import takes ("" for a bare import)."""
    named = [name for name in names if name not in ("default", "*")]
    parts = ["default"] if "default" in names else []
    parts += ["*"] if "*" in names else []
    parts += [f"{{ {', '.join(named)} }}"] if named else []
    return f"{', '.join(parts)} from " if parts else ""
