"""Token counts kept per message give litellm's count of the whole prompt, and count each part once."""

from typing import Any

import litellm
import pytest

from reactstep.contract.step import ReactStepRequest
from reactstep.service.llm.gateway import count_tokens
from reactstep.service.llm.protocol import Message
from reactstep.service.llm.token_counts import TokenCounts
from reactstep.service.settings import Settings
from reactstep.service.step.prepare import PreparedStep, prepare_step
from reactstep.tools.catalog import default_registry

MODELS = ["openai/bench", "gpt-4o", "gpt-3.5-turbo", "claude-3-5-sonnet-20240620", "ollama/llama3"]


def history(steps: int) -> list[dict[str, Any]]:
    return [
        {
            "thought": f"step {n}",
            "action_details": {
                "tool_name": "read_file",
                "tool_args": {"file_path": f"src/m{n}.py"},
                "raw_action_string": f'Action: read_file(file_path="src/m{n}.py")',
            },
            "observation": "\n".join(f"{i:>5} | line {i} of m{n} ünïcode" for i in range(1, 40)),
        }
        for n in range(steps)
    ]


def prompt(mode: str, steps: int) -> tuple[list[Message], list[dict[str, Any]]]:
    """The messages (and tool schemas) react_step sends for a step of `steps` earlier steps."""
    request = ReactStepRequest.model_validate(
        {
            "project_id": "p",
            "session_id": "s",
            "user_query": "What does main return?",
            "conversation_history": history(steps),
            "llm_config": {"model": "gpt-4o", "tool_calling": mode},
        }
    )
    prepared = prepare_step(request, Settings(), default_registry())
    assert isinstance(prepared, PreparedStep)
    return prepared.llm_request.messages, list(prepared.llm_request.tools)


def litellm_count(model: str, messages: list[Message], tools: list[dict[str, Any]] | None) -> int:
    return int(litellm.token_counter(model=model, messages=messages, tools=tools))


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("mode", ["text", "native"])
@pytest.mark.parametrize("steps", [0, 1, 5])
def test_the_sum_of_the_parts_is_litellms_count_of_the_whole(model: str, mode: str, steps: int) -> None:
    messages, tools = prompt(mode, steps)
    assert (mode == "native") == bool(tools)
    assert count_tokens(model, messages, tools) == litellm_count(model, messages, tools or None)


def test_the_next_step_counts_only_what_it_adds() -> None:
    calls: list[int] = []

    def counter(model: str, messages: list[Message], tools: list[dict[str, Any]] | None) -> int:
        calls.append(len(messages))
        return litellm_count(model, messages, tools)

    counts = TokenCounts(counter)
    before, _ = prompt("text", 3)
    after, _ = prompt("text", 4)
    assert counts.count("gpt-4o", before) == litellm_count("gpt-4o", before, None)
    assert calls == [0] + [1] * len(before)  # the frame, then each message once
    calls.clear()
    assert counts.count("gpt-4o", after) == litellm_count("gpt-4o", after, None)
    assert calls == [1, 1]  # the fourth step: its assistant reply and its observation
    calls.clear()
    assert counts.count("gpt-4o", after) == litellm_count("gpt-4o", after, None)
    assert calls == []


def test_the_cache_stays_within_its_bound_and_stays_exact() -> None:
    counts = TokenCounts(litellm_count, max_entries=3)
    for steps in range(4):
        messages, _ = prompt("text", steps)
        assert counts.count("gpt-4o", messages) == litellm_count("gpt-4o", messages, None)
        assert len(counts) <= 3


def test_a_prompt_without_messages_is_counted_whole() -> None:
    _, tools = prompt("native", 0)
    assert TokenCounts(litellm_count).count("gpt-4o", [], tools) == litellm_count("gpt-4o", [], tools)
