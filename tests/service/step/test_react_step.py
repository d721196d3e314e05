"""react_step end to end: TestClient -> app -> litellm -> scripted OpenAI server on loopback."""

from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import Fault, ScriptedLLMServer

CANARY_KEY = "sk-canary-7f3a9c-never-show-me"


def step_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "project_id": "demo",
        "session_id": "s-1",
        "user_query": "What does main return?",
        "conversation_history": [],
        "max_iterations_left": 5,
    }
    body.update(overrides)
    return body


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            'Thought: I should read the app.\nAction: read_file(file_path="src/app.py")',
            {
                "status": "action_proposed",
                "thought": "I should read the app.",
                "action_details": {
                    "tool_name": "read_file",
                    "tool_args": {"file_path": "src/app.py"},
                    "raw_action_string": 'Action: read_file(file_path="src/app.py")',
                    "executor": "server",
                },
            },
        ),
        (
            "Thought: I know it.\nFinal Answer: main returns 42.",
            {"status": "final_answer", "thought": "I know it.", "final_answer": "main returns 42."},
        ),
        (
            'Thought: run it\nAction: bash(command="pytest -q")',
            {
                "status": "action_proposed",
                "thought": "run it",
                "action_details": {
                    "tool_name": "bash",
                    "tool_args": {"command": "pytest -q"},
                    "raw_action_string": 'Action: bash(command="pytest -q")',
                    "executor": "client",
                },
            },
        ),
    ],
)
def test_reply_becomes_step(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    reply: str,
    expected: dict[str, Any],
) -> None:
    llm_server.push(reply)
    bash = {
        "name": "bash",
        "description": "Run a shell command on the user's machine.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    }
    response = make_client().post("/api/agent/react_step", json=step_body(client_tools=[bash]))
    assert response.status_code == 200
    body = response.json()
    assert {key: body.get(key) for key in expected} == expected
    assert body["raw_output"] == reply
    assert body["session_id"] == "s-1"
    assert body["model"] == "openai/scripted"
    assert body["usage"]["completion_tokens"] == len(reply) // 4
    assert body["timing"]["total_ms"] >= body["timing"]["llm_ms"] > 0


def test_format_error_carries_corrective_message(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push("Thought: hmm\nAction: delete_everything()")
    body = make_client().post("/api/agent/react_step", json=step_body()).json()
    assert body["status"] == "format_error"
    assert body["raw_output"] == "Thought: hmm\nAction: delete_everything()"
    assert body["format_error"].startswith("Your last reply could not be used: ")
    assert "delete_everything" in body["format_error"]
    assert body["format_error"].endswith(
        "Available tools: code_search, create_file, edit_file, edit_lines, find_definition, find_files, "
        "find_importers, grep, list_files, project_overview, read_file, replace_in_file"
    )
    assert "action_details" not in body


def test_zero_iterations_left_does_not_call_the_llm(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    body = make_client().post("/api/agent/react_step", json=step_body(max_iterations_left=0))
    assert body.json()["status"] == "max_iterations_reached"
    assert llm_server.requests == []


def test_last_iteration_asks_for_a_final_answer(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push("Final Answer: 42", "Final Answer: 42")
    client = make_client()
    client.post("/api/agent/react_step", json=step_body(max_iterations_left=1))
    client.post("/api/agent/react_step", json=step_body(max_iterations_left=2))
    last, earlier = (request["messages"] for request in llm_server.requests)
    # The notice closes the prompt: everything before it is the previous step's prompt, cached or not.
    assert last[:-1] == earlier[:-1]
    assert last[-1]["role"] == "user"
    assert last[-1]["content"] == (
        f"{earlier[-1]['content']}\n\nThis is your last step: you cannot use another tool. "
        "Reply now with a Final Answer based on what you have found so far."
    )
    assert all("This is your last step" not in message["content"] for message in earlier)


def test_the_last_native_step_keeps_the_tools_unusable_and_ends_with_the_notice(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push("Final Answer: 42", "Final Answer: 42")
    client = make_client()
    native = {"tool_calling": "native"}
    history = [HISTORY[2]]  # a call and its result: the prompt ends with a tool message
    client.post(
        "/api/agent/react_step",
        json=step_body(max_iterations_left=2, llm_config=native, conversation_history=history),
    )
    client.post(
        "/api/agent/react_step",
        json=step_body(max_iterations_left=1, llm_config=native, conversation_history=history),
    )
    earlier, last = llm_server.requests
    assert len(earlier["tools"]) == 12
    assert earlier["tool_choice"] == "auto"
    # The same tools with tool_choice "none": the prompt before the notice is the one evaluated before.
    assert last["tools"] == earlier["tools"]
    assert last["tool_choice"] == "none"
    assert last["messages"][:-1] == earlier["messages"]
    assert earlier["messages"][-1]["role"] == "tool"
    assert last["messages"][-1] == {
        "role": "user",
        "content": "This is your last step: you cannot use another tool. "
        "Reply now with a Final Answer based on what you have found so far.",
    }


HISTORY = [
    {"role": "user", "content": "What is this project?"},
    {"role": "assistant", "content": "A demo."},
    {
        "thought": "List the root.",
        "action_details": {
            "tool_name": "list_files",
            "tool_args": {},
            "raw_action_string": "Action: list_files()",
            "executor": "server",
        },
        "observation": "Contents of ./ (1 entries):\nREADME.md  (7 bytes)",
        "is_error": False,
    },
    {"raw_output": "I am not sure", "format_error": "Your last reply could not be used: x"},
    {
        "thought": "",
        "action_details": {
            "tool_name": "read_file",
            "tool_args": {"file_path": "nope.py"},
            "raw_action_string": 'Action: read_file(file_path="nope.py")',
            "executor": "server",
        },
        "observation": "Error: file not found: nope.py",
        "is_error": True,
    },
]


def test_history_renders_into_messages_in_order(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push("Final Answer: done")
    client = make_client()
    client.post("/api/agent/react_step", json=step_body(conversation_history=HISTORY))
    messages = llm_server.requests[0]["messages"]
    assert [(m["role"], m["content"]) for m in messages[1:]] == [
        ("user", "What is this project?"),
        ("assistant", "A demo."),
        ("user", "Question: What does main return?"),
        ("assistant", "Thought: List the root.\nAction: list_files()"),
        (
            "user",
            "Observation:\n<observation>\nContents of ./ (1 entries):\nREADME.md  (7 bytes)\n</observation>",
        ),
        ("assistant", "I am not sure"),
        ("user", "Your last reply could not be used: x"),
        ("assistant", 'Action: read_file(file_path="nope.py")'),
        (
            "user",
            "Observation (the tool failed):\n<observation>\nError: file not found: nope.py\n</observation>",
        ),
    ]
    assert messages[0]["role"] == "system"


def test_same_request_gives_the_same_prompt_bytes(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push("Final Answer: a", "Final Answer: a")
    client = make_client()
    for _ in range(2):
        client.post("/api/agent/react_step", json=step_body(conversation_history=HISTORY))
    first, second = llm_server.requests
    assert first["messages"] == second["messages"]


def test_server_manifest_lists_tools_and_client_segment_replaces_it(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push("Final Answer: a", "Final Answer: a")
    client = make_client()
    client.post("/api/agent/react_step", json=step_body())
    segment = "You have one tool: read_file(file_path)."
    client.post("/api/agent/react_step", json=step_body(available_tools_prompt_segment=segment))
    own, given = (request["messages"][0]["content"] for request in llm_server.requests)
    assert "## Search & discovery\n1. **code_search(query: string, max_results?: integer," in own
    assert "7. **list_files(path?: string, recursive?: boolean, depth?: integer, page?: integer)**" in own
    assert "## Reading\n8. **read_file(file_path: string, start_line?: integer, end_line?: integer)**" in own
    assert segment in given
    assert "**list_files(" not in given


def test_llm_config_overrides_defaults(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push("Final Answer: a")
    config = {"model": "openai/other", "temperature": 0.5, "max_tokens": 77}
    make_client().post("/api/agent/react_step", json=step_body(llm_config=config))
    sent = llm_server.requests[0]
    assert (sent["model"], sent["temperature"], sent["max_tokens"]) == ("other", 0.5, 77)


@pytest.mark.parametrize(
    ("allowlist", "api_base", "status"),
    [
        ([], "http://127.0.0.1:{port}/v1", 403),
        (["http://127.0.0.1:{port}"], "http://127.0.0.1:{port}/v1", 200),
        (["http://127.0.0.1:*"], "http://127.0.0.1:{port}/v1", 200),
        (["https://127.0.0.1:*"], "http://127.0.0.1:{port}/v1", 403),
        (["http://127.0.0.1:1"], "http://127.0.0.1:{port}/v1", 403),
        (["http://127.0.0.1:*"], "http://user@127.0.0.1:{port}/v1", 403),
        (["http://127.0.0.1:*"], "file:///etc/passwd", 403),
    ],
)
def test_api_base_must_be_allowlisted(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    allowlist: list[str],
    api_base: str,
    status: int,
) -> None:
    port = llm_server.base_url.split(":")[2].split("/")[0]
    llm_server.push("Final Answer: a")
    client = make_client(
        llm_api_base="http://127.0.0.1:9/v1",
        llm_api_base_allowlist=[entry.format(port=port) for entry in allowlist],
    )
    config = {"api_base": api_base.format(port=port)}
    response = client.post("/api/agent/react_step", json=step_body(llm_config=config))
    assert response.status_code == status
    if status == 403:
        assert response.json()["error"]["code"] == "api_base_not_allowed"
        assert llm_server.requests == []


def test_user_key_reaches_the_provider_and_nothing_else(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push("Final Answer: a")
    keys = {"llmKey": CANARY_KEY}
    response = make_client().post("/api/agent/react_step", json=step_body(user_api_keys=keys))
    assert llm_server.authorizations == [f"Bearer {CANARY_KEY}"]
    assert CANARY_KEY not in response.text


@pytest.mark.parametrize(
    ("fault", "status", "code"),
    [
        (Fault(status=401, message=f"bad key {CANARY_KEY}"), 502, "llm_auth_failed"),
        (Fault(status=429), 503, "llm_rate_limited"),
        (Fault(status=500, message=f"boom {CANARY_KEY}"), 503, "llm_unavailable"),
        (Fault(status=400, message=f"no such model {CANARY_KEY}"), 502, "llm_bad_response"),
        (Fault(delay_s=3.0), 504, "llm_timeout"),
    ],
)
def test_llm_failures_map_to_codes_without_the_key(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    caplog: pytest.LogCaptureFixture,
    fault: Fault,
    status: int,
    code: str,
) -> None:
    llm_server.push(fault, "Final Answer: too late")
    client = make_client(llm_timeout_s=1.0, llm_max_retries=0)
    keys = {"llmKey": CANARY_KEY}
    response = client.post("/api/agent/react_step", json=step_body(user_api_keys=keys))
    assert response.status_code == status
    assert response.json()["error"]["code"] == code
    assert CANARY_KEY not in response.text
    assert CANARY_KEY not in caplog.text


@pytest.mark.parametrize(
    ("reply", "tool_args", "notes"),
    [
        (
            'Action: read_file(path="src/app.py", start_line="2")',
            {"file_path": "src/app.py", "start_line": 2},
            [
                "Parser: Argument 'path' was read as 'file_path'.",
                "Parser: Argument 'start_line' was given as the string '2'; read as 2.",
            ],
        ),
        (
            "<tool>read_file</tool><tool_input>{'filepath': 'src/app.py',}</tool_input>",
            {"file_path": "src/app.py"},
            [
                "Parser: The JSON was not valid (Expecting property name enclosed in double quotes: "
                "line 1 column 2 (char 1)); it was read as a Python literal.",
                "Parser: Argument 'filepath' was read as 'file_path'.",
            ],
        ),
    ],
)
def test_repairs_and_aliases_show_in_notes(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    reply: str,
    tool_args: dict[str, Any],
    notes: list[str],
) -> None:
    llm_server.push(reply)
    body = make_client().post("/api/agent/react_step", json=step_body()).json()
    assert (body["status"], body["raw_output"]) == ("action_proposed", reply)
    assert body["action_details"]["tool_args"] == tool_args
    assert body["notes"] == notes


def test_format_error_names_the_problem_and_shows_a_corrected_call(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push('Thought: look\nAction: read_file(start_line=1, lines="all")')
    body = make_client().post("/api/agent/react_step", json=step_body()).json()
    assert body["status"] == "format_error"
    assert (
        "read_file: missing required argument 'file_path'; unknown argument 'lines' "
        '(valid: file_path, start_line, end_line). Write it like: Action: read_file(file_path="...")'
    ) in body["format_error"]
