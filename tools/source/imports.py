"""Import statements in a syntax tree, for find_importers.

    root --find_nodes(query of the language)--> import nodes --reader of the language--> ImportStatement

Imports are found anywhere in a file, not only at its top: a deferred import inside a function still
makes the file an importer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from reactstep.tools.source.syntax import Node, find_nodes, text_of

__all__ = ["ImportStatement", "read_imports"]


@dataclass(frozen=True)
class ImportStatement:
    """One imported module: `from a.b import c, d` is module "a.b" with names ("c", "d")."""

    line: int
    module: str
    names: tuple[str, ...]


def read_imports(language: str, root: Node) -> list[ImportStatement]:
    """The imports under `root`, in source order."""
    query, reader = _READERS[language]
    return [statement for node in find_nodes(language, query, root) for statement in reader(node)]


def _python(node: Node) -> list[ImportStatement]:
    line = node.start_point.row + 1
    if node.type == "import_statement":
        return [ImportStatement(line, _unaliased(name), ()) for name in node.children_by_field_name("name")]
    # Relative imports keep their dots: `from ..models import User` is module "..models".
    module = "".join(text_of(node.child_by_field_name("module_name")).split())
    names = tuple(_unaliased(name) for name in node.children_by_field_name("name"))
    if any(child.type == "wildcard_import" for child in node.named_children):
        names = ("*",)
    return [ImportStatement(line, module, names)]


def _unaliased(node: Node) -> str:
    return text_of(node.child_by_field_name("name") if node.type == "aliased_import" else node)


def _javascript(node: Node) -> list[ImportStatement]:
    line = node.start_point.row + 1
    if node.type == "call_expression":
        arguments = node.child_by_field_name("arguments")
        source = arguments.named_children[0] if arguments is not None else None
        return [ImportStatement(line, _string_value(source), _required_names(node))]
    source = node.child_by_field_name("source")
    names: list[str] = []
    for clause in node.named_children:
        if clause.type == "import_require_clause":
            source = clause.child_by_field_name("source")
        elif clause.type == "import_clause":
            names.extend(_import_clause_names(clause))
        elif clause.type == "export_clause":
            names.extend(_specifier_names(clause, "export_specifier"))
        elif clause.type == "namespace_export":
            names.append("*")
    if node.type == "export_statement" and not names:
        names.append("*")  # `export * from "./x"`
    return [ImportStatement(line, _string_value(source), tuple(names))]


def _import_clause_names(clause: Node) -> list[str]:
    """`import d, {a, b as c}` gives default, a, b; `import * as ns` gives *."""
    names: list[str] = []
    for part in clause.named_children:
        if part.type == "identifier":
            names.append("default")
        elif part.type == "namespace_import":
            names.append("*")
        elif part.type == "named_imports":
            names.extend(_specifier_names(part, "import_specifier"))
    return names


def _specifier_names(node: Node, specifier_type: str) -> list[str]:
    specifiers = [part for part in node.named_children if part.type == specifier_type]
    return [text_of(specifier.child_by_field_name("name")) for specifier in specifiers]


def _required_names(call: Node) -> tuple[str, ...]:
    """The names destructured from a require: `const {a, b: c} = require("x")` gives a, b."""
    declarator = call.parent
    pattern = declarator.child_by_field_name("name") if declarator is not None else None
    if declarator is None or declarator.type != "variable_declarator" or pattern is None:
        return ()
    if pattern.type != "object_pattern":
        return ()
    names = []
    for part in pattern.named_children:
        if part.type == "shorthand_property_identifier_pattern":
            names.append(text_of(part))
        elif part.type == "pair_pattern":
            names.append(text_of(part.child_by_field_name("key")))
    return tuple(names)


def _string_value(node: Node | None) -> str:
    return text_of(node)[1:-1]


def _go(node: Node) -> list[ImportStatement]:
    return [ImportStatement(node.start_point.row + 1, _string_value(node.child_by_field_name("path")), ())]


def _rust(node: Node) -> list[ImportStatement]:
    module, names = _rust_use_tree(node.child_by_field_name("argument"))
    return [ImportStatement(node.start_point.row + 1, module, names)]


def _rust_use_tree(node: Node | None) -> tuple[str, tuple[str, ...]]:
    """`use a::b::C` is module "a::b" with names ("C",); `use a::{b, c}` and `use a::*` likewise."""
    if node is None:
        return "", ()
    if node.type == "use_as_clause":
        return _rust_use_tree(node.child_by_field_name("path"))
    if node.type == "scoped_identifier":
        return text_of(node.child_by_field_name("path")), (text_of(node.child_by_field_name("name")),)
    if node.type in ("scoped_use_list", "use_list"):
        items = node.child_by_field_name("list") if node.type == "scoped_use_list" else node
        names = tuple(text_of(item) for item in items.named_children) if items is not None else ()
        return text_of(node.child_by_field_name("path")), names
    if node.type == "use_wildcard":
        return text_of(node.named_children[0] if node.named_children else None), ("*",)
    return text_of(node), ()


def _java(node: Node) -> list[ImportStatement]:
    line = node.start_point.row + 1
    target = next((child for child in node.named_children if child.type != "asterisk"), None)
    if any(child.type == "asterisk" for child in node.named_children):
        return [ImportStatement(line, text_of(target), ("*",))]
    if target is not None and target.type == "scoped_identifier":
        scope, name = target.child_by_field_name("scope"), target.child_by_field_name("name")
        return [ImportStatement(line, text_of(scope), (text_of(name),))]
    return [ImportStatement(line, text_of(target), ())]


_JAVASCRIPT_QUERY = """
(import_statement) @match
(export_statement source: (string)) @match
(call_expression
  function: (identifier) @callee arguments: (arguments . (string)) (#eq? @callee "require")) @match
(call_expression function: (import) arguments: (arguments . (string))) @match
"""
_READERS: dict[str, tuple[str, Callable[[Node], list[ImportStatement]]]] = {
    "python": ("[(import_statement) (import_from_statement)] @match", _python),
    "javascript": (_JAVASCRIPT_QUERY, _javascript),
    "typescript": (_JAVASCRIPT_QUERY, _javascript),
    "tsx": (_JAVASCRIPT_QUERY, _javascript),
    "go": ("(import_spec) @match", _go),
    "rust": ("(use_declaration) @match", _rust),
    "java": ("(import_declaration) @match", _java),
}
