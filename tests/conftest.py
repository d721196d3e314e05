"""Shared pytest fixtures."""

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tools.embeddings import LocalEmbedder


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """An in-process moto S3 server on a free loopback port; yields its endpoint URL."""
    from moto.server import ThreadedMotoServer

    # Port 0 lets the OS pick a free port; get_host_and_port reports the one it chose.
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture(scope="session")
def local_embedder(tmp_path_factory: pytest.TempPathFactory) -> "LocalEmbedder":
    """The real shipped model for the whole session: it loads (and exports to ONNX) on first use."""
    from tools.embeddings import LocalEmbedder

    return LocalEmbedder(tmp_path_factory.mktemp("models"))
