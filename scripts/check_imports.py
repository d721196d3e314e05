"""Fail on an import loop, an import against the layering, or a package missing from pyproject.toml.

A loop is one among the children of a folder, at every level: its modules and its sub-folders, each
sub-folder taken whole. So service/http/ and service/mcp/ may not import each other even when no two
of their modules do, and a cycle of modules is a loop at the folder that holds them all.
Every import counts, lazy and TYPE_CHECKING ones included. The folders install under one namespace
(`service/` is `reactstep.service`, ...), so a bare `import service` is an error too.
"""

import ast
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("client", "contract", "service", "tools", "prompts")

# code_search's rooms under tools/: the embedding model, the vector store, the ranking
VECTOR_ROOMS = ("embedding", "vector_store", "ranking")

# (importer prefix, imported prefix it must not use). Prefixes match whole dotted names.
FORBIDDEN = [
    # the contract (pydantic models of the HTTP bodies) is the client's and the server's: it imports neither
    *[("reactstep.contract", f"reactstep.{other}") for other in ("client", "service", "tools", "prompts")],
    # the client installs alone (client/pyproject.toml): it reaches the server over HTTP, and the server
    # package's commands through entry points (client/cli/servers.py)
    *[("reactstep.client", f"reactstep.{other}") for other in ("service", "tools", "prompts")],
    # the ACP agent is a thin client beside the command line, which starts it (cli/acp_command.py)
    ("reactstep.client.acp", "reactstep.client.cli"),
    ("reactstep.prompts", "reactstep.service"),
    ("reactstep.prompts", "reactstep.tools"),
    ("reactstep.prompts", "reactstep.client"),
    ("reactstep.tools", "reactstep.service"),
    ("reactstep.tools", "reactstep.client"),
    ("reactstep.service", "reactstep.client"),
    # the server: http on top; the step and the workspace beneath it; parsing and the LLM gateway lowest
    ("reactstep.service.step", "reactstep.service.http"),
    ("reactstep.service.workspace", "reactstep.service.http"),
    ("reactstep.service.workspace", "reactstep.service.step"),
    # MCP is the SDK's server over the workspace; http serves it at /mcp (http/mcp.py), so MCP sits
    # beneath http and nothing beneath MCP speaks it
    ("reactstep.service.mcp", "reactstep.service.http"),
    # a body is read as bytes and JSON; paths are judged where files are (contract/, workspace/)
    ("reactstep.service.http.bodies", "reactstep.tools.store"),
    *[
        (low, "reactstep.service.mcp")
        for low in (
            "reactstep.service.step",
            "reactstep.service.workspace",
            "reactstep.service.parsing",
            "reactstep.service.llm",
        )
    ],
    *[
        (low, high)
        for low in ("reactstep.service.parsing", "reactstep.service.llm")
        for high in ("reactstep.service.http", "reactstep.service.step", "reactstep.service.workspace")
    ],
    ("reactstep.service.parsing", "reactstep.service.llm"),
    ("reactstep.service.llm", "reactstep.service.parsing"),
    *[
        (base, sub)
        for base in (
            "reactstep.service.settings",
            "reactstep.service.setting_problems",
            "reactstep.service.errors",
            "reactstep.service.limits",
            "reactstep.service.schemas",
            "reactstep.service.redaction",
            "reactstep.service.logs",
            "reactstep.service.metrics",
            "reactstep.service.worker_threads",
        )
        for sub in (
            "reactstep.service.http",
            "reactstep.service.mcp",
            "reactstep.service.step",
            "reactstep.service.workspace",
            "reactstep.service.parsing",
            "reactstep.service.llm",
            "reactstep.tools",
        )
    ],
    # the tools side: what tools touch sits below the tool modules and the registry
    *[
        (f"reactstep.tools.{sub}", f"reactstep.tools.{tool}")
        for sub in ("store", "source", *VECTOR_ROOMS, "index", "matching", "projects", "writes")
        for tool in (
            "registry",
            "catalog",
            "folders",
            "parallel_read",
            "code_search",
            "create_file",
            "edit_file",
            "edit_lines",
            "find_definition",
            "find_files",
            "find_importers",
            "grep",
            "list_files",
            "project_overview",
            "read_file",
            "replace_in_file",
            "write_flow",
        )
    ],
    *[
        (f"reactstep.tools.{low}", f"reactstep.tools.{high}")
        for low, highs in {
            "store": ("source", *VECTOR_ROOMS, "index", "writes", "matching"),
            "source": ("store", *VECTOR_ROOMS, "index", "writes", "matching"),
            "matching": ("store", "source", *VECTOR_ROOMS, "index", "writes"),
            # code_search's rooms: the model and the store beneath the ranking that uses both; the
            # store's points carry the model's sparse vectors, so the model sits lowest
            "embedding": ("store", "source", "matching", "vector_store", "ranking", "index", "writes"),
            "vector_store": ("store", "source", "matching", "ranking", "index", "writes"),
            "ranking": ("store", "source", "matching", "index", "writes"),
            "index": ("writes",),
        }.items()
        for high in highs
    ],
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["reactstep", *parts])


def imports_of(path: Path, name: str, modules: set[str]) -> tuple[set[str], list[str]]:
    """Our modules `path` imports, and the bare (un-namespaced) imports it makes."""
    found: set[str] = set()
    bare: list[str] = []
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            if target.split(".")[0] in PACKAGES:
                bare.append(f"{path.relative_to(ROOT)}:{node.lineno}: import {target}")
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target.startswith("reactstep.") and target != name:
                found.add(target)
    return found, bare


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def rule_problems(graph: dict[str, set[str]]) -> list[str]:
    """Each import against FORBIDDEN, and each loop between folders (folder_loops)."""
    problems = [
        f"{importer} imports {dep}: {low} must not import {high}"
        for importer, deps in sorted(graph.items())
        for dep in sorted(deps)
        for low, high in FORBIDDEN
        if within(importer, low) and within(dep, high)
    ]
    return problems + folder_loops(graph)


def siblings(importer: str, dep: str) -> tuple[str, str, str]:
    """The folder holding both modules, and the child of it (a module or a sub-folder) each is in."""
    ours, theirs = importer.split("."), dep.split(".")
    common = 0
    while common < min(len(ours), len(theirs)) and ours[common] == theirs[common]:
        common += 1
    parent = ".".join(ours[:common])
    return parent, ".".join(ours[: common + 1]), ".".join(theirs[: common + 1])


def folder_loops(graph: dict[str, set[str]]) -> list[str]:
    """One line per loop among the children of one folder, naming an import behind each step of it."""
    children: dict[str, dict[str, set[str]]] = {}
    behind: dict[tuple[str, str], tuple[str, str]] = {}
    for importer, deps in sorted(graph.items()):
        for dep in sorted(deps):
            if within(dep, importer) or within(importer, dep):  # a package and its own modules
                continue
            parent, ours, theirs = siblings(importer, dep)
            units = children.setdefault(parent, {})
            units.setdefault(ours, set()).add(theirs)
            units.setdefault(theirs, set())
            behind.setdefault((ours, theirs), (importer, dep))
    problems = []
    for parent, units in sorted(children.items()):
        for loop in cycles(units):
            steps = [
                f"{importer} imports {dep}"
                for ours in loop
                for theirs in loop
                if (ours, theirs) in behind
                for importer, dep in [behind[ours, theirs]]
            ]
            problems.append(f"import loop in {parent} among {', '.join(loop)}: " + "; ".join(steps))
    return problems


def main() -> int:
    files = sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))
    modules = {module_name(path) for path in files}
    graph: dict[str, set[str]] = {}
    problems: list[str] = []
    for path in files:
        name = module_name(path)
        graph[name], bare = imports_of(path, name, modules)
        problems += [f"{line} (use the reactstep.* namespace)" for line in bare]
    # a package's __init__ is imported with each of its modules; ours hold only a docstring
    graph = {
        name: {dep for dep in deps if not any(m.startswith(dep + ".") for m in modules)}
        for name, deps in graph.items()
    }
    problems += rule_problems(graph)
    declared = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    present = {module_name(path) for path in files if path.name == "__init__.py"}
    problems += [f"package {p} is not in pyproject.toml's packages" for p in sorted(present - declared)]
    problems += [f"pyproject.toml lists {p}, which is not a package" for p in sorted(declared - present)]
    client = set(
        tomllib.loads((ROOT / "client/pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    wanted = {p for p in present if within(p, "reactstep.client") or within(p, "reactstep.contract")}
    problems += [f"package {p} is not in client/pyproject.toml's packages" for p in sorted(wanted - client)]
    problems += [f"client/pyproject.toml lists {p}, which is not a package" for p in sorted(client - wanted)]
    for problem in problems:
        print(problem)
    edges = sum(map(len, graph.values()))
    print(f"imports: {len(modules)} modules, {edges} imports between them, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
