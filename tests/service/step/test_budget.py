"""Budgets over real HTTP: long observations, the context window, stop sequences, length cut-offs, loops."""

from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer, ToolCall
from reactstep.service.step.fit import MAX_OBSERVATION_CHARS, cut_observation, prompt_budget
from tests.service.step.test_react_step import step_body

REACT = "/api/agent/react_step"
SEGMENT = "You have one tool: read_file(file_path)."  # pins the system prompt's size
CUT = "[... {} characters removed from the middle of this observation ...]"


def read_step(n: int, observation: str) -> dict[str, Any]:
    return {
        "thought": f"step {n}",
        "action_details": {
            "tool_name": "read_file",
            "tool_args": {"file_path": f"f{n}.py"},
            "raw_action_string": f'Action: read_file(file_path="f{n}.py")',
        },
        "observation": observation,
    }


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("abcdefghij", 10, "abcdefghij"),
        ("abcdefghij", 4, "ab\n" + CUT.format(6) + "\nij"),
        ("abcdefghij", 5, "ab\n" + CUT.format(5) + "\nhij"),
    ],
)
def test_long_observations_keep_head_and_tail(text: str, limit: int, expected: str) -> None:
    assert cut_observation(text, limit) == expected


@pytest.mark.parametrize(
    ("window", "max_tokens", "budget"), [(8192, 1024, 7168), (8192, 8000, 4096), (2000, 100, 1900)]
)
def test_the_reply_keeps_its_room_but_never_more_than_half(window: int, max_tokens: int, budget: int) -> None:
    assert prompt_budget(window, max_tokens) == budget


def test_a_long_observation_reaches_the_model_cut(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push("Final Answer: a")
    half = MAX_OBSERVATION_CHARS // 2
    history = [read_step(0, "A" * (half + 5_000) + "B" * (half + 5_000))]
    client = make_client(llm_default_context_window=100_000)  # room for it whole: cut, not elided
    body = client.post(REACT, json=step_body(conversation_history=history)).json()
    assert llm_server.requests[0]["messages"][-1]["content"] == (
        f"Observation:\n<observation>\n{'A' * half}\n{CUT.format(10_000)}\n{'B' * half}\n</observation>"
    )
    assert body["notes"] == [
        f"1 observation(s) longer than {MAX_OBSERVATION_CHARS} characters were cut to head + tail."
    ]


ROOM = "with room for a reply"
ELIDED = (
    "Observation:\n<observation>\n"
    "[This observation (3000 characters) was elided to fit the context window.]\n</observation>"
)


@pytest.mark.parametrize(
    ("window", "elided", "notes"),
    [
        (3000, 0, None),
        # 1 would do by tiktoken's count; the margin for a model litellm does not know takes a second
        (2000, 2, ["The 2 oldest observation(s) were elided to fit the 2000-token context window."]),
        (1500, 2, ["The 2 oldest observation(s) were elided to fit the 1500-token context window."]),
        (  # over its budget (the window less the reply's 100) but within the window less 68: sent
            550,
            3,
            [
                "The 3 oldest observation(s) were elided to fit the 550-token context window.",
                "The prompt is still 22 tokens over its budget with every observation elided.",
            ],
        ),
    ],
)
def test_the_oldest_observations_are_elided_to_fit_the_window(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    window: int,
    elided: int,
    notes: list[str] | None,
) -> None:
    """Three steps of about 600 tokens each after a small prompt: about 2100 tokens in all by tiktoken's
    count, a quarter more for this model, which litellm does not know (UNKNOWN_MODEL_MARGIN)."""
    llm_server.push("Final Answer: a")
    history = [read_step(n, "word " * 600) for n in range(3)]
    request = step_body(
        conversation_history=history, available_tools_prompt_segment=SEGMENT, llm_config={"max_tokens": 100}
    )
    body = make_client(llm_default_context_window=window).post(REACT, json=request).json()
    messages = llm_server.requests[0]["messages"]
    observations = [m["content"] for m in messages if m["content"].startswith("Observation:")]
    assert [text == ELIDED for text in observations] == [n < elided for n in range(3)]
    notice = f"Note: what the {elided} oldest step"
    assert messages[0]["content"].split("\n\n")[-1].startswith(notice) is bool(elided)
    assert body.get("notes") == notes
    assert body.get("prompt_fit") == ({"window": window, "elided": elided, "left_out": 0} if elided else None)


def test_the_oldest_steps_are_left_out_when_eliding_is_not_enough(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    """Three elided steps still leave the prompt over the window less the least room for a reply (450 -
    56): the oldest steps are left out whole, and the prompt says so."""
    llm_server.push("Final Answer: a")
    history = [read_step(n, "word " * 600) for n in range(3)]
    request = step_body(
        conversation_history=history, available_tools_prompt_segment=SEGMENT, llm_config={"max_tokens": 100}
    )
    body = make_client(llm_default_context_window=450).post(REACT, json=request).json()
    messages = llm_server.requests[0]["messages"]
    assert [m["content"] for m in messages].count(ELIDED) == 1  # the newest step, elided
    assert messages[0]["content"].split("\n\n")[-2:] == [
        "Note: the 2 oldest steps of this conversation were left out to fit your context window.",
        "Note: what the 1 oldest step showed was elided to fit your context window. Run the tool again if "
        "you need it.",
    ]
    assert body["notes"][:2] == [
        "The 3 oldest observation(s) were elided to fit the 450-token context window.",
        f"The 2 oldest history item(s) were left out to fit the 450-token context window {ROOM}.",
    ]
    assert body["usage"]["prompt_tokens"] > 0


def test_a_prompt_over_the_window_without_any_history_is_not_sent(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    history = [read_step(n, "word " * 600) for n in range(3)]
    request = step_body(
        conversation_history=history,
        available_tools_prompt_segment=SEGMENT + " word" * 400,
        llm_config={"max_tokens": 100},
    )
    response = make_client(llm_default_context_window=400).post(REACT, json=request)
    assert (response.status_code, response.json()["error"]["code"]) == (400, "context_window_exceeded")
    assert response.json()["error"]["message"] == (
        "the prompt is 769 tokens with no conversation history at all, over the 400-token context window "
        "of openai/scripted (REACTSTEP_LLM_DEFAULT_CONTEXT_WINDOW; raise it if the model takes more); send "
        "a shorter user_query or fewer client_tools"
    )
    assert llm_server.requests == []


def test_the_newest_observation_is_the_last_elided(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    """With the two older observations elided the prompt is still over the window less the reply's least
    room: the older steps are left out rather than the newest observation elided (the model needs it most)."""
    llm_server.push("Final Answer: a")
    history = [read_step(0, "word " * 600), read_step(1, "word " * 600), read_step(2, "word " * 120)]
    request = step_body(
        conversation_history=history, available_tools_prompt_segment=SEGMENT, llm_config={"max_tokens": 100}
    )
    body = make_client(llm_default_context_window=600).post(REACT, json=request).json()
    messages = llm_server.requests[0]["messages"]
    observations = [m["content"] for m in messages[1:] if "<observation>" in m["content"]]
    assert observations == [f"Observation:\n<observation>\n{'word ' * 120}\n</observation>"]
    assert body["notes"][:2] == [
        "The 2 oldest observation(s) were elided to fit the 600-token context window.",
        f"The 2 oldest history item(s) were left out to fit the 600-token context window {ROOM}.",
    ]


def test_an_unusable_reply_is_elided_like_an_observation(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    """A small model's rambling replies that could not be used fill a small window as observations do."""
    llm_server.push("Final Answer: a")
    rambling = {"raw_output": "word " * 600, "format_error": "No action or final answer found."}
    history = [rambling, read_step(1, "word " * 600), rambling]
    request = step_body(
        conversation_history=history, available_tools_prompt_segment=SEGMENT, llm_config={"max_tokens": 100}
    )
    body = make_client(llm_default_context_window=1500).post(REACT, json=request).json()
    messages = llm_server.requests[0]["messages"]
    assert messages[2] == {
        "role": "assistant",
        "content": "[This reply (3000 characters) was elided to fit the context window.]",
    }
    assert body["notes"] == [
        "The 1 oldest observation(s) were elided to fit the 1500-token context window.",
        "The 1 oldest unusable reply(ies) were elided to fit the 1500-token context window.",
    ]
    assert "word word" in messages[-2]["content"]  # the newest reply is whole


def test_a_known_model_uses_its_own_window(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push("Final Answer: a")
    history = [read_step(n, "word " * 600) for n in range(3)]
    config = {"model": "openai/gpt-4o-mini", "max_tokens": 100}
    client = make_client(llm_default_context_window=400)  # would elide everything for an unknown model
    body = client.post(REACT, json=step_body(conversation_history=history, llm_config=config)).json()
    assert "notes" not in body


@pytest.mark.parametrize(
    ("reply", "status", "thought"),
    [
        (  # a reply cut by max_tokens reports max_tokens' worth of tokens
            Reply("Thought: I will read the fi", finish_reason="length", completion_tokens=77),
            "truncated_output",
            "I will read the fi",
        ),
        (
            Reply("Thought: x\nAction: read_file(file_pa", finish_reason="length", completion_tokens=77),
            "truncated_output",
            "x",
        ),
        (
            Reply("Thought: x\nFinal Answer: The answer is", finish_reason="length", completion_tokens=77),
            "truncated_output",
            "x",
        ),
        (
            Reply(
                'Thought: x\nAction: read_file(file_path="a.py")\nObservation: made up',
                finish_reason="length",
            ),
            "action_proposed",
            "x",
        ),
    ],
)
def test_a_length_cut_off_is_truncated_output(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    reply: Reply,
    status: str,
    thought: str,
) -> None:
    llm_server.push(reply)
    body = make_client().post(REACT, json=step_body(llm_config={"max_tokens": 77})).json()
    assert (body["status"], body["thought"], body["raw_output"]) == (status, thought, reply.text)
    if status == "truncated_output":
        assert body["format_error"].startswith(
            "Your last reply could not be used: "
            "It was cut off at the limit of 77 tokens before it was complete."
        )
        assert body["notes"] == [
            "The reply reached max_tokens (77) before its action or answer was complete; "
            "raise llm_config.max_tokens if this repeats."
        ]
        assert "action_details" not in body


def test_a_reply_cut_short_of_max_tokens_is_blamed_on_the_window(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    # llama.cpp's servers end a reply that fills their context window with finish_reason "length" too
    llm_server.push(Reply("Thought: I will read the fi", finish_reason="length", completion_tokens=30))
    body = make_client().post(REACT, json=step_body(llm_config={"max_tokens": 77})).json()
    prompt_tokens = body["usage"]["prompt_tokens"]
    assert body["status"] == "truncated_output"
    assert body["notes"] == [
        "The reply stopped after 30 tokens, short of max_tokens (77): the prompt "
        f"({prompt_tokens}) and the reply filled the model's context window ({prompt_tokens + 30} tokens). "
        "Send a shorter conversation_history, or give the model server a larger window (and "
        "REACTSTEP_LLM_DEFAULT_CONTEXT_WINDOW the same)."
    ]


def test_a_native_tool_call_cut_off_is_truncated_output(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(Reply("reading", (ToolCall("read_file", '{"file_pa'),), finish_reason="length"))
    body = make_client().post(REACT, json=step_body(llm_config={"tool_calling": "native"})).json()
    assert (body["status"], body["thought"]) == ("truncated_output", "reading")


HALLUCINATED = 'Thought: read it\nAction: read_file(file_path="src/app.py")\nObservation: def main(): ...'


@pytest.mark.parametrize(
    ("rejects", "calls", "notes"),
    [
        ((), 1, None),
        (("stop",), 2, ["The provider rejected stop sequences; the step was sent without them."]),
    ],
)
def test_stop_sequences_are_dropped_where_rejected_and_observations_cut_either_way(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    rejects: tuple[str, ...],
    calls: int,
    notes: list[str] | None,
) -> None:
    llm_server.reject_params = frozenset(rejects)
    llm_server.push(HALLUCINATED)
    body = make_client().post(REACT, json=step_body()).json()
    assert (body["status"], body["thought"]) == ("action_proposed", "read it")
    assert body["action_details"]["tool_args"] == {"file_path": "src/app.py"}
    assert body.get("notes") == notes
    assert [request.get("stop") for request in llm_server.requests] == [["\nObservation:"], None][:calls]


SAME = read_step(0, "File: f0.py (1 lines)\n    1 | pass")
LOOP_WARNING = (
    'Warning: you have run `read_file(file_path="f0.py")` 3 times and got the same observation each time. '
    "Running it again ends the session without an answer. "
    "Do something different, or give your Final Answer with what you know."
)
AGAIN = 'Thought: once more\nAction: read_file(file_path="f0.py")'
OTHER = 'Thought: something else\nAction: read_file(file_path="f1.py")'


@pytest.mark.parametrize(
    ("history", "reply", "status", "warned"),
    [
        ([SAME, SAME], AGAIN, "action_proposed", False),
        ([SAME, SAME, SAME], OTHER, "action_proposed", True),
        ([SAME, SAME, SAME], AGAIN, "loop_detected", True),
        ([SAME, {**SAME, "observation": "changed"}, SAME], AGAIN, "action_proposed", False),
        ([SAME, {**SAME, "thought": "other words"}, SAME, read_step(1, "x")], AGAIN, "loop_detected", True),
    ],
)
def test_a_stuck_loop_is_warned_then_ended(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    history: list[dict[str, Any]],
    reply: str,
    status: str,
    warned: bool,
) -> None:
    llm_server.push(reply)
    body = make_client().post(REACT, json=step_body(conversation_history=history)).json()
    system = llm_server.requests[0]["messages"][0]["content"]
    assert system.endswith(LOOP_WARNING) is warned
    assert body["status"] == status
    warning = 'The prompt warns that read_file(file_path="f0.py") ran 3 times, observing the same.'
    loop_note = "The model proposed an action it had already run with the same result; the loop ends here."
    expected_notes = [warning] if warned else []
    if status == "loop_detected":
        assert body["action_details"]["tool_args"] == {"file_path": "f0.py"}
        expected_notes.append(loop_note)
    assert body.get("notes", []) == expected_notes


UNUSABLE = "I think the answer is somewhere in the code."


@pytest.mark.parametrize(
    ("repeats", "reply", "status"),
    [
        (2, UNUSABLE, "format_error"),
        (3, UNUSABLE, "loop_detected"),
        (5, UNUSABLE, "loop_detected"),
        (3, "Still thinking about it.", "format_error"),
    ],
)
def test_the_same_unusable_reply_again_and_again_ends_the_loop(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    repeats: int,
    reply: str,
    status: str,
) -> None:
    client = make_client()
    llm_server.push(UNUSABLE, reply)
    first = client.post(REACT, json=step_body()).json()
    assert first["status"] == "format_error"
    history = [{"raw_output": UNUSABLE, "format_error": first["format_error"]}] * repeats
    body = client.post(REACT, json=step_body(conversation_history=history)).json()
    assert (body["status"], body["raw_output"]) == (status, reply)
    refusal = "Your last reply could not be used: No action or final answer found."
    assert body["format_error"].startswith(refusal)
    loop_note = "The model sent again a reply it had already been told it could not use; the loop ends here."
    assert body.get("notes", []) == ([loop_note] if status == "loop_detected" else [])
