"""tools/vectors/factories.py: which functions are factories, and where they land beside their class."""

import pytest

from reactstep.tools.vectors.factories import constructed_class, place_factories
from reactstep.tools.vectors.store import VectorHit

GAP = 0.05


def chunk(point_id: str, symbol: str, kind: str, content: str = "", path: str = "v.py") -> VectorHit:
    payload = {"path": path, "symbol": symbol, "kind": kind, "language": "python", "content": content}
    return VectorHit(point_id, 0.0, payload)


def factory(point_id: str, name: str, made: str, path: str = "v.py") -> VectorHit:
    return chunk(point_id, name, "function", f"def {name}(value):\n    return {made}(value)\n", path)


def order(ranked: list[tuple[float, VectorHit]]) -> list[str]:
    return [hit.id for _, hit in ranked]


@pytest.mark.parametrize(
    ("content", "made"),
    [
        ("def lt(val):\n    return _NumberValidator(val, '<', operator.lt)\n", "_NumberValidator"),
        ('def lt(val):\n    """Less than *val*.\n\n    More.\n    """\n    return _Number(val)\n', "_Number"),
        ("    def make(self):\n        return Part(self)\n", "Part"),  # a method's chunk is indented
        ("async def connect(url):\n    return Connection(url)\n", "Connection"),
        ("@cache\ndef opts(*args):\n    args = list(args)\n    args.sort()\n    return Opts(args)\n", "Opts"),
        ("def one(values):\n\n\n\n    return Validator(values)\n", "Validator"),  # blank lines are no code
    ],
)
def test_a_thin_function_returning_a_call_of_a_name_is_a_factory(content: str, made: str) -> None:
    assert constructed_class(content) == made


@pytest.mark.parametrize(
    "content",
    [
        "def four(v):\n    a = 1\n    b = 2\n    c = 3\n    return Four(v)\n",  # four statements
        "def dotted(v):\n    return module.Thing(v)\n",  # not a name of this file
        "def bare(v):\n    return Thing\n",  # the class itself, not an instance
        "def late(v):\n    made = Thing(v)\n    return made\n",
        "def window(v):\n    if v:\n",  # a window of a long function does not parse
        "class Thing:\n    pass\n",
        "x = Thing(1)\n",
        "def two():\n    return A()\ndef three():\n    return B()\n",
        "def long(v):\n" + "    # note\n" * 60 + "    return Thing(v)\n",  # longer than MAX_LINES
        "def null(v):\n    return Thing('\0')\n",
    ],
)
def test_anything_else_is_not(content: str) -> None:
    assert constructed_class(content) is None


def test_the_public_factory_of_a_private_class_lands_just_above_the_class() -> None:
    ranked = [
        (2.0, chunk("call", "_InstanceOf.__call__", "method")),
        (1.5, chunk("other", "_SubclassOf.__call__", "method")),
        (0.5, factory("fact", "instance_of", "_InstanceOf")),
    ]
    placed = place_factories(ranked, "a validator that raises TypeError for a wrong type", GAP)
    assert [(round(score, 6), hit.id) for score, hit in placed] == [
        (2.0125, "fact"),  # 2.0 + 0.05 * 0.5 / 2.0
        (2.0, "call"),
        (1.5, "other"),
    ]


def test_factories_of_a_public_class_or_private_factories_land_just_below_it() -> None:
    ranked = [
        (2.0, chunk("head", "Server", "class")),
        (1.9, chunk("near", "handler", "function", "def handler():\n    pass\n")),
        (1.0, factory("public", "make_server", "Server")),
        (0.9, chunk("private", "_Private.__init__", "method")),
        (0.5, factory("hidden", "_make_private", "_Private")),
    ]
    placed = place_factories(ranked, "start serving", GAP)
    assert [(round(score, 6), hit.id) for score, hit in placed] == [
        (2.0, "head"),
        (1.975, "public"),  # 2.0 - 0.05 * (1 - 1.0 / 2.0)
        (1.9, "near"),
        (0.9, "private"),
        (0.877778, "hidden"),  # 0.9 - 0.05 * (1 - 0.5 / 0.9)
    ]


def test_factories_of_one_class_keep_their_order() -> None:
    ranked = [
        (2.0, chunk("call", "_Number.__call__", "method")),
        (1.0, chunk("x", "unrelated", "function")),
        (0.8, factory("le", "le", "_Number")),
        (0.4, factory("lt", "lt", "_Number")),
    ]
    assert order(place_factories(ranked, "a number above val", GAP)) == ["le", "lt", "call", "x"]


def test_only_the_head_and_the_whole_class_methods_anchor_a_factory() -> None:
    ranked = [
        (2.0, chunk("method", "_Server.add_port", "method")),  # a query about one method
        (1.0, chunk("init", "_Server.__init__", "method")),
        (0.5, factory("fact", "server", "_Server")),
    ]
    assert order(place_factories(ranked, "open a port", GAP)) == ["method", "fact", "init"]


@pytest.mark.parametrize(
    "query", ["`_InstanceOf.__call__`", "`_InstanceOf`", "what does _InstanceOf.describe return"]
)
def test_a_class_the_query_names_keeps_its_factories_where_they_are(query: str) -> None:
    ranked = [
        (2.0, chunk("call", "_InstanceOf.__call__", "method")),
        (1.8, chunk("describe", "_InstanceOf.describe", "method")),
        (1.5, chunk("x", "unrelated", "function")),
        (0.5, factory("fact", "instance_of", "_InstanceOf")),
    ]
    assert place_factories(ranked, query, GAP) == ranked


def test_nothing_moves_without_its_class_in_the_same_file_above_it() -> None:
    ranked = [
        (2.0, factory("above", "first", "_A")),  # already above its class
        (1.0, chunk("a", "_A.__call__", "method")),
        (0.9, chunk("b", "_B.__call__", "method", path="other.py")),
        (0.5, factory("elsewhere", "make_b", "_B")),  # _B of v.py is not among the candidates
        (0.4, factory("unknown", "make_c", "_C")),
    ]
    assert place_factories(ranked, "anything", GAP) == ranked


def test_a_zero_gap_or_another_language_moves_nothing() -> None:
    ranked = [(2.0, chunk("call", "_A.__call__", "method")), (0.5, factory("fact", "make", "_A"))]
    assert place_factories(ranked, "anything", 0.0) == ranked
    script = factory("fact", "make", "_A")
    script.payload["language"] = "javascript"
    assert place_factories([ranked[0], (0.5, script)], "anything", GAP) == [ranked[0], (0.5, script)]
