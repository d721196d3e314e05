"""find_importers: which files import a module or a symbol, from the symbol index (seeds/000).

module ──► project files it names: an indexed path ('src/models.py'), a Python module ('app.models'),
           a JS/TS path with or without suffix ('web/api', './models', '../services/Db': matched as
           a path ending) ──► every import whose resolved target is one of them (module_paths.py)
       ──► none: a package outside the project ('react', 'flask'): imports of that name or below it
symbol ──► only imports that take that name (or `*`) from the module
"""

import posixpath

from pydantic import BaseModel, ConfigDict, Field

from reactstep.tools.index.symbols import SymbolIndex, current_symbol_index, stale_note
from reactstep.tools.registry import ToolContext, ToolSpec
from reactstep.tools.source.chunking import Import
from reactstep.tools.source.module_paths import ModuleResolver, describe_import, is_python, is_script
from reactstep.tools.store.paths import normalize_path

MAX_IMPORTERS = 100
MAX_TARGETS = 5


class FindImportersArgs(BaseModel):
    """Arguments of find_importers."""

    model_config = ConfigDict(extra="forbid")

    module: str = Field(
        min_length=1,
        max_length=300,
        description="A module: 'app.models', 'src/models.py', './models' or a package name like 'react'.",
    )
    symbol: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        description="Only imports of this name from the module, e.g. 'User'.",
    )


def find_importers(args: FindImportersArgs, context: ToolContext) -> str:
    """Sorted `path:line: import` lines of the imports of the module (and symbol)."""
    index, left_out = current_symbol_index(context.store, context.project_id, "find_importers")
    return _answer(args, index) + stale_note(left_out, context.project_id)


def _answer(args: FindImportersArgs, index: SymbolIndex) -> str:
    resolver = ModuleResolver(index.files)
    module = args.module.strip()
    targets = module_files(index, resolver, module)
    if targets:
        found = _project_importers(index, resolver, targets, args.symbol)
        subject = ", ".join(targets[:MAX_TARGETS]) + (" ..." if len(targets) > MAX_TARGETS else "")
    else:
        found = _package_importers(index, module, args.symbol)
        subject = f'"{module}" (not a project file: matched by name)'
    return _render(index, found, f"{args.symbol} from {subject}" if args.symbol else subject)


def module_files(index: SymbolIndex, resolver: ModuleResolver, module: str) -> list[str]:
    """The indexed files `module` names, as a path, a Python module or a JS/TS path ending."""
    if "/" not in module and not module.startswith("."):
        found = module if module in index.files else resolver.python_module(module)
        found = found or resolver.script_module(module)
        return [found] if found is not None else []
    clean = normalize_path(module.lstrip("./")) if module.startswith(".") else normalize_path(module)
    direct = clean if clean in index.files else resolver.script_module(clean)
    if direct is not None and not module.startswith("."):
        return [direct]
    # './models' or '../services/Db' has no importer here to be relative to: any file ending so matches.
    return sorted(path for path in index.files if _ends_as(path, clean))


def _ends_as(path: str, ending: str) -> bool:
    """Whether `path`, without suffix or /index.*, ends with the path `ending`."""
    stem = posixpath.splitext(path)[0]
    stems = {stem, stem.removesuffix("/index"), stem.removesuffix("/__init__"), path}
    return any(s == ending or s.endswith("/" + ending) for s in stems)


def _project_importers(
    index: SymbolIndex, resolver: ModuleResolver, targets: list[str], symbol: str | None
) -> list[Import]:
    wanted = set(targets)
    found = []
    for statement in index.imports():
        reached = resolver.targets(statement, index.language_of(statement.path))
        hits = [t for t in reached if t.path in wanted and t.path != statement.path]
        if hits and (symbol is None or any(_takes(t.names, symbol) for t in hits)):
            found.append(statement)
    return found


def _package_importers(index: SymbolIndex, module: str, symbol: str | None) -> list[Import]:
    found = []
    for statement in index.imports():
        language = index.language_of(statement.path)
        separator = "." if is_python(language) else "/" if is_script(language) else ""
        below = bool(separator) and statement.module.startswith(module + separator)
        if (statement.module == module or below) and (symbol is None or _takes(statement.names, symbol)):
            found.append(statement)
    return found


def _takes(names: tuple[str, ...], symbol: str) -> bool:
    return symbol in names or "*" in names


def _render(index: SymbolIndex, found: list[Import], subject: str) -> str:
    if not found:
        return f"No file imports {subject}."
    found = sorted(found, key=lambda statement: (statement.path, statement.line))
    files = len({statement.path for statement in found})
    header = f"Imports of {subject}: {len(found)} in {_count(files, 'file')}"
    lines = [
        f"{s.path}:{s.line}: {describe_import(s, index.language_of(s.path))}" for s in found[:MAX_IMPORTERS]
    ]
    more = [f"...and {len(found) - MAX_IMPORTERS} more"] if len(found) > MAX_IMPORTERS else []
    return "\n".join([header, *lines, *more])


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


SPEC = ToolSpec(
    name="find_importers",
    description=(
        "Lists the files that import a module (or one symbol from it), resolving relative imports in "
        "Python and JS/TS; returns path:line and the import statement. Use it to see what a change affects."
    ),
    category="search",
    args_model=FindImportersArgs,
    run=find_importers,
    example='find_importers(module="app.models", symbol="User")',
    aliases={"module_name": "module", "name": "symbol"},
)
