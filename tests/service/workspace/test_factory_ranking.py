"""code_search puts a class's factory beside the class (tools/vectors/factories.py), through the real
model and engine: the factory is the name a caller writes, the class holds the code that runs."""

from collections.abc import Callable

import pytest
from starlette.testclient import TestClient

from reactstep.tools.store.local import LocalStore
from tests.service.workspace.test_code_search import search, titles

VALIDATORS = b"""import re


class _PatternValidator:
    def __init__(self, pattern):
        self.pattern = re.compile(pattern)

    def __call__(self, value):
        if not self.pattern.fullmatch(value):
            raise ValueError(f"{value!r} does not match {self.pattern.pattern!r}")


def matches(pattern):
    return _PatternValidator(pattern)


class _RangeValidator:
    def __init__(self, low, high):
        self.low, self.high = low, high

    def __call__(self, value):
        if not self.low <= value <= self.high:
            raise ValueError(f"{value} is outside {self.low}..{self.high}")


def in_range(low, high):
    return _RangeValidator(low, high)
"""
PARSING = b"""def parse_number(text):
    return int(text.strip())


def parse_words(text):
    return text.split()
"""


@pytest.fixture
def indexed(make_client: Callable[..., TestClient], local_store: LocalStore) -> Callable[..., TestClient]:
    """An app with these settings over the indexed project (one app per test: they share the data dir)."""

    def build(**settings: object) -> TestClient:
        local_store.put("demo", "checks/validators.py", VALIDATORS)
        local_store.put("demo", "checks/parsing.py", PARSING)
        app = make_client(**settings)
        response = app.post("/api/projects/demo/index")
        assert response.status_code == 200, response.text
        return app

    return build


@pytest.fixture
def client(indexed: Callable[..., TestClient]) -> TestClient:
    return indexed()


def test_the_public_factory_ranks_just_above_the_private_class_that_does_the_work(client: TestClient) -> None:
    found = titles(
        search(client, query="raise ValueError when a number is outside the allowed range")["observation"]
    )
    assert found[:4] == [
        "checks/validators.py:26-27 in_range",
        "checks/validators.py:17-23 _RangeValidator",  # its head and __call__, one passage
        "checks/validators.py:13-14 matches",
        "checks/validators.py:4-10 _PatternValidator.__call__",
    ]


def test_a_class_the_query_names_stays_first(client: TestClient) -> None:
    found = titles(search(client, query="`_RangeValidator.__call__`")["observation"])
    assert found[:2] == [
        "checks/validators.py:17-23 _RangeValidator.__call__",
        "checks/validators.py:26-27 in_range",
    ]


def test_a_zero_gap_setting_leaves_the_fused_order(indexed: Callable[..., TestClient]) -> None:
    query = "raise ValueError when a number is outside the allowed range"
    found = titles(search(indexed(search_factory_gap=0.0), query=query)["observation"])
    assert found[:3] == [
        "checks/validators.py:17-23 _RangeValidator",  # the class's code first, its factory after it
        "checks/validators.py:26-27 in_range",
        "checks/validators.py:4-10 _PatternValidator.__call__",  # and `matches` no longer above its class
    ]
