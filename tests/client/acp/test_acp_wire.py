"""`reactstep acp` over raw JSON-RPC lines on its stdio: initialize's answer and an unknown method."""

import json
import os
import subprocess
from typing import Any

from tests.client.acp.editor import REACTSTEP

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
UNKNOWN = {"jsonrpc": "2.0", "id": 2, "method": "session/teleport", "params": {}}


def exchange(server_url: str, *messages: dict[str, Any]) -> dict[Any, dict[str, Any]]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    finished = subprocess.run(
        [REACTSTEP, "acp", "--server", server_url],
        input="".join(json.dumps(message) + "\n" for message in messages),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 0, finished.stderr
    assert finished.stderr == f"using the server at {server_url} (--server)\n"
    return {answer["id"]: answer for answer in map(json.loads, finished.stdout.splitlines())}


def test_initialize_says_version_1_and_what_the_agent_does_and_an_unknown_method_is_an_error(
    server_url: str,
) -> None:
    answers = exchange(server_url, INITIALIZE, UNKNOWN)
    result = answers[1]["result"]
    assert result["protocolVersion"] == 1
    assert result["agentCapabilities"]["loadSession"] is True
    assert result["agentCapabilities"]["promptCapabilities"] == {
        "audio": False,
        "embeddedContext": True,
        "image": False,
    }
    assert result["authMethods"] == [
        {
            "type": "env_var",
            "id": "reactstep-key",
            "name": "reactstep service key",
            "description": "The key of the reactstep server, when it asks for one",
            "vars": [{"name": "REACTSTEP_CLIENT_API_KEY", "label": "Service key", "secret": True}],
        }
    ]
    assert result["agentInfo"]["name"] == "reactstep"
    assert answers[2]["error"]["code"] == -32601
