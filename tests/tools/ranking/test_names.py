"""tools/ranking/names.py: the names a query mentions and how a chunk's symbol answers them."""

import pytest

from reactstep.tools.embedding.sparse import tokenize
from reactstep.tools.ranking.names import QueryNames, definition_match, name_overlap, query_names


@pytest.mark.parametrize(
    ("query", "code", "plain"),
    [
        ("where is `Parser.parse_args` called", {"Parser.parse_args"}, {"called"}),
        ("how does redirect work", set(), {"redirect", "work"}),
        ("getUser() fails with `Client`", {"getUser", "Client"}, {"fails"}),
        ("The user_id. Is it set?", {"user_id"}, set()),  # "The", "Is": not lowercase; "it", "set": short
        # A name's own underscores are part of it: private, dunder and trailing-underscore names.
        ("what does `_MaxLengthValidator.__call__` raise", {"_MaxLengthValidator.__call__"}, {"raise"}),
        ("use `in_` or Attribute.__init__ here", {"in_", "Attribute.__init__"}, {"here"}),
        ("a _ b __ c", set(), set()),
        ("", set(), set()),
    ],
)
def test_query_names(query: str, code: set[str], plain: set[str]) -> None:
    assert query_names(query) == QueryNames(frozenset(code), frozenset(plain))


@pytest.mark.parametrize(
    ("symbol", "names", "match"),
    [
        ("Parser.parse_args", {"Parser.parse_args"}, 1.0),
        ("cli.Parser.parse_args", {"Parser.parse_args"}, 1.0),
        ("parse_args", {"parse_args"}, 1.0),
        ("OtherParser.parse_args", {"Parser.parse_args"}, 0.5),
        ("Parser.parse_args", {"parse_args"}, 1.0),
        ("Parser", {"Parser.parse_args"}, 0.0),
        ("get_redirect", {"redirect"}, 0.0),
        ("", {"redirect"}, 0.0),
    ],
)
def test_definition_match(symbol: str, names: set[str], match: float) -> None:
    assert definition_match(symbol, frozenset(names)) == match


@pytest.mark.parametrize(
    ("symbol", "overlap"),
    [
        ("Response.set_cookie", 1.0),  # set, cooki: both in the query
        ("delete_cookie", 0.5),
        ("Response", 1.0),  # its own name: the class chunk
        ("parseHeaders", 0.0),
        ("", 0.0),
    ],
)
def test_name_overlap(symbol: str, overlap: float) -> None:
    assert name_overlap(symbol, frozenset(tokenize("Sets a cookie on the responses"))) == overlap
