"""`reactstep acp` as an editor meets it: start to `initialize` answered, a prompt to its first
session/update, and a cancel to the prompt's `cancelled` answer.

Run: .venv/bin/python bench/acp_latency.py [--runs 5]

The service runs as `reactstep serve` runs it (peers.py), its LLM the scripted model on 127.0.0.1.
After one warm-up run (the service's first step loads litellm), each run starts `reactstep acp
--server URL` as an editor does (the ACP SDK's client side over its stdio), opens a session on a small
folder, and:
    start       spawn ─► initialize answered (the process's start-up and the handshake)
    first       session/prompt sent ─► the first session/update (a thought chunk of a streamed step)
    cancel      session/cancel sent, a step streaming ─► the prompt answers `cancelled`
"""

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from acp import spawn_agent_process, text_block
from acp.schema import ClientCapabilities

from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer

sys.path.insert(0, str(Path(__file__).parent))
from peers import child, load_average
from stats import describe, machine

REACTSTEP = str(Path(sys.executable).parent / "reactstep")
ANSWER = "Thought: It returns 42.\nFinal Answer: 42."
SLOW = Reply("Thought: " + "word " * 2000 + "\nFinal Answer: x", chunk_chars=5, chunk_delay_s=0.01)


class Editor:
    """The editor's side: the time each session/update arrived."""

    def __init__(self) -> None:
        self.arrived: list[float] = []

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.arrived.append(time.perf_counter())


async def one_run(url: str, folder: Path, model: ScriptedLLMServer) -> tuple[float, float, float]:
    """(start, first update, cancel) in ms."""
    editor = Editor()
    env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    began = time.perf_counter()
    async with spawn_agent_process(editor, REACTSTEP, "acp", "--server", url, env=env) as (conn, _):
        await conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities())
        start_ms = (time.perf_counter() - began) * 1000
        session = await conn.new_session(cwd=str(folder), mcp_servers=[])
        model.push(ANSWER)
        asked = time.perf_counter()
        await conn.prompt(session_id=session.session_id, prompt=[text_block("What does main return?")])
        first_ms = (editor.arrived[0] - asked) * 1000
        model.push(SLOW)
        editor.arrived.clear()
        prompt = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=[text_block("Go.")]))
        while not editor.arrived:
            await asyncio.sleep(0.005)
        cancelled = time.perf_counter()
        await conn.cancel(session_id=session.session_id)
        done = await prompt
        cancel_ms = (time.perf_counter() - cancelled) * 1000
        assert done.stop_reason == "cancelled", done
    return start_ms, first_ms, cancel_ms


def sdk_import_ms() -> float:
    """What importing the SDK alone costs a fresh interpreter (most of the agent's start), in ms."""
    import subprocess

    code = "import time; t = time.perf_counter(); import acp; print((time.perf_counter() - t) * 1000)"
    return float(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(machine(), "|", load_average(), "before")
    import_ms = sdk_import_ms()
    with tempfile.TemporaryDirectory() as data, ScriptedLLMServer() as model:
        folder = Path(data) / "repo"
        (folder / "src").mkdir(parents=True)
        (folder / "src" / "app.py").write_text("def main():\n    return 42\n")
        settings = {
            "data_dir": Path(data) / "server",
            "llm_model": "openai/scripted",
            "llm_api_base": model.base_url,
        }
        with child("service", settings=settings) as service:
            asyncio.run(
                one_run(service.url, folder, model)
            )  # warm-up: the service's first LLM call loads litellm
            runs = [asyncio.run(one_run(service.url, folder, model)) for _ in range(args.runs)]
    print(f"import acp (the SDK, in this process): {import_ms:.0f} ms")
    print(describe("start to initialize answered", [run[0] for run in runs]))
    print(describe("prompt to its first session/update", [run[1] for run in runs]))
    print(describe("cancel to the prompt's `cancelled`", [run[2] for run in runs]))
    print(load_average(), "after")


if __name__ == "__main__":
    main()
