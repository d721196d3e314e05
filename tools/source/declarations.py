"""How the syntax trees of our languages declare things: the one definition a wrapper holds, functions
assigned to names, a Go method's receiver, the plain names a declaration binds (definitions.py walks them).
"""

from __future__ import annotations

from reactstep.tools.source.syntax import Node, text_of

# Values that turn `const name = ...` or a class field into a function.
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "generator_function", "function"})
_FIELDS = frozenset({"field_definition", "public_field_definition"})
_SINGLE_PARTS = frozenset({"variable_declarator", "type_spec", "type_alias"})
_DECLARATORS = frozenset({"assignment", "variable_declarator", "const_spec", "var_spec", "var_spec_list"})


def wrapped(node: Node) -> Node | None:
    """The one definition a wrapper holds, or None."""
    if node.type == "decorated_definition":
        return node.child_by_field_name("definition")
    if node.type == "export_statement":
        return node.child_by_field_name("declaration")
    if node.type == "ambient_declaration":
        return node.named_children[0] if node.named_children else None
    # `const a = () => 1` and `type T struct{}` define one thing; `const a = 1, b = 2` defines none.
    parts = [child for child in node.named_children if child.type in _SINGLE_PARTS]
    if len(parts) != 1 or (parts[0].type == "variable_declarator" and function_value(parts[0]) is None):
        return None
    return parts[0]


def before_block(node: Node) -> Node | None:
    """What precedes the block `node` opens: Python puts comments above a block's first statement there."""
    block = node.parent
    if block is None or block.type != "block" or block.start_byte != node.start_byte:
        return None
    return block.prev_named_sibling


def function_value(node: Node) -> Node | None:
    """The function assigned by a declarator or class field, if any."""
    if node.type != "variable_declarator" and node.type not in _FIELDS:
        return None
    value = node.child_by_field_name("value")
    return value if value is not None and value.type in _FUNCTION_VALUES else None


def body_of(node: Node) -> Node | None:
    return (function_value(node) or node).child_by_field_name("body")


def receiver_scope(node: Node) -> tuple[str, ...]:
    """A Go method's receiver type as its scope: `func (s *Server) Handle()` is `Server.Handle`."""
    receiver = node.child_by_field_name("receiver")
    type_name = text_of(first_type_identifier(receiver))
    return (type_name,) if type_name else ()


def first_type_identifier(node: Node | None) -> Node | None:
    """The first type name in a type expression: `*Server` and `Vec<T>` give `Server` and `Vec`."""
    pending = [node] if node is not None else []
    while pending:
        current = pending.pop()
        if current.type == "type_identifier":
            return current
        pending.extend(reversed(current.named_children))
    return None


def declared_names(node: Node) -> list[Node]:
    """The plain names a declaration binds; destructuring patterns bind none here."""
    if node.type == "assignment":
        target = node.child_by_field_name("left")
        targets = target.named_children if target is not None and target.type == "pattern_list" else [target]
        return [target for target in targets if target is not None and target.type == "identifier"]
    names = [name for name in node.children_by_field_name("name") if name.type == "identifier"]
    if names:
        return names
    declarators = [child for child in node.named_children if child.type in _DECLARATORS]
    return [name for declarator in declarators for name in declared_names(declarator)]
