"""tools/source/module_paths.py: where Python and JS/TS imports lead, relative imports resolved."""

import pytest

from reactstep.tools.source.chunking import Import
from reactstep.tools.source.module_paths import (
    ImportTarget,
    ModuleResolver,
    absolute_python_module,
    describe_import,
    python_module_names,
)

PATHS = frozenset(
    {
        "app/__init__.py",
        "app/models.py",
        "app/api/__init__.py",
        "app/api/views.py",
        "scripts/tool.py",
        "src/lib_pkg/__init__.py",
        "src/lib_pkg/core.py",
        "src/lib_pkg/core.pyi",
        "web/api.ts",
        "web/models/index.ts",
        "web/ui/Card.tsx",
        "web/legacy.js",
        "web/esm.mts",
    }
)
RESOLVER = ModuleResolver(PATHS)


@pytest.mark.parametrize(
    ("importer", "module", "absolute"),
    [
        ("app/views.py", ".models", "app.models"),
        ("app/api/views.py", "..models", "app.models"),
        ("app/api/views.py", ".", "app.api"),
        ("app/api/views.py", "..", "app"),
        ("app/api/__init__.py", ".views", "app.api.views"),
        ("top.py", ".", ""),
        ("app/views.py", "...models", None),  # climbs above the root
        ("app/views.py", "app.models", "app.models"),
    ],
)
def test_absolute_python_module(importer: str, module: str, absolute: str | None) -> None:
    assert absolute_python_module(importer, module) == absolute


@pytest.mark.parametrize(
    ("path", "names"),
    [
        ("app/models.py", ["app.models"]),
        ("app/__init__.py", ["app"]),
        ("app/api/views.py", ["app.api.views"]),
        ("loose/util.py", ["loose.util"]),
        ("scripts/tool.py", ["scripts.tool"]),  # no package: only its path from the root
        ("src/lib_pkg/core.py", ["lib_pkg.core", "src.lib_pkg.core"]),  # from its top package; src/ dropped
        ("src/lib_pkg/__init__.py", ["lib_pkg", "src.lib_pkg"]),
        ("web/api.ts", []),
    ],
)
def test_python_module_names(path: str, names: list[str]) -> None:
    assert python_module_names(path, PATHS) == names


@pytest.mark.parametrize(
    ("statement", "language", "targets"),
    [
        (Import("app/api/views.py", 1, "..models", ("User",)), "python", [("app/models.py", ("User",))]),
        (
            Import("app/api/views.py", 1, "..", ("models", "api")),
            "python",
            [("app/__init__.py", ("models", "api")), ("app/models.py", ()), ("app/api/__init__.py", ())],
        ),
        (Import("tests/t.py", 1, "lib_pkg.core", ()), "python", [("src/lib_pkg/core.py", ())]),
        (Import("tests/t.py", 1, "app.models", ("*",)), "python", [("app/models.py", ("*",))]),
        (Import("tests/t.py", 1, "flask", ("Flask",)), "python", []),
        (Import("app/views.py", 1, "...up", ("x",)), "python", []),
        (Import("web/ui/Card.tsx", 1, "../api", ("fetchUser",)), "tsx", [("web/api.ts", ("fetchUser",))]),
        (Import("web/api.ts", 1, "./models", ("User",)), "typescript", [("web/models/index.ts", ("User",))]),
        (Import("web/ui/Card.tsx", 1, "../api.js", ()), "tsx", [("web/api.ts", ())]),
        (Import("web/api.ts", 1, "./esm.mjs", ()), "typescript", [("web/esm.mts", ())]),
        (Import("web/api.ts", 1, "./legacy", ("default",)), "javascript", [("web/legacy.js", ("default",))]),
        (Import("web/api.ts", 1, "../../outside", ()), "typescript", []),
        (Import("web/api.ts", 1, "react", ("default",)), "typescript", []),
        (Import("cmd/main.go", 1, "./web/api", ()), "go", []),
    ],
)
def test_targets(statement: Import, language: str, targets: list[tuple[str, tuple[str, ...]]]) -> None:
    assert RESOLVER.targets(statement, language) == [ImportTarget(path, names) for path, names in targets]


def test_a_stub_beside_its_module_loses_to_the_module() -> None:
    assert RESOLVER.python_module("lib_pkg.core") == "src/lib_pkg/core.py"


@pytest.mark.parametrize(
    ("statement", "language", "text"),
    [
        (Import("a.py", 1, "os", ()), "python", "import os"),
        (Import("a.py", 1, ".models", ("User", "Group")), "python", "from .models import User, Group"),
        (Import("a.ts", 1, "./x", ()), "typescript", 'import "./x"'),
        (Import("a.ts", 1, "./x", ("default",)), "typescript", 'import default from "./x"'),
        (Import("a.ts", 1, "./x", ("*",)), "typescript", 'import * from "./x"'),
        (Import("a.ts", 1, "./x", ("default", "a", "b")), "tsx", 'import default, { a, b } from "./x"'),
        (Import("a.go", 1, "fmt", ()), "go", "import fmt"),
        (Import("A.java", 1, "java.util", ("List",)), "java", "import java.util (List)"),
    ],
)
def test_describe_import(statement: Import, language: str, text: str) -> None:
    assert describe_import(statement, language) == text
