"""What the ACP tests share: the scripted model, one `reactstep serve` process that calls it, and a
small project folder per test."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from tests.served import serving


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedLLMServer]:
    """The fake OpenAI API the server's steps call; each test pushes its replies."""
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def server_url(model: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A `reactstep serve` of its own process, its LLM the scripted model."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    env = clean | {
        "REACTSTEP_DATA_DIR": str(tmp_path_factory.mktemp("acp-server")),
        "HF_HUB_OFFLINE": "1",
        "REACTSTEP_LLM_MODEL": "openai/scripted",
        "REACTSTEP_LLM_API_BASE": model.base_url,
    }
    with serving(env) as (url, _):
        yield url


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The editor's project folder, with a file .gitignore leaves out."""
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 42\n")
    (root / "notes.log").write_text("not for the server\n")
    (root / ".gitignore").write_text("*.log\n")
    return root
