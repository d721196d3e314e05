"""Native tool calling end to end: tools go out as JSON Schemas, tool calls come back as action_details."""

from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer, ToolCall
from reactstep.service.llm.gateway import model_facts
from reactstep.service.step.prepare import resolve_mode
from reactstep.tools.catalog import default_registry
from tests.service.step.test_react_step import HISTORY, step_body

REACT = "/api/agent/react_step"
NATIVE = {"tool_calling": "native"}
BASH = {
    "name": "bash",
    "description": "Run a shell command on the user's machine.",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
}
READ_APP = ToolCall("read_file", '{"file_path": "src/app.py"}')
READ_APP_ACTION = {
    "tool_name": "read_file",
    "tool_args": {"file_path": "src/app.py"},
    "raw_action_string": 'Action: read_file(file_path="src/app.py")',
    "executor": "server",
}
FORMAT_HINT = (
    'Reply with `Action: tool_name(arg="value")` to call a tool, or `Final Answer: ...` when you are done.'
)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            Reply("I should read the app.", (READ_APP,)),
            {
                "status": "action_proposed",
                "thought": "I should read the app.",
                "action_details": READ_APP_ACTION,
                "raw_output": 'Thought: I should read the app.\nAction: read_file(file_path="src/app.py")',
            },
        ),
        (
            Reply("Thought: look first", (READ_APP,)),
            {"status": "action_proposed", "thought": "look first", "action_details": READ_APP_ACTION},
        ),
        (
            Reply("", (ToolCall("list_files", ""),)),
            {
                "status": "action_proposed",
                "thought": "",
                "action_details": {
                    "tool_name": "list_files",
                    "tool_args": {},
                    "raw_action_string": "Action: list_files()",
                    "executor": "server",
                },
                "raw_output": "Action: list_files()",
            },
        ),
        (
            Reply("run them", (ToolCall("bash", '{"command": "pytest -q"}'),)),
            {
                "status": "action_proposed",
                "action_details": {
                    "tool_name": "bash",
                    "tool_args": {"command": "pytest -q"},
                    "raw_action_string": 'Action: bash(command="pytest -q")',
                    "executor": "client",
                },
            },
        ),
        (
            Reply("both", (READ_APP, ToolCall("list_files", "{}", id="call_1"))),
            {
                "status": "action_proposed",
                "action_details": READ_APP_ACTION,
                "notes": ["The model asked for 2 tool calls at once; only the first is used."],
            },
        ),
        (
            Reply("Thought: I know.\nFinal Answer: main returns 42."),
            {"status": "final_answer", "thought": "I know.", "final_answer": "main returns 42."},
        ),
        (
            Reply("main returns 42."),
            {
                "status": "format_error",
                "thought": "main returns 42.",
                "raw_output": "main returns 42.",
            },
        ),
        (
            Reply("hmm", (ToolCall("delete_all", "{}"),)),
            {
                "status": "format_error",
                "thought": "hmm",
                "raw_output": 'Thought: hmm\nAction: {"name": "delete_all", "arguments": "{}"}',
            },
        ),
        (
            Reply("", (ToolCall("read_file", '{"file_path": '),)),
            {"status": "format_error", "thought": ""},
        ),
    ],
)
def test_native_reply_becomes_step(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    reply: Reply,
    expected: dict[str, Any],
) -> None:
    llm_server.push(reply)
    body = step_body(client_tools=[BASH], llm_config=NATIVE)
    answer = make_client().post(REACT, json=body).json()
    assert {key: answer.get(key) for key in expected} == expected
    assert answer["tool_calling"] == "native"
    if answer["status"] != "format_error":
        return
    reasons = {
        "main returns 42.": f"No action or final answer found. {FORMAT_HINT}",
        "hmm": "Unknown tool 'delete_all'. Available tools: ",
        "": '"arguments" must be a JSON object (or a string holding one).',
    }
    assert answer["format_error"].startswith(f"Your last reply could not be used: {reasons[reply.text]}")


def test_native_and_text_give_the_same_step(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(
        Reply("I should read the app.", (READ_APP,)),
        'Thought: I should read the app.\nAction: read_file(file_path="src/app.py")',
    )
    client = make_client()
    native = client.post(REACT, json=step_body(llm_config=NATIVE)).json()
    text = client.post(REACT, json=step_body()).json()
    compared = ("status", "thought", "action_details", "raw_output")
    assert {key: native[key] for key in compared} == {key: text[key] for key in compared}
    sent_native, sent_text = llm_server.requests
    registry = default_registry()
    assert sent_native["tools"] == [
        {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.json_schema(),
            },
        }
        for spec in registry.specs
    ]
    assert "stop" not in sent_native
    assert "tools" not in sent_text
    assert sent_text["stop"] == ["\nObservation:"]
    native_system, text_system = sent_native["messages"][0]["content"], sent_text["messages"][0]["content"]
    assert "call one of the tools you are given" in native_system
    assert 'Action: tool_name(arg="value", n=3)' not in native_system
    assert 'Action: tool_name(arg="value", n=3)' in text_system


def test_history_renders_into_provider_tool_call_messages(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push("Final Answer: done", "Final Answer: done")
    client = make_client()
    for _ in range(2):
        client.post(REACT, json=step_body(conversation_history=HISTORY, llm_config=NATIVE))
    first, second = llm_server.requests
    assert first["messages"] == second["messages"]
    assert first["tools"] == second["tools"]
    list_root = {"id": "call_2", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}
    read_nope = {
        "id": "call_4",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"file_path": "nope.py"}'},
    }
    assert first["messages"][1:] == [
        {"role": "user", "content": "What is this project?"},
        {"role": "assistant", "content": "A demo."},
        {"role": "user", "content": "Question: What does main return?"},
        {"role": "assistant", "content": "List the root.", "tool_calls": [list_root]},
        {
            "role": "tool",
            "tool_call_id": "call_2",
            "content": "<observation>\nContents of ./ (1 entries):\nREADME.md  (7 bytes)\n</observation>",
        },
        {"role": "assistant", "content": "I am not sure"},
        {"role": "user", "content": "Your last reply could not be used: x"},
        # a tool-call-only turn keeps its content key: llama.cpp's chat templates read it
        {"role": "assistant", "content": "", "tool_calls": [read_nope]},
        {
            "role": "tool",
            "tool_call_id": "call_4",
            "content": "The tool failed:\n<observation>\nError: file not found: nope.py\n</observation>",
        },
    ]


def test_the_request_may_send_the_history_as_text_turns(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    """llm_config.tool_results "text": what a chat format that drops tool messages needs (and what a replay
    of a step recorded on one sends back); the answer says which form went."""
    llm_server.push("Final Answer: done", "Final Answer: done", "Final Answer: done")
    client = make_client()
    as_text = client.post(
        REACT, json=step_body(conversation_history=HISTORY, llm_config={**NATIVE, "tool_results": "text"})
    ).json()
    as_messages = client.post(REACT, json=step_body(conversation_history=HISTORY, llm_config=NATIVE)).json()
    assert (as_text["tool_results"], as_messages["tool_results"]) == ("text", "messages")
    sent = llm_server.requests[0]["messages"]
    assert all(message["role"] != "tool" and "tool_calls" not in message for message in sent)
    assert {"role": "assistant", "content": "Thought: List the root.\nAction: list_files()"} in sent
    assert any(message["role"] == "tool" for message in llm_server.requests[1]["messages"])
    text_mode = client.post(REACT, json=step_body(llm_config={"tool_results": "text"})).json()
    assert (text_mode["status"], text_mode["tool_calling"], "tool_results" in text_mode) == (
        "final_answer",
        "text",
        False,
    )


@pytest.mark.parametrize(
    ("settings", "llm_config", "mode"),
    [
        ({}, {}, "text"),
        ({"llm_tool_calling": "native"}, {}, "native"),
        ({"llm_tool_calling": "native"}, {"tool_calling": "text"}, "text"),
        ({}, {"tool_calling": "auto"}, "text"),  # litellm does not know openai/scripted
        ({}, {"tool_calling": "auto", "model": "openai/gpt-4o-mini"}, "native"),
    ],
)
def test_tool_calling_mode_is_resolved(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    settings: dict[str, Any],
    llm_config: dict[str, Any],
    mode: str,
) -> None:
    llm_server.push("Final Answer: 42")
    config = {**llm_config, "api_base": llm_server.base_url}
    client = make_client(llm_api_base_allowlist=["http://127.0.0.1:*"], **settings)
    answer = client.post(REACT, json=step_body(llm_config=config)).json()
    assert (answer["status"], answer["tool_calling"]) == ("final_answer", mode)
    assert ("tools" in llm_server.requests[0]) is (mode == "native")
    # llama-cpp-python ignores tools sent without a tool_choice
    assert llm_server.requests[0].get("tool_choice") == ("auto" if mode == "native" else None)


@pytest.mark.parametrize(
    ("mode", "model", "resolved"),
    [
        ("auto", "openai/gpt-4o-mini", "native"),
        ("auto", "gpt-4o-mini", "native"),
        ("auto", "ollama/llama3", "text"),
        ("auto", "openai/my-local-model", "text"),
        ("text", "openai/gpt-4o-mini", "text"),
        ("native", "openai/my-local-model", "native"),
    ],
)
def test_auto_asks_litellm_whether_the_model_calls_functions(mode: str, model: str, resolved: str) -> None:
    assert resolve_mode(mode, model_facts(model)) == resolved


@pytest.mark.parametrize(
    ("reply_format", "expected"),
    [
        ("native_text", {"status": "final_answer", "thought": "Easy.", "final_answer": "It returns 42."}),
        ("react", {"status": "format_error", "thought": "Easy.\n\nIt returns 42."}),
    ],
)
def test_plain_text_is_the_answer_when_the_request_says_so(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    reply_format: str,
    expected: dict[str, Any],
) -> None:
    reply = "<think>Easy.</think>It returns 42."
    llm_server.push(reply)
    config = {**NATIVE, "reply_format": reply_format}
    answer = make_client().post(REACT, json=step_body(llm_config=config)).json()
    assert {key: answer.get(key) for key in expected} == expected
    assert answer["raw_output"] == reply  # litellm's reasoning_content is put back where it was
