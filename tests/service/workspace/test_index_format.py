"""An index written in an earlier word-vector format is never mixed with the current one: code_search says
to index again, and that run re-uses every embedding (the cache is by content, not by collection)."""

from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.tools.ranking import retrieval
from reactstep.tools.store.local import LocalStore
from tests.service.workspace.test_code_search import search


def test_an_older_format_is_indexed_again_without_embedding(
    make_client: Callable[..., TestClient], local_store: LocalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = make_client()
    with monkeypatch.context() as earlier:
        earlier.setattr(retrieval, "WORD_VECTORS_FORMAT", 1)
        first: dict[str, Any] = client.post("/api/projects/demo/index").json()
        assert first["collection"].endswith("_w1") and first["embedded"] > 0
    assert search(client, query="main")["observation"] == (
        "Error: project 'demo' was indexed by an earlier version of this server, whose word-match vectors "
        "this one does not read; index it again (POST /api/projects/demo/index: the code is not embedded "
        "again)"
    )
    again = client.post("/api/projects/demo/index").json()
    assert again["collection"].endswith("_w3") and again["incremental"] is False
    assert (again["embedded"], again["reused"]) == (0, first["chunks"])
    assert search(client, query="main")["observation"].startswith("Found ")
