"""The gateway's plain calls over real HTTP: the answer litellm gives, without litellm's success logging."""

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import litellm
import pytest

from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.service.llm.completions import LiteLLMGateway
from reactstep.service.llm.protocol import LLMRequest

MESSAGES = [{"role": "user", "content": "What does main return?"}]


@pytest.fixture
def logged() -> Iterator[list[str]]:
    """Replies litellm's success callbacks saw, while the test runs."""
    seen: list[str] = []

    def callback(kwargs: dict[str, Any], response: Any, start: Any, end: Any) -> None:
        seen.append(response.choices[0].message.content)

    before = litellm.success_callback
    litellm.success_callback = [callback]
    try:
        yield seen
    finally:
        litellm.success_callback = before


def test_the_gateway_answers_as_litellm_does_and_skips_its_success_logging(logged: list[str]) -> None:
    with ScriptedLLMServer() as llm:
        llm.push("Final Answer: from the gateway", "Final Answer: from litellm")
        request = LLMRequest(
            "openai/m", MESSAGES, 0.0, 64, 10.0, api_base=llm.base_url, stop=("Observation:",)
        )
        reply = asyncio.run(LiteLLMGateway(max_workers=2).complete(request))
        direct = litellm.completion(
            model="openai/m", messages=MESSAGES, api_base=llm.base_url, api_key="none"
        )
        deadline = time.monotonic() + 10
        while not logged and time.monotonic() < deadline:  # litellm logs on a background thread
            time.sleep(0.01)
        time.sleep(0.2)  # time enough for a second (wrong) entry to show up
        sent = llm.requests[0]
    assert reply.text == "Final Answer: from the gateway"
    assert reply.finish_reason == "stop"
    assert direct.choices[0].message.content == "Final Answer: from litellm"
    assert sent["messages"] == MESSAGES
    assert sent["stop"] == ["Observation:"]
    assert logged == ["Final Answer: from litellm"]


def test_litellm_timing_hook_runs_on_the_workers_own_loop_not_a_new_one_per_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """litellm reports each sync call to its service logger through an async hook; a worker keeps a
    loop for it, so calls after the first make no event loop (asyncio.run made one per call)."""
    made: list[asyncio.AbstractEventLoop] = []
    new_event_loop = asyncio.new_event_loop

    def counted() -> asyncio.AbstractEventLoop:
        made.append(new_event_loop())
        return made[-1]

    with ScriptedLLMServer() as llm:
        llm.push(*[f"Final Answer: {n}" for n in range(4)])
        request = LLMRequest("openai/m", MESSAGES, 0.0, 64, 10.0, api_base=llm.base_url)
        gateway = LiteLLMGateway(max_workers=1)

        async def four_calls() -> list[str]:
            monkeypatch.setattr(asyncio, "new_event_loop", counted)
            monkeypatch.setattr(asyncio.events, "new_event_loop", counted)  # what asyncio.run calls
            return [(await gateway.complete(request)).text for _ in range(4)]

        texts = asyncio.run(four_calls())
    assert texts == [f"Final Answer: {n}" for n in range(4)]
    assert len(made) == 1  # the one worker's own loop
