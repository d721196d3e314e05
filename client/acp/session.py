"""One ACP session: the project its folder became, the conversation so far, the answers the person
gave for always, and the turn running now. It lives in this process; each turn's trace and the
conversation are also written under the folder's .reactstep/acp/<session id>/ (which sync leaves
out), so session/load can show and continue it (session_load.py).
"""

import asyncio
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reactstep.client.acp.editor_files import EditorFiles
from reactstep.client.acp.permissions import Remembered
from reactstep.client.agent.loop import RunResult
from reactstep.contract.history import MAX_HISTORY_ITEMS

RECORDS = Path(".reactstep") / "acp"
CONVERSATION = "conversation.json"
UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def project_for(root: Path) -> str:
    """The project id of a folder: its name and a digest of its absolute path (two folders of one
    name are two projects)."""
    name = UNSAFE.sub("-", root.name).strip("-._")[:40] or "folder"
    digest = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:8]
    return f"{name}-{digest}"


def records_of(root: Path, session_id: str) -> Path:
    """Where a session's traces and conversation are written."""
    return root / RECORDS / UNSAFE.sub("-", session_id)


@dataclass
class Session:
    """What a session keeps between turns."""

    session_id: str
    project_id: str
    files: EditorFiles
    history: list[dict[str, Any]] = field(default_factory=list)
    remembered: Remembered = field(default_factory=Remembered)
    turns: int = 0
    running: "asyncio.Task[Any] | None" = None
    cancelled: bool = False

    @property
    def root(self) -> Path:
        """The session's folder (the editor's cwd)."""
        return self.files.root

    def next_trace(self) -> Path:
        """The trace file of the turn about to run."""
        self.turns += 1
        folder = records_of(self.root, self.session_id)
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"turn-{self.turns}.jsonl"

    def earlier(self, max_steps: int) -> list[dict[str, Any]]:
        """The conversation to send before a run of max_steps steps, its oldest items left out so the
        whole stays within react_step's bound."""
        room = max(0, MAX_HISTORY_ITEMS - max_steps - 1)
        return self.history[-room:] if room else []

    def finish_turn(self, query: str, result: RunResult) -> None:
        """Keep the turn in the conversation (not a refused one: ACP leaves it out of the next prompt)."""
        if result.status == "loop_detected":
            return
        ending = [{"role": "assistant", "content": result.answer}] if result.answer else []
        self.history += [{"role": "user", "content": query}, *result.history, *ending]
        folder = records_of(self.root, self.session_id)
        conversation = {"project_id": self.project_id, "turns": self.turns, "history": self.history}
        (folder / CONVERSATION).write_text(json.dumps(conversation))
