"""The README's quick start as written: `reactstep serve` in one shell, then `index` and `ask` in another
without --server, on the same data dir. They find the running server through the note it leaves in the
data dir (an embedded vector store belongs to one process); with none running they start their own
and say why; and `ask` with no LLM configured says so, names the variables, and calls nothing."""

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from tests.served import REACTSTEP, serving, settled_readiness

REPLIES = [
    'Thought: Let me read it.\nAction: read_file(file_path="src/app.py")',
    "Thought: main returns 42.\nFinal Answer: `main()` returns 42.",
]
UNCONFIGURED = (
    "error: no LLM is configured for openai/gpt-4o-mini: set REACTSTEP_LLM_MODEL and REACTSTEP_LLM_API_BASE "
    "for an OpenAI-compatible server (e.g. REACTSTEP_LLM_MODEL=openai/my-model "
    "REACTSTEP_LLM_API_BASE=http://127.0.0.1:8080/v1), or REACTSTEP_LLM_API_KEY or OPENAI_API_KEY for the "
    "hosted model"
)


@pytest.fixture
def served(env: dict[str, str]) -> Iterator[tuple[str, ScriptedLLMServer, subprocess.Popen[bytes]]]:
    """`reactstep serve` on the data dir, its LLM a scripted server on loopback."""
    with ScriptedLLMServer(REPLIES) as llm:
        server_env = env | {"REACTSTEP_LLM_MODEL": "openai/scripted", "REACTSTEP_LLM_API_BASE": llm.base_url}
        with serving(server_env) as (url, process):
            yield url, llm, process


def reactstep(env: dict[str, str], *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([REACTSTEP, *arguments], env=env, capture_output=True, text=True, timeout=120)


def test_the_second_shell_uses_the_running_server(
    served: tuple[str, ScriptedLLMServer, "subprocess.Popen[bytes]"], env: dict[str, str], project: Path
) -> None:
    url, llm, _ = served
    note = json.loads((Path(env["REACTSTEP_DATA_DIR"]) / "server.json").read_text())
    assert note["url"] == url
    using = f"using the server running on {env['REACTSTEP_DATA_DIR']} at {url}"

    indexed = reactstep(env, "index", str(project), "--project", "demo")
    assert (indexed.returncode, indexed.stderr.strip()) == (0, using)
    assert httpx.get(f"{url}/api/projects/demo").json()["index_state"] == "ready"

    asked = reactstep(env, "ask", "What does main return?", "--project", "demo")
    assert asked.returncode == 0, asked.stderr
    assert asked.stderr.strip() == using
    assert "`main()` returns 42." in asked.stdout
    assert len(llm.requests) == 2  # the server's LLM, not one of the client's (it has none)


def test_the_note_goes_with_the_server_and_a_stale_one_is_ignored(
    served: tuple[str, ScriptedLLMServer, "subprocess.Popen[bytes]"], env: dict[str, str], project: Path
) -> None:
    url, _, process = served
    note = Path(env["REACTSTEP_DATA_DIR"]) / "server.json"
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == -signal.SIGINT  # uvicorn ends gracefully, then re-raises it
    assert not note.exists()
    note.write_text(json.dumps({"url": url, "pid": process.pid}))  # as a killed server would leave it
    indexed = reactstep(env, "index", str(project), "--project", "demo")
    assert indexed.returncode == 0, indexed.stderr
    data_dir = env["REACTSTEP_DATA_DIR"]  # its own server, said once, and no warning meant for operators
    assert (
        indexed.stderr
        == f"running in this process on {data_dir} (no --server, and no `reactstep serve` runs on it)\n"
    )
    assert indexed.stdout.splitlines()[-1].startswith("indexed 1 file")


def test_ask_without_an_llm_says_which_settings_to_make(env: dict[str, str], project: Path) -> None:
    asked = reactstep(env, "ask", "What does main return?", "--project", "demo")
    assert (asked.returncode, asked.stdout, asked.stderr.splitlines()[-1]) == (2, "", UNCONFIGURED)
    assert not (Path(env["REACTSTEP_DATA_DIR"]) / "server.json").exists()


def test_ask_a_running_server_without_an_llm(env: dict[str, str]) -> None:
    with serving(env) as (url, _):
        assert settled_readiness(url)["checks"]["llm"] == "unconfigured"
        asked = reactstep(env, "ask", "What does main return?", "--project", "demo")
    assert asked.returncode == 2
    assert asked.stderr.splitlines()[-1] == (
        f"error: the server at {url} has no LLM configured: set REACTSTEP_LLM_MODEL and "
        "REACTSTEP_LLM_API_BASE (or REACTSTEP_LLM_API_KEY) where it runs, or pass --model with a provider "
        "whose key it holds"
    )
