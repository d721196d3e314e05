"""session/load: a session recorded under the folder shown again in the editor, and its conversation
taken up where it stopped.

.reactstep/acp/<session id>/conversation.json ─► the project and the conversation (what the next turn sends)
.reactstep/acp/<session id>/turn-N.jsonl, in order ─► each trace's question as user_message_chunk, then
    its calls drawn as the live turn drew them (turn_view.py)
"""

import json
from pathlib import Path
from typing import Any

from acp import RequestError, update_user_message_text

from reactstep.client.acp.session import CONVERSATION, records_of
from reactstep.client.acp.turn_view import TurnView
from reactstep.client.traces.format import ReplayMismatch, load_trace


def recorded_conversation(root: Path, session_id: str) -> dict[str, Any]:
    """The saved {project_id, turns, history} of a session; resource_not_found when none is saved."""
    path = records_of(root, session_id) / CONVERSATION
    try:
        conversation: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        raise RequestError.resource_not_found(str(path)) from None
    return conversation


def recorded_updates(root: Path, session_id: str, turns: int, window: int) -> list[Any]:
    """The session updates that show the recorded turns, in order."""
    shown: list[Any] = []
    for turn in range(1, turns + 1):
        try:
            records = load_trace(records_of(root, session_id) / f"turn-{turn}.jsonl")
        except (OSError, ValueError, ReplayMismatch):
            continue  # a turn cancelled before its first call, or a trace removed
        shown.append(update_user_message_text(records[0]["user_query"]))
        view = TurnView(root, turn, window)
        for record in records[1:]:
            shown.extend(view.updates(record["kind"], record["request"], record["response"]))
    return shown
