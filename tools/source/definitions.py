"""Definitions in a syntax tree: functions, methods, types and namespaces, nested as in the source.

    root --_Walker.collect()--> [Definition(members=(...))] + variables at module and class level

Only the bodies of classes, impls and namespaces are searched: a function's body belongs to its chunk, so
the closures inside it are neither chunks nor symbols. A definition's range grows upwards over the
decorators and the comment block directly above it.
"""

from __future__ import annotations

from dataclasses import dataclass

from reactstep.tools.source.declarations import (
    before_block,
    body_of,
    declared_names,
    first_type_identifier,
    function_value,
    receiver_scope,
    wrapped,
)
from reactstep.tools.source.docstrings import comment_summary, docstring_summary
from reactstep.tools.source.syntax import Node, NodeTable, end_line, node_table, text_of

__all__ = ["Definition", "Definitions", "read_definitions"]

# Children a header starts after: decorators, annotations and attributes are not part of a signature.
_NOT_HEADER = frozenset(
    {"decorator", "marker_annotation", "annotation", "attribute_item"}
    | {"comment", "line_comment", "block_comment"}
)


@dataclass(frozen=True)
class Definition:
    """One definition: kind is function, method, class, impl, namespace or variable."""

    kind: str
    name: str
    qualified_name: str
    start_line: int  # the first line of its decorators and leading comments
    line: int  # the line its header starts on
    end_line: int
    signature: str
    docstring: str
    members: tuple[Definition, ...] = ()


@dataclass(frozen=True)
class Definitions:
    """The definitions of a file (a tree) and its module- and class-level variables (a flat list)."""

    definitions: list[Definition]
    variables: list[Definition]


def read_definitions(language: str, root: Node, source: bytes) -> Definitions:
    """The definitions under `root`, parsed from `source` in `language`."""
    walker = _Walker(node_table(language), source)
    definitions = walker.collect(root, (), in_class=False)
    return Definitions(definitions, walker.variables)


class _Walker:
    """Walks statement-level nodes only, so its cost follows the number of statements, not of tokens."""

    def __init__(self, table: NodeTable, source: bytes) -> None:
        self.table = table
        self.source = source
        self.leading_types = table.comments | table.decorators
        self.variables: list[Definition] = []

    def collect(self, parent: Node, scope: tuple[str, ...], *, in_class: bool) -> list[Definition]:
        """The definitions among `parent`'s children, searching through nesting statements."""
        found: list[Definition] = []
        for child in parent.named_children:
            definition = self.read_definition(child, scope, in_class=in_class)
            if definition is not None:
                found.append(definition)
            elif child.type in self.table.nesting:
                found.extend(self.collect(child, scope, in_class=in_class))
            else:
                self.variables.extend(self.read_variables(child, scope))
        return found

    def read_definition(self, outer: Node, scope: tuple[str, ...], *, in_class: bool) -> Definition | None:
        """The definition `outer` holds (itself or through wrappers), or None."""
        node = self.unwrap(outer)
        kind = None if node is None else self.kind_of(node, in_class=in_class)
        if node is None or kind is None:
            return None
        name = self.name_of(node)
        if not name:
            return None
        owner = receiver_scope(node) or scope
        leading = self.leading_nodes(outer)
        header = self.header_start(outer)
        return Definition(
            kind=kind,
            name=name,
            qualified_name=".".join((*owner, name)),
            start_line=(leading[0] if leading else outer).start_point.row + 1,
            line=header.start_point.row + 1,
            end_line=end_line(outer),
            signature=self.signature(header, node),
            docstring=self.docstring(node, leading),
            members=self.members_of(node, kind, (*owner, name)),
        )

    def unwrap(self, node: Node) -> Node | None:
        """The definition inside decorators, `export`, `const x = () => ...` and `type` groups."""
        while node.type in self.table.wrappers:
            inner = wrapped(node)
            if inner is None:
                return None
            node = inner
        return node

    def kind_of(self, node: Node, *, in_class: bool) -> str | None:
        """function, method, class, impl or namespace; None when `node` defines none of these."""
        if node.type in self.table.classes:
            return "class"
        if node.type in self.table.impls:
            return "impl"
        if node.type in self.table.namespaces:
            return "namespace"
        if node.type in self.table.functions or function_value(node) is not None:
            is_method = in_class or node.child_by_field_name("receiver") is not None
            return "method" if is_method else "function"
        return None

    def name_of(self, node: Node) -> str:
        """The defined name; an impl is named after the type it implements."""
        if node.type in self.table.impls:
            return text_of(first_type_identifier(node.child_by_field_name("type")))
        name = node.child_by_field_name("name") or node.child_by_field_name("property")
        return text_of(name).strip("\"'")

    def members_of(self, node: Node, kind: str, scope: tuple[str, ...]) -> tuple[Definition, ...]:
        """The definitions in the body of a class, impl or namespace."""
        body = body_of(node)
        if kind not in ("class", "impl", "namespace") or body is None:
            return ()
        return tuple(self.collect(body, scope, in_class=kind != "namespace"))

    def leading_nodes(self, outer: Node) -> list[Node]:
        """Decorators and comments directly above `outer`, each on a line of its own, top first."""
        nodes: list[Node] = []
        sibling = outer.prev_named_sibling or before_block(outer)
        top_row = outer.start_point.row
        while sibling is not None and sibling.type in self.leading_types:
            if end_line(sibling) < top_row or not self.starts_line(sibling):
                break
            nodes.insert(0, sibling)
            top_row = sibling.start_point.row
            sibling = sibling.prev_named_sibling
        return nodes

    def starts_line(self, node: Node) -> bool:
        """Whether only whitespace precedes `node` on its first line (not a comment trailing code)."""
        return not self.line_before(node).strip()

    def line_before(self, node: Node) -> bytes:
        """The text between the start of `node`'s first line and `node`."""
        line_start = self.source.rfind(b"\n", 0, node.start_byte) + 1
        return self.source[line_start : node.start_byte]

    def header_start(self, outer: Node) -> Node:
        """The first token of the header: past decorators, annotations and comments."""
        for child in outer.children:
            if child.type == "modifiers":
                for modifier in child.children:
                    if modifier.type not in _NOT_HEADER:
                        return modifier
            elif child.type not in _NOT_HEADER:
                return child
        return outer

    def signature(self, header: Node, node: Node) -> str:
        """The header up to its body or first comment, or its first line when the body is not a node."""
        body = body_of(node)
        # Python parents the comments above a block's first statement to the definition, not the block.
        comment = next((c for c in node.children if c.type in self.table.comments), None)
        ends = [n.start_byte for n in (body, comment) if n is not None and n.start_byte > header.start_byte]
        if ends:
            end = min(ends)
        else:
            end = self.source.find(b"\n", header.start_byte)
            end = len(self.source) if end < 0 else end
        before = self.line_before(header)
        indent = before[: len(before) - len(before.lstrip())]
        # Continuation lines lose the header's own indentation, as if it were at the top level.
        text = self.source[header.start_byte : end].replace(b"\r\n", b"\n").replace(b"\n" + indent, b"\n")
        return text.decode("utf-8", errors="replace").rstrip().removesuffix("{").rstrip()

    def docstring(self, node: Node, leading: list[Node]) -> str:
        """The first paragraph of a Python docstring, else of the comments directly above."""
        body = body_of(node)
        docstring = self.python_docstring(body) if body is not None else ""
        if docstring:
            return docstring
        return comment_summary([text_of(node) for node in leading if node.type in self.table.comments])

    def python_docstring(self, body: Node) -> str:
        """The docstring opening a Python block; other grammars never give a `block` of `string`."""
        first = body.named_children[0] if body.type == "block" and body.named_children else None
        if first is None or first.type != "expression_statement" or first.named_child_count != 1:
            return ""
        string = first.named_children[0]
        parts = string.named_children
        if string.type != "string" or len(parts) < 2:
            return ""
        raw = self.source[parts[0].end_byte : parts[-1].start_byte].decode("utf-8", errors="replace")
        return docstring_summary(raw)

    def read_variables(self, node: Node, scope: tuple[str, ...]) -> list[Definition]:
        """The names a module- or class-level declaration binds, as variable definitions."""
        statement = node
        if node.type == "export_statement":
            node = node.child_by_field_name("declaration") or node
        if node.type not in self.table.variables:
            return []
        return [self.variable(name, statement, scope) for name in declared_names(node)]

    def variable(self, name: Node, statement: Node, scope: tuple[str, ...]) -> Definition:
        """A variable definition; its signature is the source line that binds it."""
        line_end = self.source.find(b"\n", name.start_byte)
        rest = self.source[name.start_byte : line_end if line_end >= 0 else len(self.source)]
        return Definition(
            kind="variable",
            name=text_of(name),
            qualified_name=".".join((*scope, text_of(name))),
            start_line=name.start_point.row + 1,
            line=name.start_point.row + 1,
            end_line=end_line(statement),
            signature=(self.line_before(name) + rest).decode("utf-8", errors="replace").strip(),
            docstring="",
        )
