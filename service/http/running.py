"""The note a running `reactstep serve` leaves in its data dir, so commands on the same dir use it.

    serve ─► another live process's note here? refuse (serving_owner) ─► bind the port (taken: fail,
        no note touched) ─► <data_dir>/server.json {"url", "pid"} while it runs (removed on exit,
        only while it is still this process's own)
    every client command without --server or REACTSTEP_SERVER ─► the note's server, when that process
        is alive and answers /healthz (client/cli/servers.py; a stale note from a killed server is ignored)

An embedded vector store belongs to one process, so a second server on the same data dir would fail;
with this note the second shell of the quick start talks to the first one instead. The note's name, its
form and its reading are the contract's (contract/server_note.py): the client reads it with the same code.
"""

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from reactstep.contract.server_note import NOTE, note_text

# A wildcard bind is reached on loopback from this machine.
_LOOPBACK_FOR = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}


def local_url(host: str, port: int) -> str:
    """The URL a process on this machine reaches a server bound to host:port at."""
    host = _LOOPBACK_FOR.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


@contextmanager
def announced(data_dir: Path, host: str, port: int) -> Iterator[None]:
    """Leave the note while the block runs; remove it after, unless another server has replaced it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    note = data_dir / NOTE
    body = note_text(local_url(host, port), os.getpid())
    handle, temporary = tempfile.mkstemp(dir=data_dir, prefix=".server-", suffix=".json")
    with os.fdopen(handle, "w") as file:
        file.write(body)
    os.replace(temporary, note)
    try:
        yield
    finally:
        with suppress(OSError):
            if note.read_text() == body:
                note.unlink()
