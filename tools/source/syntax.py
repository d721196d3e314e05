"""Tree-sitter parsing: the only importer of tree_sitter, and the node tables of each language.

    source bytes --parse()--> Tree --(definitions.py, imports.py walk it with NodeTable)--> records

Parsers, languages and queries are built once per process (functools.cache): building them is the slow
part, parsing a file is fast.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import tree_sitter
import tree_sitter_go
import tree_sitter_java
import tree_sitter_javascript
import tree_sitter_python
import tree_sitter_rust
import tree_sitter_typescript
from tree_sitter import Node

__all__ = [
    "SYNTAX_LANGUAGES",
    "Node",
    "NodeTable",
    "end_line",
    "find_nodes",
    "node_table",
    "parse",
    "text_of",
]

_GRAMMARS: dict[str, Callable[[], object]] = {
    "python": tree_sitter_python.language,
    "javascript": tree_sitter_javascript.language,
    "typescript": tree_sitter_typescript.language_typescript,
    "tsx": tree_sitter_typescript.language_tsx,
    "go": tree_sitter_go.language,
    "rust": tree_sitter_rust.language,
    "java": tree_sitter_java.language,
}
SYNTAX_LANGUAGES = frozenset(_GRAMMARS)


@dataclass(frozen=True)
class NodeTable:
    """Which node types of one grammar define what; every field is a set of node type names."""

    functions: frozenset[str]
    classes: frozenset[str]
    impls: frozenset[str] = frozenset()  # blocks of methods for a type defined elsewhere (Rust `impl`)
    namespaces: frozenset[str] = frozenset()  # scopes chunked like a module (Rust `mod`, TS `namespace`)
    wrappers: frozenset[str] = frozenset()  # hold one definition and lend it their range (decorators, export)
    nesting: frozenset[str] = frozenset()  # statements searched for definitions without opening a scope
    variables: frozenset[str] = frozenset()
    comments: frozenset[str] = frozenset({"comment"})
    decorators: frozenset[str] = frozenset()  # siblings placed before a definition that belong to it


_JAVASCRIPT = NodeTable(
    functions=frozenset({"function_declaration", "generator_function_declaration", "method_definition"}),
    classes=frozenset({"class_declaration"}),
    wrappers=frozenset({"export_statement", "lexical_declaration", "variable_declaration"}),
    nesting=frozenset({"statement_block", "if_statement", "else_clause", "try_statement", "finally_clause"}),
    variables=frozenset({"lexical_declaration", "variable_declaration"}),
    decorators=frozenset({"decorator"}),
)
_TYPESCRIPT = NodeTable(
    functions=_JAVASCRIPT.functions,
    classes=_JAVASCRIPT.classes
    | {"abstract_class_declaration", "interface_declaration", "enum_declaration", "type_alias_declaration"},
    namespaces=frozenset({"internal_module", "module"}),
    wrappers=_JAVASCRIPT.wrappers | {"ambient_declaration"},
    # `namespace X {}` parses as an expression statement.
    nesting=_JAVASCRIPT.nesting | {"expression_statement"},
    variables=_JAVASCRIPT.variables,
    decorators=_JAVASCRIPT.decorators,
)
_TABLES = {
    "python": NodeTable(
        functions=frozenset({"function_definition"}),
        classes=frozenset({"class_definition"}),
        wrappers=frozenset({"decorated_definition"}),
        nesting=frozenset(
            {"block", "if_statement", "elif_clause", "else_clause", "try_statement", "except_clause"}
            | {"finally_clause", "with_statement", "for_statement", "while_statement"}
        ),
        variables=frozenset({"expression_statement"}),
    ),
    "javascript": _JAVASCRIPT,
    "typescript": _TYPESCRIPT,
    "tsx": _TYPESCRIPT,
    "go": NodeTable(
        functions=frozenset({"function_declaration", "method_declaration"}),
        classes=frozenset({"type_spec", "type_alias"}),
        # A `type (...)` group holding several types is searched instead of unwrapped.
        wrappers=frozenset({"type_declaration"}),
        nesting=frozenset({"type_declaration"}),
        variables=frozenset({"const_declaration", "var_declaration"}),
    ),
    "rust": NodeTable(
        functions=frozenset({"function_item"}),
        classes=frozenset({"struct_item", "enum_item", "trait_item", "union_item", "type_item"}),
        impls=frozenset({"impl_item"}),
        namespaces=frozenset({"mod_item"}),
        variables=frozenset({"const_item", "static_item"}),
        comments=frozenset({"line_comment", "block_comment"}),
        decorators=frozenset({"attribute_item"}),
    ),
    "java": NodeTable(
        functions=frozenset(
            {"method_declaration", "constructor_declaration", "compact_constructor_declaration"}
        ),
        classes=frozenset(
            {"class_declaration", "interface_declaration", "enum_declaration", "record_declaration"}
            | {"annotation_type_declaration"}
        ),
        nesting=frozenset({"enum_body_declarations"}),
        variables=frozenset({"field_declaration"}),
        comments=frozenset({"line_comment", "block_comment"}),
    ),
}


def node_table(language: str) -> NodeTable:
    """The node table of a language in SYNTAX_LANGUAGES."""
    return _TABLES[language]


@functools.cache
def _language(language: str) -> tree_sitter.Language:
    return tree_sitter.Language(_GRAMMARS[language]())


@functools.cache
def _parser(language: str) -> tree_sitter.Parser:
    return tree_sitter.Parser(_language(language))


@functools.cache
def _query(language: str, source: str) -> tree_sitter.Query:
    return tree_sitter.Query(_language(language), source)


def parse(language: str, source: bytes) -> Node:
    """The root node of `source`; broken syntax yields ERROR nodes, never an exception."""
    return _parser(language).parse(source).root_node


def find_nodes(language: str, query: str, root: Node) -> list[Node]:
    """Every node captured as `@match` by a tree-sitter query, in source order."""
    captures = tree_sitter.QueryCursor(_query(language, query)).captures(root)
    return sorted(captures.get("match", []), key=lambda node: node.start_byte)


def text_of(node: Node | None) -> str:
    """The source text of a node ("" for none)."""
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


def end_line(node: Node) -> int:
    """The 1-based last line of a node; a node ending just after a newline ends on the line before."""
    row, column = node.end_point
    if column == 0 and row > node.start_point[0]:
        return int(row)
    return int(row) + 1
