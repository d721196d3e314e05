"""A trace recorded once for the viewer's tests: Client.run against the real server on loopback with a
scripted LLM behind it, through a long read (collapsed on the page), a client tool whose observation
holds `</script>`, and an approved write."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reactstep.client import Client
from reactstep.client.scripted_llm import ScriptedLLMServer
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


@pytest.fixture(scope="session")
def recorded_trace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The trace file (4 steps: read_file, lint on the client, an approved write, the answer)."""
    root = tmp_path_factory.mktemp("recorded")
    store = LocalStore(root / "objects")
    store.put("demo", "src/app.py", LONG_FILE)

    def lint(tool_name: str, tool_args: dict[str, Any]) -> str:
        return HOSTILE

    with ScriptedLLMServer() as llm:
        settings = Settings(
            data_dir=root / "server",
            llm_model="openai/scripted",
            llm_api_base=llm.base_url,
            llm_api_base_allowlist=["http://127.0.0.1:*"],
            approval_secret="viewer-test-secret-0123456789abcdef",
        )
        with BackgroundServer(create_app(settings, store=store)) as server:
            llm.push(*REPLIES)
            with Client(server.url) as client:
                result = client.run(
                    "make main return 43",
                    project="demo",
                    tools=[LINT],
                    on_action=lint,
                    approve=lambda call: True,
                    trace=root / "trace.jsonl",
                )
    assert result.status == "final_answer"
    yield root / "trace.jsonl"
