"""What the CLI's sync tests share: a real server on loopback over a local store, with the CLI's own
in-process default data dir moved out of the way."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder

SECRET = "cli-sync-test-secret-0123456789abcdef"


@pytest.fixture
def url(tmp_path: Path, local_embedder: LocalEmbedder, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("REACTSTEP_DATA_DIR", str(tmp_path / "cli-data"))  # the in-process default
    settings = Settings(data_dir=tmp_path / "server", approval_secret=SECRET)
    with BackgroundServer(create_app(settings, embedder=local_embedder)) as server:
        yield server.url
