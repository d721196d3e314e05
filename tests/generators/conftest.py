"""What the generator tests share: a real server on loopback that wants a service key and asks a scripted
model, the small workspace each generated client syncs, indexes, searches and edits, and the model's
replies: the edit, then the answer."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.service.http.app import create_app
from reactstep.service.http.auth import key_entry
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder

SERVICE_KEY = "generators-test-key-0123456789abcdef"
SPENT_KEY = "generators-spent-key-0123456789abcdef"  # a day's budget no step fits in
SPEC = Path(__file__).resolve().parents[2] / "openapi.yaml"

# The workspace a generated client syncs: a search for "shout" finds strings.py, the write edits it.
WORKSPACE = {
    "README.md": b"# Demo\n",
    "src/app.py": b"from util.strings import shout\n\n\ndef main():\n    return shout('hi')\n",
    "src/util/strings.py": b"def shout(text):\n    return text.upper()\n",
}
EDITED = b"def shout(text):\n    return text.upper() + '!'\n"
QUERY = "Make shout() end with an exclamation mark."
EDIT = {"path": "src/util/strings.py", "find": "text.upper()", "replace": "text.upper() + '!'"}
REPLIES = [
    "Thought: Add the mark.\nAction: replace_in_file("
    'path="src/util/strings.py", find="text.upper()", replace="text.upper() + \'!\'")',
    "Thought: It is written.\nFinal Answer: shout() now ends with '!'.",
]


@pytest.fixture
def server_url(tmp_path: Path, local_embedder: LocalEmbedder, llm_server: ScriptedLLMServer) -> Iterator[str]:
    """The app on 127.0.0.1 with one service key for every project and the scripted model, holding
    REPLIES."""
    llm_server.push(*REPLIES)
    settings = Settings(
        data_dir=tmp_path / "server",
        api_keys=[
            key_entry(SERVICE_KEY, "*", "tokens_per_day=100000000"),
            key_entry(SPENT_KEY, "*", "tokens_per_day=1"),
        ],
        approval_secret="generators",
        llm_model="openai/scripted",
        llm_api_base=llm_server.base_url,
    )
    with BackgroundServer(create_app(settings, embedder=local_embedder)) as server:
        yield server.url
