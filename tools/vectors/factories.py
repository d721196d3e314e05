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

from reactstep.tools.vectors.names import names_symbol, query_names
from reactstep.tools.vectors.store import VectorHit

MAX_STATEMENTS = 3  # of a factory's body, its docstring aside
MAX_LINES = 60  # a longer chunk is not parsed (a factory's docstring can be long)
# The methods that stand for the class as a whole: what its factory does is make one, or call it.
WHOLE_CLASS_METHODS = (".__init__", ".__new__", ".__call__")
# A cheap look before any parsing (its literal start lets the engine scan fast: ~0.5 us a chunk).
RETURNED_CALL = re.compile(r"return[ \t]+([A-Za-z_]\w*)\(")


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
    returned = {hit.id: _returned_calls(hit) for _, hit in ranked} if gap > 0 else {}
    classes = _best_of_classes(ranked, query, set().union(*returned.values()))
    if not classes:
        return list(ranked)
    placed = []
    for score, hit in ranked:
        best = classes.get(_made_class(hit)) if returned[hit.id] & classes.keys() else None
        if best and best.score > score and not best.named:
            public = not str(hit.payload.get("symbol", "")).rsplit(".", 1)[-1].startswith("_")
            if best.private and public:
                score = best.score + gap * score / best.score
            else:
                score = best.score - gap * (1 - score / best.score)
        placed.append((score, hit))
    return sorted(placed, key=lambda pair: (-pair[0], pair[1].id))


def _returned_calls(hit: VectorHit) -> set[tuple[str, str]]:
    """(path, name) of each `return Name(` line of a Python function's chunk: its classes, if it is a
    factory of one (a cheap look before any parsing)."""
    content = str(hit.payload.get("content", ""))
    if hit.payload.get("kind") != "function" or hit.payload.get("language") != "python":
        return set()
    if content.count("\n") >= MAX_LINES:
        return set()
    path = str(hit.payload.get("path", ""))
    return {(path, name) for name in RETURNED_CALL.findall(content)}


def _made_class(hit: VectorHit) -> tuple[str, str]:
    """(path, class name) of the class a function chunk is a factory of; an empty name if none."""
    made = constructed_class(str(hit.payload.get("content", "")))
    return str(hit.payload.get("path", "")), made or ""


def _best_of_classes(
    ranked: Sequence[tuple[float, VectorHit]], query: str, wanted: set[tuple[str, str]]
) -> dict[tuple[str, str], _Best]:
    """(path, class name) -> the best of its whole-class hits (head, `__init__`, `__new__`, `__call__`),
    for each wanted class with one among the candidates (which come best first)."""
    if not wanted:
        return {}
    names = query_names(query)
    mentioned = names.code | names.plain  # the class itself named, its head a candidate or not
    best: dict[tuple[str, str], float] = {}
    named: set[tuple[str, str]] = set()
    for score, hit in ranked:
        symbol = str(hit.payload.get("symbol", ""))
        key = (str(hit.payload.get("path", "")), symbol.split(".", 1)[0])
        kind = hit.payload.get("kind")
        if key not in wanted or kind not in ("class", "method"):
            continue
        if key[1] in mentioned or names_symbol(symbol, names):
            named.add(key)
        if kind == "class" or symbol.endswith(WHOLE_CLASS_METHODS):
            best.setdefault(key, score)
    return {key: _Best(score, key in named, key[1].startswith("_")) for key, score in best.items()}
