"""`reactstep acp` over raw JSON-RPC lines on its stdio: initialize's answer, an unknown method, and a
server that wants a key (auth_required until the agent holds it)."""

import hashlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.client.acp.editor import REACTSTEP
from tests.served import serving

KEY = "acp-test-key-0123456789"
AUTH_REQUIRED, METHOD_NOT_FOUND = -32000, -32601


class RawAgent:
    """`reactstep acp --server URL` as a process; each request written as a line, its answer read."""

    def __init__(self, server_url: str, key: str | None = None) -> None:
        env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
        env |= {"REACTSTEP_CLIENT_API_KEY": key} if key else {}
        self.process = subprocess.Popen(
            [REACTSTEP, "acp", "--server", server_url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        self.sent = 0

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The answer to one request (notifications before it are skipped)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.sent += 1
        request = {"jsonrpc": "2.0", "id": self.sent, "method": method, "params": params}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        while True:
            message: dict[str, Any] = json.loads(self.process.stdout.readline())
            if message.get("id") == self.sent:
                return message

    def close(self) -> str:
        """Close its stdin; what it wrote on stderr once it exited (0)."""
        _, stderr = self.process.communicate(timeout=30)
        assert self.process.returncode == 0, stderr
        return stderr


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A `reactstep serve` that takes only KEY."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    entry = f"sha256:{hashlib.sha256(KEY.encode()).hexdigest()}:*"
    env = clean | {
        "REACTSTEP_DATA_DIR": str(tmp_path_factory.mktemp("acp-keyed")),
        "HF_HUB_OFFLINE": "1",
        "REACTSTEP_API_KEYS": json.dumps([entry]),
    }
    with serving(env) as (url, _):
        yield url


def test_initialize_says_version_1_and_what_the_agent_does_and_an_unknown_method_is_an_error(
    server_url: str,
) -> None:
    agent = RawAgent(server_url)
    result = agent.call("initialize", {"protocolVersion": 1})["result"]
    unknown = agent.call("session/teleport", {})
    assert agent.close() == f"using the server at {server_url} (--server)\n"
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
    assert unknown["error"]["code"] == METHOD_NOT_FOUND
    assert unknown["error"]["message"] == "Method not found"


def test_a_server_that_wants_a_key_is_met_with_auth_required_until_the_agent_holds_it(
    keyed_server: str, folder: Path
) -> None:
    session = {"cwd": str(folder), "mcpServers": []}
    keyless = RawAgent(keyed_server)
    keyless.call("initialize", {"protocolVersion": 1})
    refused = keyless.call("session/new", session)
    checked = keyless.call("authenticate", {"methodId": "reactstep-key"})
    keyless.close()
    assert refused["error"]["code"] == AUTH_REQUIRED
    assert refused["error"]["data"]["authMethods"] == ["reactstep-key"]
    assert checked["error"]["code"] == AUTH_REQUIRED

    keyed = RawAgent(keyed_server, KEY)
    keyed.call("initialize", {"protocolVersion": 1})
    assert keyed.call("authenticate", {"methodId": "reactstep-key"})["result"] == {}
    opened = keyed.call("session/new", session | {"mcpServers": [_stdio_server("linter")]})
    keyed.close()
    assert opened["result"]["_meta"]["reactstep"]["mcpServersUnused"] == ["linter"]


def _stdio_server(name: str) -> dict[str, Any]:
    return {"name": name, "command": "/bin/true", "args": [], "env": []}
