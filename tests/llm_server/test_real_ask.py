"""The README's local-model line, followed literally: `reactstep serve` given only the model and the
api_base of llama_cpp.server with SmolLM2 (and the allowlist a replay needs), `reactstep index`, then
`reactstep ask` for 6 steps and `reactstep replay` of its trace, all from a venv holding only the client.

On the server's defaults (a 2,048-token window it reports nowhere but in a refusal; SmolLM2's own chat
template, which renders no tools) in text mode and in native mode (which runs as text there, and says
so), and on `--chat_format chatml-function-calling --n_ctx 4096` (as docs/open-models.md advises) in
native mode. Whatever the 135M model says: no step error, every answer's tokens within the server's
window, and what step 1 brought back (its observation, or the format error the model is told about)
reaches the model in step 2: the server's prompt_tokens grow by at least its tokens.
"""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from reactstep.client.cli.exit_codes import NO_ANSWER, OK
from tests.client.test_client_install import client_venv, run  # noqa: F401 (the fixture)
from tests.llm_server.conftest import ALIAS, ModelServer
from tests.llm_server.real_steps import ENDINGS, QUESTION, STATUSES
from tests.served import serving

pytestmark = pytest.mark.llm_server

STEPS = 6
SAID = "llama-cpp-python's n_ctx, as it said"
TOOLS_LEFT_OUT = "The model server's chat format leaves tool schemas out of the prompt"


def records(trace: Path, kind: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    return [line for line in lines if line["kind"] == kind]


def feedback_of_step_1(trace: Path) -> str:
    """What the model is told after step 1: the observation of its action, or its format error."""
    first = records(trace, "react_step")[0]["response"]
    if first["status"] == "action_proposed":
        return str(records(trace, "execute_action")[0]["response"]["observation"])
    return str(first["format_error"])


@pytest.mark.parametrize(
    ("server", "mode", "window", "ran_as"),
    [
        ("defaults_server", "text", 2048, "text"),
        ("defaults_server", "native", 2048, "text"),
        ("model_server", "native", 4096, "native"),
    ],
    ids=["defaults-text", "defaults-native", "chatml-function-calling-native"],
)
def test_ask_runs_six_steps_on_the_readmes_local_model(
    request: pytest.FixtureRequest,
    client_venv: Path,  # noqa: F811 (the fixture)
    tmp_path: Path,
    server: str,
    mode: str,
    window: int,
    ran_as: str,
) -> None:
    model: ModelServer = request.getfixturevalue(server)
    reactstep = client_venv / "bin" / "reactstep"
    folder = tmp_path / "demo"
    (folder / "src").mkdir(parents=True)
    (folder / "README.md").write_text("# Demo\nA tiny app whose main returns 42.\n")
    (folder / "src" / "app.py").write_text("def main():\n    return 42\n")
    trace = tmp_path / "trace.jsonl"
    clean = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    server_env = clean | {
        "REACTSTEP_DATA_DIR": str(tmp_path / "server"),
        "HF_HUB_OFFLINE": "1",
        "REACTSTEP_LLM_MODEL": f"openai/{ALIAS}",
        "REACTSTEP_LLM_API_BASE": model.api_base,
        "REACTSTEP_LLM_API_BASE_ALLOWLIST": '["http://127.0.0.1:*"]',  # for the replay's scripted model
    }
    with serving(server_env) as (url, _):
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "REACTSTEP_SERVER": url}
        run(reactstep, "index", folder, "--project", "demo", env=env)
        asked = subprocess.run(
            [reactstep, "ask", QUESTION, "--project", "demo", "--max-iterations", str(STEPS),
             "--tool-calling", mode, "--record", trace],
            env=env, capture_output=True, text=True, timeout=1200,
        )  # fmt: skip
        print(asked.stdout[-3000:])
        assert asked.returncode in (OK, NO_ANSWER), asked.stderr[-3000:]  # a 135M model rarely answers
        replayed = subprocess.run([reactstep, "replay", trace], env=env, capture_output=True, text=True)
    assert records(trace, "step_error") == []
    steps = [record["response"] for record in records(trace, "react_step")]
    asked_model = [step for step in steps if step["status"] != "max_iterations_reached"]
    assert asked_model and len(asked_model) <= STEPS
    assert steps[-1]["status"] in ENDINGS
    ending = f"{steps[-1]['status']} after {len(steps)} steps"
    for step in asked_model:
        assert step["status"] in STATUSES | ENDINGS
        assert step["tool_calling"] == ran_as
        assert (TOOLS_LEFT_OUT in step["notes"][0]) is (ran_as != mode)
        assert f"The prompt was fitted to a {window:,}-token window ({SAID})." in step["notes"]
        assert step["usage"]["prompt_tokens"] + step["usage"]["completion_tokens"] <= window
    if len(asked_model) > 1:
        grown = asked_model[1]["usage"]["prompt_tokens"] - asked_model[0]["usage"]["prompt_tokens"]
        assert grown >= model.count_tokens(feedback_of_step_1(trace)), "step 1's feedback is not in step 2"
    assert (replayed.returncode, replayed.stdout.splitlines()[-1]) == (OK, f"replay matched: {ending}"), (
        replayed.stdout[-3000:]
    )
