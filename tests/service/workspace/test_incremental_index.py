"""POST .../index after the first run looks only at what changed: the journal's paths, plus files
changed behind its back; a lost symbol index or vector collection brings back a whole run."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.tools.store.local import LocalStore

P = "/api/projects/web"
KEYS = ("files", "chunks", "embedded", "removed", "parsed", "incremental")


def module(number: int) -> bytes:
    return f"def handler_{number}(value):\n    return value + {number}\n".encode()


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    client = make_client()
    client.put(P)
    for number in range(8):
        client.put(f"{P}/files/pkg/m{number}.py", content=module(number))
    first = index(client)
    assert (first["files"], first["incremental"]) == (8, False)
    return client


def index(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post(f"{P}/index", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def picked(report: dict[str, Any]) -> dict[str, Any]:
    return {key: report[key] for key in KEYS}


def search(client: TestClient, query: str) -> str:
    body = {"project_id": "web", "session_id": "s", "tool_name": "code_search", "tool_args": {"query": query}}
    observation: str = client.post("/api/agent/execute_action", json=body).json()["observation"]
    return observation


def test_saves_re_index_themselves_and_the_next_run_has_nothing_to_do(client: TestClient) -> None:
    client.put(f"{P}/files/pkg/m3.py", content=b"def zebra_renamed(value):\n    return value * 3\n")
    client.put(f"{P}/files/pkg/new.py", content=b"def okapi(value):\n    return value\n")
    client.delete(f"{P}/files/pkg/m5.py")
    assert (client.get(P).json()["index_state"], client.get(P).json()["indexed_version"]) == ("ready", 11)
    assert "pkg/m3.py:1-2 zebra_renamed" in search(client, "zebra_renamed")
    assert "pkg/m5.py" not in search(client, "handler_5")
    report = index(client)
    assert picked(report) == {
        "files": 0, "chunks": 0, "embedded": 0, "removed": 0, "parsed": 0, "incremental": True,
    }  # fmt: skip
    assert report["indexed_version"] == 11


def test_a_file_written_behind_the_journals_back_is_found_by_its_etag(
    client: TestClient, local_store: LocalStore
) -> None:
    local_store.put("web", "pkg/m1.py", b"def behind_the_back(value):\n    return 0\n")
    local_store.delete("web", "pkg/m2.py")
    assert picked(index(client)) == {
        "files": 1, "chunks": 1, "embedded": 1, "removed": 2, "parsed": 1, "incremental": True,
    }  # fmt: skip
    assert "pkg/m1.py:1-2 behind_the_back" in search(client, "behind_the_back")


def test_a_lost_symbol_index_brings_back_a_whole_run(client: TestClient, local_store: LocalStore) -> None:
    local_store.put_index_file("web", "symbols.json", b"{torn")
    assert picked(index(client)) == {
        "files": 8, "chunks": 8, "embedded": 0, "removed": 0, "parsed": 8, "incremental": False,
    }  # fmt: skip


def test_a_vector_store_without_the_collection_gets_a_whole_run(
    client: TestClient, make_client: Callable[..., TestClient], tmp_path: Path
) -> None:
    """Another process with an empty vector store of its own, on the same files and head."""
    fresh = make_client(data_dir=tmp_path / "elsewhere")
    report = index(fresh)
    assert (report["files"], report["chunks"], report["embedded"], report["incremental"]) == (8, 8, 8, False)
    assert "pkg/m4.py:1-2 handler_4" in search(fresh, "handler_4")


def test_full_re_checks_every_file(client: TestClient) -> None:
    assert picked(index(client, full=True)) == {
        "files": 8, "chunks": 8, "embedded": 0, "removed": 0, "parsed": 0, "incremental": False,
    }  # fmt: skip
