"""Fixtures of the MCP tests: the whole app served on a loopback port, answering MCP as JSON or SSE."""

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reactstep.service.http.app import create_app
from reactstep.service.http.auth import key_entry
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder
from reactstep.tools.store.local import LocalStore
from tests.service.mcp.served import ALL_KEY, APP_PY, DEMO_KEY, bearer


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def server(tmp_path: Path, local_embedder: LocalEmbedder) -> Iterator[BackgroundServer]:
    """The whole app on a loopback port, projects demo (indexed) and other; MCP answers as JSON."""
    store = LocalStore(tmp_path / "objects")
    store.put("demo", "src/app.py", APP_PY)
    store.put("demo", "src/util/strings.py", b"def shout(text):\n    return text.upper()\n")
    store.put("other", "secret.txt", b"another tenant\n")
    settings = Settings(
        data_dir=tmp_path,
        api_keys=[key_entry(DEMO_KEY, "demo"), key_entry(ALL_KEY, "*")],
        approval_secret="mcp-test-secret",
        cors_origins=["https://ide.example"],
    )
    with BackgroundServer(create_app(settings, store=store, embedder=local_embedder)) as running:
        indexed = httpx.post(f"{running.url}/api/projects/demo/index", headers=bearer(DEMO_KEY), timeout=60)
        assert indexed.status_code == 200, indexed.text
        yield running
