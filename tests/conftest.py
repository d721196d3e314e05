"""Shared fixtures: an S3 server and the real model for the session; a scripted LLM on loopback and apps
built around it for each test."""

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.service.http.app import create_app
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder
from reactstep.tools.embedding.local_models import MINILM
from reactstep.tools.store.local import LocalStore
from tests.s3_peers import Recorder

_network_events: list[tuple[str, tuple[Any, ...]]] = []
_recording_network = threading.Event()


def _record_network(event: str, args: tuple[Any, ...]) -> None:
    if _recording_network.is_set() and event in ("socket.connect", "socket.getaddrinfo"):
        _network_events.append((event, args))


sys.addaudithook(_record_network)  # an audit hook stays for good; it records only while a test asks

# A shell starts `cmd &` (without job control: a script, nohup, CI wrappers) with SIGINT ignored, and every
# process the suite starts would inherit that: a `reactstep serve` the tests interrupt would then ignore
# SIGINT while it starts and end with 0 instead of SIGINT after it. The suite's processes get the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def network_log() -> Iterator[list[tuple[str, tuple[Any, ...]]]]:
    """Every socket connect and name lookup the process makes while the test runs (any thread)."""
    _network_events.clear()
    _recording_network.set()
    try:
        yield _network_events
    finally:
        _recording_network.clear()


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A scripted OpenAI-compatible server on 127.0.0.1, empty until a test pushes replies."""
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture
def local_store(tmp_path: Path) -> LocalStore:
    """A local object store holding a small project called 'demo'."""
    store = LocalStore(tmp_path / "objects")
    store.put("demo", "README.md", b"# Demo\n")
    store.put("demo", "src/app.py", b"def main():\n    return 42\n")
    store.put("demo", "src/util/strings.py", b"def shout(text):\n    return text.upper()\n")
    store.put("other", "secret.txt", b"another tenant\n")
    return store


@pytest.fixture
def make_client(
    tmp_path: Path, llm_server: ScriptedLLMServer, local_store: LocalStore, local_embedder: LocalEmbedder
) -> Callable[..., TestClient]:
    """Build a TestClient for an app whose default LLM is the scripted server."""

    def build(**overrides: Any) -> TestClient:
        fields: dict[str, Any] = {
            "data_dir": tmp_path,
            "llm_model": "openai/scripted",
            "llm_api_base": llm_server.base_url,
            "llm_timeout_s": 5.0,
            "llm_retry_base_s": 0.01,  # retries stay fast; tests that time them set their own
        }
        fields.update(overrides)
        app = create_app(Settings(**fields), store=local_store, embedder=local_embedder)
        return TestClient(app, raise_server_exceptions=False)

    return build


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """An in-process moto S3 server on a free loopback port; yields its endpoint URL."""
    from moto.s3.responses import S3Response
    from moto.server import ThreadedMotoServer

    # Real S3 and R2 evaluate If-Match / If-None-Match atomically with the write; moto checks, then
    # stores, so two racing conditional PUTs could both pass. One lock around its PutObject gives the
    # atomicity the project journal relies on, as the real services do.
    put_object = S3Response.put_object
    put_lock = threading.Lock()

    def atomic_put_object(self: S3Response) -> Any:
        with put_lock:
            return put_object(self)

    S3Response.put_object = atomic_put_object  # type: ignore[method-assign]
    # Port 0 lets the OS pick a free port; get_host_and_port reports the one it chose.
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()
        S3Response.put_object = put_object  # type: ignore[method-assign]


@pytest.fixture(scope="session")
def local_embedder(tmp_path_factory: pytest.TempPathFactory) -> LocalEmbedder:
    """The real default model for the whole session (int8): it loads (and exports to ONNX) on first use."""
    return LocalEmbedder(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="session")
def fp32_embedder(tmp_path_factory: pytest.TempPathFactory) -> LocalEmbedder:
    """The real model unquantised: the export the reference vectors check, exact to 1e-5."""
    return LocalEmbedder(tmp_path_factory.mktemp("models-fp32"), model=MINILM.name)


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    """A loopback server answering every GET with b"recorded body", keeping each request (s3_peers.py)."""
    server = Recorder(b"recorded body")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
