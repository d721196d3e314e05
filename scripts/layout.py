"""Rewrite docs/layout.md's folder tables from the tree and the import rules (`--check`: exit 1 when stale).

Each folder (a package) is one row: what its __init__ docstring says it holds, its modules, the folders
its modules import (read from the tree) and the ones check_imports.py forbids it. The libraries one
module owns are listed with the modules that import them, so the page names only files that exist.
"""

import ast
import sys
from pathlib import Path

import check_imports
from generated_page import write_or_check

ROOT = check_imports.ROOT
PAGE = ROOT / "docs" / "layout.md"
BEGIN = "<!-- layout: made by scripts/layout.py from the tree and scripts/check_imports.py; do not edit -->"
END = "<!-- end of the layout -->"
# Third-party libraries each kept behind one module (or one small room) of ours.
OWNED = (
    "litellm",
    "boto3",
    "qdrant_client",
    "qdrant_edge",
    "tree_sitter",
    "json_repair",
    "mcp",
    "re2",
    "jinja2",
    "acp",
)


def display(name: str, packages: set[str]) -> str:
    """`reactstep.service.http` as `service/http/`, `reactstep.service.limits` as `service/limits.py`."""
    path = name.removeprefix("reactstep.").replace(".", "/")
    return f"`{path}/`" if name in packages else f"`{path}.py`"


def displayed_set(names: list[str], packages: set[str]) -> str:
    """Folders as `tools/index/`; a folder's loose modules together, as `tools/`: catalog, grep."""
    folders = [display(name, packages) for name in sorted(names) if name in packages]
    loose: dict[str, list[str]] = {}
    for name in sorted(names):
        if name not in packages:
            loose.setdefault(folder_of(name, packages), []).append(name.rpartition(".")[2])
    groups = [
        f"{display(folder, packages)}: {', '.join(modules)}" for folder, modules in sorted(loose.items())
    ]
    return "; ".join([", ".join(folders)] * bool(folders) + groups)


def folder_of(module: str, packages: set[str]) -> str:
    """The package a module is in (a package is its own)."""
    return module if module in packages else module.rpartition(".")[0]


def first_paragraph(path: Path) -> str:
    """The first paragraph of a module's docstring, on one line, safe in a table cell."""
    docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
    return " ".join(docstring.split("\n\n")[0].split()).replace("|", "\\|")


def folders_table(tree: "Tree") -> str:
    """One row per folder: what it holds, its modules, what it imports and what it must not."""
    rows = ["| folder | holds | modules | imports | never imports |", "|---|---|---|---|---|"]
    for package in sorted(tree.packages):
        own = sorted(
            name for name in tree.graph if folder_of(name, tree.packages) == package and name != package
        )
        imported = {
            folder_of(dep, tree.packages)
            for name in [package, *own]
            for dep in tree.graph.get(name, ())
            if not check_imports.within(dep, package)
        }
        forbidden = sorted({high for low, high in check_imports.FORBIDDEN if low == package})
        rows.append(
            "| "
            + " | ".join(
                [
                    display(package, tree.packages),
                    first_paragraph(tree.init_of(package)),
                    ", ".join(name.rpartition(".")[2] for name in own),
                    ", ".join(display(name, tree.packages) for name in sorted(imported)),
                    displayed_set(forbidden, tree.packages),
                ]
            )
            + " |"
        )
    return "\n".join(rows)


def module_rules(tree: "Tree") -> str:
    """The rules whose importer is one module, lows sharing their forbidden set on one line."""
    by_low: dict[str, set[str]] = {}
    for low, high in check_imports.FORBIDDEN:
        if low not in tree.packages:
            by_low.setdefault(low, set()).add(high)
    grouped: dict[tuple[str, ...], list[str]] = {}
    for low, highs in by_low.items():
        grouped.setdefault(tuple(sorted(highs)), []).append(low)
    lines = []
    for highs, lows in sorted(grouped.items(), key=lambda item: sorted(item[1])):
        names = ", ".join(display(low, tree.packages) for low in sorted(lows))
        lines.append(f"- {names} must not import {displayed_set(list(highs), tree.packages)}")
    return "\n".join(lines)


def owners_table(tree: "Tree") -> str:
    """Each owned library and the modules of ours that import it."""
    rows = ["| library | imported only by |", "|---|---|"]
    for library in OWNED:
        users = sorted(name for name, libraries in tree.libraries.items() if library in libraries)
        rows.append(f"| `{library}` | {', '.join(display(name, tree.packages) for name in users)} |")
    return "\n".join(rows)


class Tree:
    """Our modules, the imports between them, and the third-party top-level names each imports."""

    def __init__(self) -> None:
        files = sorted(path for package in check_imports.PACKAGES for path in (ROOT / package).rglob("*.py"))
        modules = {check_imports.module_name(path) for path in files}
        self.paths = {check_imports.module_name(path): path for path in files}
        self.packages = {check_imports.module_name(path) for path in files if path.name == "__init__.py"}
        self.graph = {
            name: {
                dep
                for dep in check_imports.imports_of(path, name, modules)[0]
                if not any(other.startswith(dep + ".") for other in modules)
            }
            for name, path in self.paths.items()
        }
        self.libraries = {name: top_level_imports(path) for name, path in self.paths.items()}

    def init_of(self, package: str) -> Path:
        return self.paths[package]


def top_level_imports(path: Path) -> set[str]:
    """The first part of every absolute import the module makes, lazy ones included."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def layout(tree: Tree) -> str:
    """The generated part of the page."""
    return "\n".join(
        [
            "### Folders",
            "",
            "A folder imports what its row says and never what its last column names; a rule for a",
            "folder holds for the folders inside it. No folder's children (its modules and its sub-folders,",
            "each taken whole) import each other in a loop.",
            "",
            folders_table(tree),
            "",
            "### Modules with rules of their own",
            "",
            module_rules(tree),
            "",
            "### One owner per library",
            "",
            owners_table(tree),
        ]
    )


def with_layout(page: str, generated: str) -> str:
    head, found, rest = page.partition(BEGIN)
    _, found_end, tail = rest.partition(END)
    if not (found and found_end):
        raise ValueError(f"{PAGE.name} lacks the markers {BEGIN!r} and {END!r}")
    return f"{head}{BEGIN}\n{generated}\n{END}{tail}"


def main() -> int:
    return write_or_check(PAGE, with_layout(PAGE.read_text(), layout(Tree())), "scripts/layout.py")


if __name__ == "__main__":
    sys.exit(main())
