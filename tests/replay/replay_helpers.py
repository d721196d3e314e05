"""What the replay tests share (imported by name: tests/ is not a package): the question, the scripted
replies, the service key, and the settings of a server answering from a scripted LLM."""

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reactstep.client.traces.scripted_llm import ScriptedLLMServer, ScriptItem
from reactstep.service.settings import Settings

QUESTION = "What does main return?"
SERVICE_KEY = "canary-service-key-7d1f0c2b9e"
TEXT_REPLIES: list[ScriptItem] = [
    'Thought: Let me see the layout.\nAction: list_files(path="", recursive=true)',
    'Thought: The app is in src.\nAction: read_file(file_path="src/app.py")',
    "Thought: main returns 42.\nFinal Answer: `main()` returns 42.",
]
Record = Callable[..., Path]


def settings_for(data_dir: Path, llm: ScriptedLLMServer, **more: Any) -> Settings:
    """A server whose default LLM is the scripted one, asking the service key."""
    digest = hashlib.sha256(SERVICE_KEY.encode()).hexdigest()
    return Settings(
        data_dir=data_dir,
        llm_model="openai/scripted",
        llm_api_base=llm.base_url,
        llm_api_base_allowlist=["http://127.0.0.1:*"],
        api_keys=[f"sha256:{digest}:*"],
        **more,
    )
