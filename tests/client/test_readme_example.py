"""The README's Python example runs as written in a fresh venv that holds only `pip install ./client`
(test_client_install.py's cached venv), against a real server on 127.0.0.1 whose LLM is scripted.

The example is the first ```python block after the README's "## From Python" heading; two things in it
are substituted and nothing else: its server URL (the test server's port is free, not 8000) and its
folder path (a folder the test writes). Its approval prompt reads the answer from stdin.
"""

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder
from tests.client.test_client_install import client_env, client_venv  # noqa: F401  (the venv fixture)

ROOT = Path(__file__).resolve().parents[2]
HEADING = "## From Python\n"
README_URL = "http://127.0.0.1:8000"
README_FOLDER = "path/to/repo"
REPLIES = [
    'Thought: Read it first.\nAction: read_file(path="src/app.py")',
    'Thought: Make it 43.\nAction: replace_in_file(path="src/app.py", find="42", replace="43")',
    "Thought: Done.\nFinal Answer: main() returns 43 now.",
]
DIFF = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def main():\n-    return 42\n+    return 43\n"


def readme_example() -> str:
    """The first ```python block after the heading, as the README has it."""
    readme = (ROOT / "README.md").read_text()
    assert HEADING in readme, f"README.md has no {HEADING.strip()!r} heading"
    after = readme[readme.index(HEADING) :]
    assert "```python\n" in after, "no ```python block after the heading"
    block = after[after.index("```python\n") + len("```python\n") :]
    return block[: block.index("```\n")]


@pytest.fixture
def server(tmp_path: Path, llm_server: ScriptedLLMServer, local_embedder: LocalEmbedder) -> Iterator[str]:
    settings = Settings(
        data_dir=tmp_path / "server",
        llm_model="openai/scripted",
        llm_api_base=llm_server.base_url,
        llm_api_base_allowlist=["http://127.0.0.1:*"],
        approval_secret="readme-example-test-secret-0123456789abcdef",
    )
    with BackgroundServer(create_app(settings, embedder=local_embedder)) as running:
        yield running.url


def test_the_readme_example_runs_with_only_the_client(
    client_venv: Path,  # noqa: F811
    server: str,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
) -> None:
    example = readme_example()
    assert (example.count(README_URL), example.count(README_FOLDER)) == (1, 1)
    folder = tmp_path / "repo"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text("def main():\n    return 42\n")
    llm_server.push(*REPLIES)

    code = example.replace(README_URL, server).replace(README_FOLDER, str(folder))
    finished = subprocess.run(
        [str(client_venv / "bin" / "python"), "-c", code],
        input="y\n",
        env=client_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert finished.returncode == 0, finished.stderr[-3000:]
    assert finished.stdout == f"{DIFF}apply? [y/N] final_answer main() returns 43 now.\n"
    assert len(llm_server.requests) == 3
    written = httpx.get(f"{server}/api/projects/demo/files/src/app.py")
    assert (written.status_code, written.text) == (200, "def main():\n    return 43\n")
