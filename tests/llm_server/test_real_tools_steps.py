"""react_step with native tool calling against a real model: the two things llama-cpp-python's server
needs (a tool_choice with the tools, "content": "" on a call turn with no thought), plain and streamed."""

import json

import httpx
import pytest

from tests.llm_server.conftest import ModelServer
from tests.llm_server.real_steps import REACT, assert_plumbing, parse_events, step, step_body

pytestmark = pytest.mark.llm_server

NATIVE = {"tool_calling": "native"}
EARLIER = {  # a call the model made with no thought before it
    "thought": "",
    "action_details": {
        "tool_name": "read_file",
        "tool_args": {"file_path": "src/app.py"},
        "raw_action_string": 'read_file(file_path="src/app.py")',
    },
    "observation": "def main():\n    return 42\n",
}


def test_a_native_step_sends_the_tools(reactstep_url: str, model_server: ModelServer) -> None:
    """llama-cpp-python renders `tools` into the prompt only when a tool_choice comes with them."""
    result = step(reactstep_url, llm_config=NATIVE)
    assert_plumbing(result)
    assert result["tool_calling"] == "native"
    tools = httpx.get(f"{reactstep_url}/api/agent/tools", timeout=30).json()["tools"]
    schemas = model_server.count_tokens("".join(json.dumps(tool["parameters"]) for tool in tools))
    assert result["usage"]["prompt_tokens"] > schemas, "the tool schemas did not reach the prompt"


def test_a_native_step_after_a_call_with_no_thought(reactstep_url: str) -> None:
    """The call's turn goes out with "content": "" (llama.cpp's chat templates read the key; without it
    the model server answered 500, retried into a 503)."""
    result = step(reactstep_url, llm_config=NATIVE, conversation_history=[EARLIER])
    assert_plumbing(result)


def test_a_streamed_native_step(reactstep_url: str) -> None:
    """llama-cpp-python streams a text reply but not one that may call a tool (its chatml-function-calling
    answers such a stream with no chunk at all): the server learns so once and asks for the reply whole,
    then sends its thought as one event and the result."""
    request = step_body(stream=True, llm_config=NATIVE, conversation_history=[EARLIER])
    response = httpx.post(f"{reactstep_url}{REACT}", json=request, timeout=300)
    assert response.status_code == 200
    *thoughts, (last, result) = parse_events(response.text)
    print(last, result)
    assert {name for name, _ in thoughts} <= {"thought"}
    assert last == "result", result
    if result["raw_output"] == "":  # it chose to answer with a message, then streamed an empty one
        assert (result["status"], result["usage"]["completion_tokens"]) == ("format_error", 0)
        return
    assert_plumbing(result)
    if result["status"] == "action_proposed":  # a call: the server sent an empty stream, asked again whole
        assert "The model server cannot stream a reply that calls a tool" in " ".join(result["notes"])
