"""tools/embedding/sparse.py: code-aware tokens, stable indices, BM25 term weights."""

import pytest

from reactstep.tools.embedding.sparse import (
    Bm25Params,
    SparseVector,
    encode_document,
    encode_query,
    split_identifier,
    token_index,
    tokenize,
)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("getUserName", ["get", "user", "name", "getusername"]),
        ("GetUserName", ["get", "user", "name", "getusername"]),
        ("get_user_name", ["get", "user", "name", "getusername"]),
        ("GET_USER_NAME", ["get", "user", "name", "getusername"]),
        ("get-user-name", ["get", "user", "name", "getusername"]),
        ("get user name", ["get", "user", "name"]),
        ("HTTPServer", ["http", "server", "httpserver"]),
        ("parseJSON", ["pars", "json", "parsejson"]),  # parts stemmed, the whole identifier not
        ("sha256sum", ["sha", "256", "sum", "sha256sum"]),
        ("__init__", ["init"]),
        ("is_valid", ["valid", "isvalid"]),
        ("def run(self): return self.x", ["run"]),
        ("The user AND the name", ["user", "name"]),
        ("a b c = 1", []),
        ("données_été", ["données", "été", "donnéesété"]),  # non-ASCII parts are not stemmed
        ("parsers parsing parsed", ["parser", "pars", "pars"]),
        ("Returns the user_names", ["user", "name", "usernames"]),  # "returns" stems to a stop word
        ("how do we parse it", ["pars"]),
        ("", []),
    ],
)
def test_tokenize(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


@pytest.mark.parametrize(
    ("word", "parts"),
    [
        ("getHTTPResponse_v2", ["get", "HTTP", "Response", "v", "2"]),
        ("XMLHttpRequest", ["XML", "Http", "Request"]),
        ("snake_case--kebab", ["snake", "case", "kebab"]),
        ("naïveBayes", ["naïveBayes"]),
    ],
)
def test_split_identifier(word: str, parts: list[str]) -> None:
    assert split_identifier(word) == parts


@pytest.mark.parametrize(
    ("token", "index"),
    [("user", 469923099), ("get", 587031356), ("getusername", 1016570786)],
)
def test_token_index_is_stable(token: str, index: int) -> None:
    # Literal values: an index change would silently orphan every stored vector.
    assert token_index(token) == index


def test_query_is_one_per_unique_token_sorted() -> None:
    vector = encode_query("getUserName getUserName get")
    expected = sorted(token_index(token) for token in ["get", "user", "name", "getusername"])
    assert vector == SparseVector(tuple(expected), (1.0, 1.0, 1.0, 1.0))


@pytest.mark.parametrize(
    ("text", "params", "weights"),
    [
        # 4 tokens, tf 1: 1*2.5/(1+1.5*(0.25+0.75*4/50))
        ("getUserName", Bm25Params(), {"get": 2.5 / (1 + 1.5 * (0.25 + 0.75 * 4 / 50))}),
        # 8 tokens, tf 2: 2*2.5/(2+1.5*(0.25+0.75*8/50))
        ("getUserName get_user_name", Bm25Params(), {"name": 5.0 / (2 + 1.5 * (0.25 + 0.75 * 8 / 50))}),
        # b=0 ignores length: tf*(k1+1)/(tf+k1)
        ("user user user order", Bm25Params(k1=2.0, b=0.0), {"user": 9.0 / 5.0, "order": 3.0 / 3.0}),
        # b=1, avg_len equal to the length: tf*(k1+1)/(tf+k1)
        ("user user order order", Bm25Params(k1=1.0, b=1.0, avg_len=4), {"user": 4.0 / 3.0}),
    ],
)
def test_document_weights(text: str, params: Bm25Params, weights: dict[str, float]) -> None:
    vector = encode_document(text, params)
    by_index = dict(zip(vector.indices, vector.values, strict=True))
    for token, weight in weights.items():
        assert by_index[token_index(token)] == pytest.approx(weight, rel=1e-12)


def test_document_indices_sorted_and_unique() -> None:
    vector = encode_document("class OrderBook: def add_order(self, order): self.orders.append(order)")
    assert list(vector.indices) == sorted(set(vector.indices))
    # class order book orderbook add addorder append ("orders" stems to order)
    assert len(vector.values) == len(vector.indices) == 7


@pytest.mark.parametrize("text", ["", "   ", "def return self the a"])
def test_nothing_to_index_gives_empty_vectors(text: str) -> None:
    assert encode_document(text) == SparseVector((), ())
    assert encode_query(text) == SparseVector((), ())
