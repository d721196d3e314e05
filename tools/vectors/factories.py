"""A class's factories ranked beside it.

A factory is a thin function that returns a new instance of a class of its own file (`def lt(val):
return _NumberValidator(val, "<", operator.lt)`). Its body says little; the class says what it does.
A query that describes the behaviour finds the class's code, and the factory, which is the name a
caller writes, ranked far below it or not at all. So each factory in the candidates moves next to the
best hit of its class that stands for the class as a whole (its head, `__init__`, `__new__` or
`__call__`; a hit on another method is about that method): just above it when the class is private
and the factory public (the factory is then the class's only public name), just below it otherwise.
Factories of one class keep their own order; none moves when the query names its class or a member.

Worked out at query time from the candidates' content (Python), so an index needs nothing new; a
function is parsed only when a line returns a call of a class among the candidates of its file.
"""

import ast
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from reactstep.tools.vectors.names import QueryNames, definition_match, query_names
from reactstep.tools.vectors.store import VectorHit

MAX_STATEMENTS = 3  # of a factory's body, its docstring aside
MAX_LINES = 60  # a longer chunk is not parsed (a factory's docstring can be long)
# The methods that stand for the class as a whole: what its factory does is make one, or call it.
WHOLE_CLASS_METHODS = (".__init__", ".__new__", ".__call__")
RETURNED_CALL = re.compile(r"^\s*return\s+([A-Za-z_]\w*)\(", re.MULTILINE)  # before any parsing


@dataclass(frozen=True)
class _Best:
    """A class's best hit among the candidates."""

    score: float
    named: bool  # the query names the class or one of its members
    private: bool  # the class's name starts with an underscore


@lru_cache(maxsize=4096)
def constructed_class(content: str) -> str | None:
    """The name a thin Python function's last statement returns a call of (`return Name(...)`), else None.

    Whether that name is a class of the same file, the caller knows from the chunks it has.
    """
    if content.count("\n") >= MAX_LINES:
        return None
    try:
        tree = ast.parse(textwrap.dedent(content))
    except (SyntaxError, ValueError):  # a window of a long function, a null byte
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    body = tree.body[0].body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if not body or len(body) > MAX_STATEMENTS:
        return None
    returned = body[-1].value if isinstance(body[-1], ast.Return) else None
    if isinstance(returned, ast.Call) and isinstance(returned.func, ast.Name):
        return returned.func.id
    return None


def place_factories(
    ranked: Sequence[tuple[float, VectorHit]], query: str, gap: float
) -> list[tuple[float, VectorHit]]:
    """`ranked` with each factory that scores below its class's best hit moved next to it: to
    `best + gap * own / best` (above) or `best - gap * (1 - own / best)` (below)."""
    classes = _best_of_classes(ranked, query) if gap > 0 else {}
    if not classes:
        return list(ranked)
    placed = []
    for score, hit in ranked:
        best = _class_made_by(hit, classes)
        if best and best.score > score and not best.named:
            public = not str(hit.payload.get("symbol", "")).rsplit(".", 1)[-1].startswith("_")
            if best.private and public:
                score = best.score + gap * score / best.score
            else:
                score = best.score - gap * (1 - score / best.score)
        placed.append((score, hit))
    return sorted(placed, key=lambda pair: (-pair[0], pair[1].id))


def _best_of_classes(ranked: Sequence[tuple[float, VectorHit]], query: str) -> dict[tuple[str, str], _Best]:
    """(path, class name) -> the best of its whole-class hits (head, `__init__`, `__new__`, `__call__`),
    for every class with one among the candidates (which come best first)."""
    names = query_names(query)
    best: dict[tuple[str, str], float] = {}
    named: set[tuple[str, str]] = set()
    for score, hit in ranked:
        symbol = str(hit.payload.get("symbol", ""))
        kind = hit.payload.get("kind")
        if not symbol or kind not in ("class", "method"):
            continue
        key = (str(hit.payload.get("path", "")), symbol.split(".", 1)[0])
        if key[1] in names.code | names.plain or _defines(symbol, names):
            named.add(key)
        if kind == "class" or symbol.endswith(WHOLE_CLASS_METHODS):
            best.setdefault(key, score)
    return {key: _Best(score, key in named, key[1].startswith("_")) for key, score in best.items()}


def _defines(symbol: str, names: QueryNames) -> bool:
    """Whether the query names this symbol, as boost_definitions counts a name (fusion.py)."""
    return definition_match(symbol, names.code) > 0 or definition_match(symbol, names.plain) == 1.0


def _class_made_by(hit: VectorHit, classes: dict[tuple[str, str], _Best]) -> _Best | None:
    """The class among the candidates that this chunk is a factory of, if it is one."""
    if hit.payload.get("kind") != "function" or hit.payload.get("language") != "python":
        return None
    path, content = str(hit.payload.get("path", "")), str(hit.payload.get("content", ""))
    if not any((path, name) in classes for name in RETURNED_CALL.findall(content)):
        return None
    made = constructed_class(content)
    return classes.get((path, made)) if made else None
