"""usage.estimated: false when the provider reported the token counts, true when a streamed answer came
without a usage chunk and the counts are litellm's estimate (the real server on loopback, the scripted
LLM streaming with and without its usage chunk)."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from tests.service.step.test_react_step import step_body

ANSWER = "Thought: main returns 42.\nFinal Answer: 42"


@pytest.fixture
def server(tmp_path: Path, llm_server: ScriptedLLMServer, local_store: LocalStore) -> Iterator[str]:
    settings = Settings(data_dir=tmp_path, llm_model="openai/scripted", llm_api_base=llm_server.base_url)
    with BackgroundServer(create_app(settings, store=local_store)) as running:
        yield running.url


def usage_of(server: str, stream: bool) -> dict[str, Any]:
    response = httpx.post(f"{server}/api/agent/react_step", json=step_body(stream=stream), timeout=30)
    assert response.status_code == 200
    if not stream:
        return dict(response.json()["usage"])
    result = response.text.rsplit("event: result\ndata: ", 1)[1]
    return dict(json.loads(result)["usage"])


def reported(llm_server: ScriptedLLMServer) -> dict[str, Any]:
    """The counts the scripted LLM reports for its only request (characters / 4)."""
    prompt = sum(len(str(m.get("content") or "")) for m in llm_server.requests[0]["messages"]) // 4
    completion = len(ANSWER) // 4
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


@pytest.mark.parametrize("stream", [True, False])
def test_the_providers_counts_are_not_estimated(
    server: str, llm_server: ScriptedLLMServer, stream: bool
) -> None:
    llm_server.push(Reply(ANSWER))
    usage = usage_of(server, stream)
    assert usage == {**reported(llm_server), "cached_tokens": 0, "estimated": False}


def test_a_stream_without_a_usage_chunk_is_marked_estimated(
    server: str, llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(Reply(ANSWER, usage_chunk=False))
    usage = usage_of(server, stream=True)
    assert llm_server.requests[0]["stream_options"] == {"include_usage": True}  # asked; none came
    assert usage["estimated"] is True
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
