"""The replay tests' fixtures: a real server on loopback answering from a scripted LLM, over the local
store of tests/conftest.py (project `demo`), and a question recorded against it as a trace."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from replay_helpers import QUESTION, SERVICE_KEY, TEXT_REPLIES, Record, settings_for

from reactstep.client import Client
from reactstep.client.traces.scripted_llm import ScriptedLLMServer, ScriptItem
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.tools.store.local import LocalStore


@pytest.fixture(autouse=True)
def client_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands send the service key the test servers ask for."""
    monkeypatch.setenv("REACTSTEP_CLIENT_API_KEY", SERVICE_KEY)


@pytest.fixture
def server(tmp_path: Path, llm_server: ScriptedLLMServer, local_store: LocalStore) -> Iterator[str]:
    with BackgroundServer(create_app(settings_for(tmp_path / "server", llm_server), store=local_store)) as up:
        yield up.url


@pytest.fixture
def record(server: str, llm_server: ScriptedLLMServer, tmp_path: Path) -> Record:
    """Ask QUESTION with `replies` scripted and the trace written; the trace's path."""

    def ask(replies: list[ScriptItem] = TEXT_REPLIES, **options: Any) -> Path:
        llm_server.push(*replies)
        trace = tmp_path / "trace.jsonl"
        with Client(server, SERVICE_KEY) as client:
            outcome = client.run(QUESTION, project="demo", trace=trace, **options)
        assert outcome.status == "final_answer"
        return trace

    return ask
