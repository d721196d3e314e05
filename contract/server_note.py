"""The note a running `reactstep serve` leaves in its data dir, so commands on the same dir use it.

    <data_dir>/server.json   {"url": "http://127.0.0.1:8000", "pid": 4242}

The server writes it while it runs (service/http/running.py) and every client command without --server
reads it (client/cli/servers.py). The client installs without the server, so the note's name, its form
and who counts as its owner are said here, once, for both.
"""

import json
import os
from pathlib import Path

NOTE = "server.json"


def note_text(url: str, pid: int) -> str:
    """The note of the server at `url` in process `pid`."""
    return json.dumps({"url": url, "pid": pid})


def serving_owner(data_dir: Path) -> tuple[str, int] | None:
    """(url, pid) of the data dir's note when another live process left it, answering or not yet; else
    None (no note, an unreadable one, this process's own, or one outliving its process)."""
    try:
        found = json.loads((data_dir / NOTE).read_text())
        url, pid = str(found["url"]), int(found["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if pid == os.getpid() or not _alive(pid):
        return None
    return url, pid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, under another user
        return True
    return True
