"""A saved file is never missing from search: PUT and DELETE of a file of an indexed project re-index
it before answering; a sync with "index": true, then its uploads, leaves the project `ready`; an
embedding failure during that re-index keeps the save and says the index is stale."""

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.service.http.app import create_app
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import EmbeddingError, LocalEmbedder
from reactstep.tools.store.local import LocalStore

P = "/api/projects/web"
UTIL = b"def slugify(text):\n    return text.lower().replace(' ', '-')\n"
APP = b"from util import slugify\n\n\ndef handler(request):\n    return slugify(request.title)\n"


class SwitchedEmbedder:
    """The real model, or an EmbeddingError while `failing` is set (an API that went down)."""

    def __init__(self, real: LocalEmbedder) -> None:
        self.real = real
        self.failing = False

    @property
    def model_name(self) -> str:
        return self.real.model_name

    @property
    def dimension(self) -> int:
        return self.real.dimension

    @property
    def known_dimension(self) -> int | None:
        return self.real.known_dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if self.failing:
            raise EmbeddingError("the embedding API answered 503")
        return self.real.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.real.embed_query(text)


@pytest.fixture
def embedder(local_embedder: LocalEmbedder) -> SwitchedEmbedder:
    return SwitchedEmbedder(local_embedder)


@pytest.fixture
def client(tmp_path: Path, local_store: LocalStore, embedder: SwitchedEmbedder) -> TestClient:
    app = create_app(Settings(data_dir=tmp_path), store=local_store, embedder=embedder)
    client = TestClient(app, raise_server_exceptions=False)
    client.put(P)
    client.put(f"{P}/files/util.py", content=UTIL)
    client.put(f"{P}/files/app.py", content=APP)
    assert client.post(f"{P}/index", json={}).status_code == 200
    return client


def run_tool(client: TestClient, tool: str, args: dict[str, Any]) -> str:
    body = {"project_id": "web", "session_id": "s", "tool_name": tool, "tool_args": args}
    response = client.post("/api/agent/execute_action", json=body)
    assert response.status_code == 200, response.text
    observation: str = response.json()["observation"]
    return observation


def state(client: TestClient) -> tuple[str, int, int]:
    project = client.get(P).json()
    return project["index_state"], project["version"], project["indexed_version"]


def test_a_put_is_searchable_when_it_answers_and_the_old_text_is_gone(client: TestClient) -> None:
    saved = client.put(f"{P}/files/util.py", content=b"def zebra_stripes(count):\n    return '|' * count\n")
    assert (saved.status_code, saved.json()["version"], saved.json()["index_state"]) == (200, 3, "ready")
    assert state(client) == ("ready", 3, 3)
    found = run_tool(client, "code_search", {"query": "zebra_stripes", "max_results": 3})
    assert "util.py:1-2 zebra_stripes" in found
    assert "slugify(text)" not in run_tool(client, "code_search", {"query": "slugify lower replace"})
    assert run_tool(client, "find_definition", {"symbol": "zebra_stripes"}) == (
        '1 definition of "zebra_stripes":\nutil.py:1 function zebra_stripes\n    def zebra_stripes(count):'
    )


def test_a_new_function_and_a_new_importer_are_found_at_once(client: TestClient) -> None:
    client.put(
        f"{P}/files/views.py",
        content=b"from util import slugify\n\n\ndef okapi_view(page):\n    return slugify(page)\n",
    )
    assert run_tool(client, "find_definition", {"symbol": "okapi_view"}) == (
        '1 definition of "okapi_view":\nviews.py:4 function okapi_view\n    def okapi_view(page):'
    )
    importers = run_tool(client, "find_importers", {"module": "util"})
    assert "views.py" in importers and "app.py" in importers


def test_a_delete_leaves_search_at_once(client: TestClient) -> None:
    gone = client.delete(f"{P}/files/util.py")
    assert (gone.status_code, gone.json()["index_state"]) == (200, "ready")
    assert state(client) == ("ready", 3, 3)
    assert "util.py" not in run_tool(client, "code_search", {"query": "slugify lower replace"})
    assert run_tool(client, "find_definition", {"symbol": "slugify"}).startswith('No definition of "slugify"')


def test_an_embedding_failure_keeps_the_save_and_says_the_index_is_stale(
    client: TestClient, embedder: SwitchedEmbedder
) -> None:
    embedder.failing = True
    new = b"def quagga(value):\n    return value\n"
    saved = client.put(f"{P}/files/util.py", content=new)
    assert (saved.status_code, saved.json()["changed"], saved.json()["index_state"]) == (200, True, "stale")
    assert client.get(f"{P}/files/util.py").content == new
    assert state(client) == ("stale", 3, 2)
    embedder.failing = False
    report = client.post(f"{P}/index", json={}).json()
    assert (report["files"], report["embedded"], report["incremental"]) == (1, 1, True)
    assert state(client) == ("ready", 3, 3)
    assert "util.py:1-2 quagga" in run_tool(client, "code_search", {"query": "quagga"})


def test_a_project_never_indexed_stays_so_and_its_saves_are_stale(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    client.put(P)
    saved = client.put(f"{P}/files/util.py", content=UTIL)
    assert saved.json()["index_state"] == "stale"
    assert (client.get(P).json()["chunks"], state(client)) == (0, ("stale", 1, 0))


def test_a_sync_with_index_then_its_uploads_leave_the_project_ready(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    client.put(P)
    files = {"util.py": UTIL, "app.py": APP}
    manifest = {path: hashlib.sha256(data).hexdigest() for path, data in files.items()}
    plan = client.post(f"{P}/sync", json={"files": manifest, "index": True}).json()
    assert plan["upload"] == ["app.py", "util.py"] and plan["index"]["files"] == 0
    for path in plan["upload"]:
        saved = client.put(f"{P}/files/{path}", content=files[path], headers={"if-none-match": "*"})
        assert saved.json()["index_state"] == "ready"
    assert state(client) == ("ready", 2, 2)
    assert "util.py:1-2 slugify" in run_tool(client, "code_search", {"query": "slugify lower replace"})
    assert run_tool(client, "find_definition", {"symbol": "handler"}) == (
        '1 definition of "handler":\napp.py:4 function handler\n    def handler(request):'
    )
