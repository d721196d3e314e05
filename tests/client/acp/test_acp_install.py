"""`reactstep acp` from a venv holding only the client and its acp extra (`pip install "./client[acp]"`),
against a `reactstep serve` process; without the extra, the command names the install.

The venv is cached like test_client_install.py's, under .cache/client-acp-venv/<hash of the client's
dependencies, its extras and the Python version>; each run installs the checkout's client code again.
"""

import hashlib
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.client.test_client_install import HEAVY, ROOT, client_env, client_venv, run  # noqa: F401

CACHE = ROOT / ".cache" / "client-acp-venv"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


@pytest.fixture(scope="module")
def acp_venv() -> Path:
    """A venv with the client distribution and its acp extra, the client's code this checkout's."""
    project = tomllib.loads((ROOT / "client" / "pyproject.toml").read_text())["project"]
    wanted = [project["dependencies"], project["optional-dependencies"], sys.version]
    venv = CACHE / hashlib.sha256(json.dumps(wanted).encode()).hexdigest()[:16]
    source = ROOT / "client"
    if not (venv / "ready").exists():
        shutil.rmtree(CACHE, ignore_errors=True)
        run(sys.executable, "-m", "venv", venv)
        run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", f"{source}[acp]")  # from the registry
        (venv / "ready").touch()
    run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", source)
    return venv


def test_the_acp_extra_runs_the_agent_without_the_servers_libraries(
    acp_venv: Path, server_url: str, tmp_path: Path
) -> None:
    listed = run(acp_venv / "bin" / "python", "-m", "pip", "list", "--format", "json").stdout
    names = {entry["name"].lower().replace("_", "-") for entry in json.loads(listed)}
    assert "agent-client-protocol" in names
    assert not names & {name.replace("_", "-") for name in HEAVY}
    answered = subprocess.run(
        [acp_venv / "bin" / "reactstep", "acp", "--server", server_url],
        input=json.dumps(INITIALIZE) + "\n",
        env=client_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert answered.returncode == 0, answered.stderr
    assert json.loads(answered.stdout)["result"]["protocolVersion"] == 1


def test_without_the_extra_the_command_names_the_install(client_venv: Path, tmp_path: Path) -> None:  # noqa: F811
    refused = subprocess.run(
        [client_venv / "bin" / "reactstep", "acp", "--server", "http://127.0.0.1:9"],
        env=client_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        2,
        "",
        'error: reactstep acp needs the acp extra: pip install "reactstep-client[acp]"\n',
    )
