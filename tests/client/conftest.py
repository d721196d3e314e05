"""What the CLI's tests share: a real server on loopback over a local store, with the CLI's own
in-process default data dir moved out of the way; a shell with no reactstep settings and a small
project folder, for the tests that run `reactstep` as a process."""

import os
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


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A shell with no reactstep settings and no provider key, on a fresh data dir."""
    clean = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("REACTSTEP_") and not key.endswith("_API_KEY")
    }
    return clean | {"REACTSTEP_DATA_DIR": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 42\n")
    return root
