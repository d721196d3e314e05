"""Names a query mentions, and how well a chunk's symbol answers them: the exact-identifier signal.

    "where is `Parser.parse_args` called"  ─► code names: Parser.parse_args
    "how does redirect work"               ─► plain words: redirect (and how, does, work)

A chunk that defines a named symbol matches fully when its qualified symbol is the name or ends
with it (`Parser.parse_args`, `cli.Parser.parse_args`), half when only the last parts agree
(`OtherParser.parse_args`). Code names are written like code (a dot, an underscore, camelCase,
backticks or a call's parentheses); plain words count only when they are a whole symbol's last
part (`redirect` defines `redirect`, `get_redirect` does not).

Softer, for any query: `name_overlap` is the share of the symbol's own name parts (its last
dotted part, split and stemmed as the word-match ranking does) that the query's tokens hold:
"Set a cookie on the response" covers all of `set_cookie` and half of `delete_cookie`.
"""

import re
from dataclasses import dataclass
from functools import lru_cache

from reactstep.tools.embedding.sparse import STOP_WORDS, split_identifier, tokenize

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
MIN_PLAIN_LENGTH = 4


@dataclass(frozen=True)
class QueryNames:
    """The identifiers a query names: written as code, or as plain lowercase words."""

    code: frozenset[str]
    plain: frozenset[str]


def query_names(query: str) -> QueryNames:
    """Every identifier-like word of the query, sorted into code names and plain words."""
    code: set[str] = set()
    plain: set[str] = set()
    for name in NAME.findall(query):
        if not name.strip("_"):
            continue  # "_" or "__" alone names nothing; underscores of a name are part of it
        if is_code(name, query):
            code.add(name)
        elif name.islower() and len(name) >= MIN_PLAIN_LENGTH and name not in STOP_WORDS:
            plain.add(name)
    return QueryNames(frozenset(code), frozenset(plain))


def is_code(name: str, query: str) -> bool:
    """Written like code: dotted, snake_case, camelCase, or quoted/called in the query."""
    if "." in name or "_" in name or re.search(r"[a-z][A-Z]", name):
        return True
    return f"`{name}" in query or f"{name}(" in query


def definition_match(symbol: str, names: frozenset[str]) -> float:
    """1.0 when the symbol is a name (or ends with it as a dotted suffix), 0.5 when only last parts agree."""
    if not symbol:
        return 0.0
    last = symbol.rsplit(".", 1)[-1]
    best = 0.0
    for name in names:
        if symbol == name or symbol.endswith("." + name):
            return 1.0
        if last == name.rsplit(".", 1)[-1]:
            best = 0.5
    return best


def names_symbol(symbol: str, names: QueryNames) -> bool:
    """Whether the query names the symbol: as code (or its last part), or a plain word is its whole
    name; the chunks boost_definitions (fusion.py) gives a code or plain-name boost."""
    return definition_match(symbol, names.code) > 0 or definition_match(symbol, names.plain) == 1.0


def name_overlap(symbol: str, query_tokens: frozenset[str]) -> float:
    """The share (0..1) of the symbol's last part's tokens that the query holds; 0 for no symbol."""
    if not symbol:
        return 0.0
    parts = name_tokens(symbol.rsplit(".", 1)[-1])
    return len(parts & query_tokens) / len(parts) if parts else 0.0


@lru_cache(maxsize=1 << 14)
def name_tokens(name: str) -> frozenset[str]:
    """The tokens of a name's parts, without the whole-name token (asked for every hit of every query)."""
    return frozenset(tokenize(" ".join(split_identifier(name))))
