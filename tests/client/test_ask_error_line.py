"""`reactstep ask --stream`: a stream that ends in an error event leaves no half-printed line before the
error line."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from reactstep.client.cli.main import main
from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore

REPLY = 'Thought: I should read\nthe app first.\nAction: read_file(file_path="src/app.py")'


@pytest.fixture
def server(tmp_path: Path, llm_server: ScriptedLLMServer, local_store: LocalStore) -> Iterator[str]:
    settings = Settings(data_dir=tmp_path, llm_model="openai/scripted", llm_api_base=llm_server.base_url)
    with BackgroundServer(create_app(settings, store=local_store)) as running:
        yield running.url


def test_the_error_line_starts_on_a_line_of_its_own(
    server: str, llm_server: ScriptedLLMServer, capfd: pytest.CaptureFixture[str]
) -> None:
    # Paced, so deltas reach the client before the cut: the stream then ends in an error event.
    llm_server.push(Reply(REPLY, chunk_chars=4, chunk_delay_s=0.05, cut_after_chunks=6))
    code = main(["ask", "What does main return?", "--project", "demo", "--server", server, "--stream"])
    sys.stdout.flush()
    out, err = capfd.readouterr()
    assert code == 1
    assert out.endswith("    Thought: I should re\n")
    assert err.splitlines()[-1] == "error: 200 llm_unavailable: the LLM stream broke off before its end"
    assert err.endswith("\n")
