"""The README's local model as a new user starts it: llama-cpp-python's server with SmolLM2 on its own
defaults (no --n_ctx: a 2,048-token window it does not report), and reactstep given only the model and
the api_base. The step learns the window from the server, counts with the server's tokenizer, and so a
history larger than the window is fitted to it instead of being refused by the model server."""

from typing import Any

import httpx
import pytest

from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from tests.llm_server.conftest import MODEL, ModelServer
from tests.llm_server.real_steps import REACT, STATUSES, step_body

pytestmark = pytest.mark.llm_server

WINDOW = 2048  # llama_cpp.server's --n_ctx default


def read_step(number: int, words: int) -> dict[str, Any]:
    path = f"src/m{number}.py"
    return {
        "thought": f"Read {path}.",
        "action_details": {
            "tool_name": "read_file",
            "tool_args": {"file_path": path},
            "raw_action_string": f'Action: read_file(file_path="{path}")',
        },
        "observation": " ".join(f"value_{n} = {n}" for n in range(words)),
    }


def test_a_history_larger_than_the_default_window_is_fitted_to_it(
    defaults_server: ModelServer, demo_store: LocalStore, local_embedder: Any, tmp_path: Any
) -> None:
    settings = Settings(data_dir=tmp_path, llm_model=MODEL, llm_api_base=defaults_server.api_base)
    history = [read_step(n, 300) for n in range(4)]  # ~4,000 tokens of observations
    assert sum(defaults_server.count_tokens(item["observation"]) for item in history) > WINDOW
    with BackgroundServer(create_app(settings, store=demo_store, embedder=local_embedder)) as running:
        response = httpx.post(
            f"{running.url}{REACT}", json=step_body(conversation_history=history), timeout=600
        )
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["status"] in STATUSES
    fitted = "The prompt was fitted to a 2,048-token window (llama-cpp-python's n_ctx, as it said)."
    assert fitted in result["notes"]
    assert any("oldest observation(s) were elided" in note for note in result["notes"])
    assert result["usage"]["prompt_tokens"] + result["usage"]["completion_tokens"] <= WINDOW
