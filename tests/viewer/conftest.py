"""A trace recorded once for the viewer's tests: Client.run against the real server on loopback with a
scripted LLM behind it, through a long read (collapsed on the page), a client tool whose observation
holds `</script>`, and an approved write."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from reactstep.client import Client
from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.contract.step import ClientTool
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore

LONG_FILE = b"def main():\n    return 42\n" + b"".join(b"# line %d\n" % n for n in range(60))
HOSTILE = 'lint: </script><script>document.title="pwned"</script><!-- clean'
REPLIES = [
    'Thought: Read it first.\nAction: read_file(path="src/app.py")',
    'Thought: Lint it here.\nAction: lint(path="src/app.py")',
    'Thought: Make it 43.\nAction: replace_in_file(path="src/app.py", find="return 42", replace="return 43")',
    "Thought: Done.\nFinal Answer: main() returns 43 now.",
]
LINT = ClientTool(
    name="lint",
    description="Lint one file on the user's machine.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


@contextmanager
def serving(root: Path, store: LocalStore, replies: list[str] = REPLIES) -> Iterator[str]:
    """The server on loopback, its LLM a scripted one answering `replies`; its URL."""
    with ScriptedLLMServer() as llm:
        settings = Settings(
            data_dir=root / "server",
            llm_model="openai/scripted",
            llm_api_base=llm.base_url,
            llm_api_base_allowlist=["http://127.0.0.1:*"],
            approval_secret="viewer-test-secret-0123456789abcdef",
        )
        with BackgroundServer(create_app(settings, store=store)) as server:
            llm.push(*replies)
            yield server.url


def record(server_url: str, trace: Path, tools: tuple[ClientTool, ...] = (LINT,)) -> Path:
    """Ask the question through Client.run (with the client tool lint), the trace written to `trace`."""

    def lint(tool_name: str, tool_args: dict[str, Any]) -> str:
        return HOSTILE

    with Client(server_url) as client:
        result = client.run(
            "make main return 43",
            project="demo",
            tools=list(tools),
            on_action=lint,
            approve=lambda call: True,
            trace=trace,
        )
    assert result.status == "final_answer"
    return trace


@pytest.fixture(scope="session")
def recorded_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The trace file (4 steps: read_file, lint on the client, an approved write, the answer)."""
    root = tmp_path_factory.mktemp("recorded")
    store = LocalStore(root / "objects")
    store.put("demo", "src/app.py", LONG_FILE)
    with serving(root, store) as url:
        return record(url, root / "trace.jsonl")
