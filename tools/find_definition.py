"""find_definition: where a symbol is defined, from the symbol index (seeds/000; seeds/003 inspect_symbol).

info     definitions whose name, qualified name or module-qualified name is `symbol`
         ──► path:line kind qualified_name, then the signature and the docstring's first line
resolve  imports that bind `symbol` (in `file`, or anywhere) ──► the file each import reaches
         ──► the definition there (following re-exports a few hops), else the info listing
kind     function (methods too) | method | class | variable | import (where it is imported)
"""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from reactstep.tools.errors import ToolError
from reactstep.tools.index.symbols import SymbolIndex, current_symbol_index, stale_note
from reactstep.tools.registry import ToolContext, ToolSpec
from reactstep.tools.source.chunking import Import, Symbol
from reactstep.tools.source.module_paths import ModuleResolver, describe_import
from reactstep.tools.store.paths import normalize_path

MAX_DEFINITIONS = 20
MAX_REEXPORT_HOPS = 3
Kind = Literal["function", "method", "class", "variable", "import"]
_KINDS: dict[str, tuple[str, ...]] = {
    "function": ("function", "method"),
    "method": ("method",),
    "class": ("class",),
    "variable": ("variable",),
}


class FindDefinitionArgs(BaseModel):
    """Arguments of find_definition."""

    model_config = ConfigDict(extra="forbid")

    symbol: str = Field(
        min_length=1,
        max_length=300,
        description="A name or qualified name, e.g. 'get_user', 'UserService.get_user' or 'app.models.User'.",
    )
    kind: Kind | None = Field(
        None, description="Only this kind: function (methods too), method, class, variable or import."
    )
    mode: Literal["info", "resolve"] = Field(
        "info", description="info: list definitions; resolve: follow imports of the symbol to its definition."
    )
    file: str | None = Field(None, description="With mode resolve: follow only the imports in this file.")


def find_definition(args: FindDefinitionArgs, context: ToolContext) -> str:
    """The observation for one lookup."""
    index, left_out = current_symbol_index(context.store, context.project_id, "find_definition")
    return _answer(args, index) + stale_note(left_out, context.project_id)


def _answer(args: FindDefinitionArgs, index: SymbolIndex) -> str:
    symbol = args.symbol.strip()
    if args.kind == "import":
        return _render_imports(index, symbol, binding_imports(index, symbol, None))
    kinds = _KINDS[args.kind] if args.kind else ("function", "method", "class", "variable")
    resolver = ModuleResolver(index.files)
    if args.mode == "info":
        return _render_definitions(symbol, definitions_of(index, resolver, symbol, kinds), args.kind)
    file = normalize_path(args.file) if args.file else None
    if file is not None and file not in index.files:
        raise ToolError(f"{file} is not in the symbol index; give the path of an indexed file")
    return _resolve(index, resolver, symbol, kinds, file)


def definitions_of(
    index: SymbolIndex, resolver: ModuleResolver, symbol: str, kinds: tuple[str, ...], path: str | None = None
) -> list[Symbol]:
    """Definitions `symbol` names: by name, qualified name or its tail, or module path + qualified name."""
    files = [path] if path is not None else sorted(index.files)
    found = {
        (s.path, s.line, s.qualified_name): s
        for file in files
        for s in index.files[file].symbols
        if s.kind in kinds and _names(s, symbol)
    }
    for dot in (i for i, char in enumerate(symbol) if char == "."):
        module_path = resolver.python_module(symbol[:dot])
        if module_path is not None and path in (None, module_path):
            for s in index.files[module_path].symbols:
                if s.kind in kinds and s.qualified_name == symbol[dot + 1 :]:
                    found[(s.path, s.line, s.qualified_name)] = s
    return [found[key] for key in sorted(found)]


def _names(definition: Symbol, symbol: str) -> bool:
    qualified = definition.qualified_name
    return symbol in (definition.name, qualified) or qualified.endswith("." + symbol)


def binding_imports(index: SymbolIndex, symbol: str, file: str | None, *, star: bool = False) -> list[Import]:
    """Imports that bring `symbol`'s first part into a file (`from x import User` binds User); with
    `star`, also those that bring in everything (`export * from "./x"`)."""
    names = {symbol.split(".")[0], "*"} if star else {symbol.split(".")[0]}
    files = [file] if file is not None else sorted(index.files)
    return [i for path in files for i in index.files[path].imports if names.intersection(i.names)]


def _resolve(
    index: SymbolIndex, resolver: ModuleResolver, symbol: str, kinds: tuple[str, ...], file: str | None
) -> str:
    """Each import of `symbol` with the definition it leads to; the info listing when none imports it."""
    blocks = []
    local = definitions_of(index, resolver, symbol, kinds, file) if file is not None else []
    if local:
        blocks.append("\n".join([f"{file} defines {symbol} itself:", *map(_describe, local)]))
    imports = binding_imports(index, symbol, file)
    for statement in imports[:MAX_DEFINITIONS]:
        found = _follow(index, resolver, statement, symbol, kinds)
        blocks.append("\n".join([_import_line(index, statement), *_arrowed(found)]))
    if len(imports) > MAX_DEFINITIONS:
        blocks.append(f"...and {len(imports) - MAX_DEFINITIONS} more imports")
    if not blocks:
        listing = _render_definitions(symbol, definitions_of(index, resolver, symbol, kinds), None)
        return f"No import of {symbol}{f' in {file}' if file else ''} in the index.\n{listing}"
    return "\n\n".join(blocks)


def _follow(
    index: SymbolIndex, resolver: ModuleResolver, statement: Import, symbol: str, kinds: tuple[str, ...]
) -> list[Symbol]:
    """The definitions an import of `symbol` reaches, through up to MAX_REEXPORT_HOPS re-exports."""
    pending, seen = [statement], set[str]()
    for _ in range(MAX_REEXPORT_HOPS + 1):
        targets = (t for i in pending for t in resolver.targets(i, index.language_of(i.path)) if t.names)
        reached = sorted({t.path for t in targets} - seen)
        seen.update(reached)
        found = [d for path in reached for d in definitions_of(index, resolver, symbol, kinds, path)]
        if found or not reached:
            return found
        pending = [i for path in reached for i in binding_imports(index, symbol, path, star=True)]
    return []


def _arrowed(found: list[Symbol]) -> list[str]:
    """The definitions an import leads to, under it."""
    if not found:
        return ["  -> not defined in this project (a package, or a name the index does not hold)"]
    lines = [line for definition in found for line in _describe(definition).splitlines()]
    return [("  -> " if not line.startswith(" ") else "     ") + line for line in lines]


def _render_definitions(symbol: str, found: list[Symbol], kind: str | None) -> str:
    what = f"{kind} definition" if kind else "definition"
    if not found:
        return f'No {what} of "{symbol}" in the index. Try code_search or grep for other spellings.'
    shown = found[:MAX_DEFINITIONS]
    header = f'{len(found)} {what}{"s" if len(found) != 1 else ""} of "{symbol}":'
    text = "\n".join([header, *(_describe(s) for s in shown)])
    return text + (f"\n...and {len(found) - len(shown)} more" if len(found) > len(shown) else "")


def _render_imports(index: SymbolIndex, symbol: str, found: list[Import]) -> str:
    if not found:
        return f'No import of "{symbol}" in the index.'
    lines = [_import_line(index, statement) for statement in found[:MAX_DEFINITIONS]]
    header = f'{len(found)} import{"s" if len(found) != 1 else ""} of "{symbol}":'
    text = "\n".join([header, *lines])
    return text + (f"\n...and {len(found) - len(lines)} more" if len(found) > len(lines) else "")


def _import_line(index: SymbolIndex, statement: Import) -> str:
    return (
        f"{statement.path}:{statement.line}: {describe_import(statement, index.language_of(statement.path))}"
    )


def _describe(definition: Symbol) -> str:
    """path:line kind name, then the signature's and the docstring's first lines, indented."""
    lines = [f"{definition.path}:{definition.line} {definition.kind} {definition.qualified_name}"]
    if definition.signature:
        lines.append(f"    {definition.signature.splitlines()[0]}")
    if definition.docstring:
        lines.append(f"    {definition.docstring.splitlines()[0]}")
    return "\n".join(lines)


SPEC = ToolSpec(
    name="find_definition",
    description=(
        "Finds where a function, class, method or variable is defined, from the project's symbol index; "
        "returns path:line, kind, signature and docstring. mode=resolve follows the imports of the symbol "
        "to the file that defines it; kind narrows the search (kind=import lists where it is imported)."
    ),
    category="search",
    args_model=FindDefinitionArgs,
    run=find_definition,
    example='find_definition(symbol="UserService.get_user")',
    aliases={
        "name": "symbol",
        "symbol_name": "symbol",
        "identifier": "symbol",
        "path": "file",
        "file_path": "file",
    },
)
