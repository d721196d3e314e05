"""`reactstep sync --keep-both`: nothing is lost on either side of a conflict.

For each path a tool changed on the server while the folder changed it too:
    GET the server's bytes and ETag ─► write them beside the folder's copy as
        `name.conflict-<version>.ext` (src/app.conflict-26.py; `.env.conflict-26`, `Makefile.conflict-26`)
    ─► the sync then uploads the folder's bytes to the path with If-Match that ETag (an override on
       purpose: 412 if a tool wrote once more meanwhile) and the copy as a new file
"""

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from reactstep.client.api import operations
from reactstep.client.api.calls import Op
from reactstep.client.api.operations import NEW_FILE
from reactstep.client.workspace.folder import Entry, write_file


@dataclass
class KeptCopies:
    """The conflict copies written into the folder, and the If-Match that overrides each path."""

    copies: dict[str, Entry] = field(default_factory=dict)
    if_match: dict[str, str] = field(default_factory=dict)


def keep_servers_copies(project_id: str, root: Path, conflicts: list[dict[str, Any]]) -> Op[KeptCopies]:
    """Write the server's bytes of each conflicting path into the folder under a conflict name."""
    kept = KeptCopies()
    for item in conflicts:
        found = yield from operations.download(project_id, item["path"])
        if found is None:  # the tool deleted it: the folder's copy simply comes back
            kept.if_match[item["path"]] = NEW_FILE
            continue
        data, etag = found
        name = _free_name(root, item["path"], int(item["version"]), data, set(kept.copies))
        kept.copies[name] = write_file(root, name, data)
        kept.if_match[item["path"]] = etag
    return kept


def conflict_name(path: str, version: int, attempt: int = 1) -> str:
    """src/app.py at version 26 ─► src/app.conflict-26.py (a dotfile or no extension: at the end)."""
    pure = PurePosixPath(path)
    tag = f"conflict-{version}" + (f"-{attempt}" if attempt > 1 else "")
    if pure.suffix and pure.stem:
        return str(pure.with_name(f"{pure.stem}.{tag}{pure.suffix}"))
    return str(pure.with_name(f"{pure.name}.{tag}"))


def _free_name(root: Path, path: str, version: int, data: bytes, chosen: set[str]) -> str:
    """The first conflict name the folder lacks, or that holds these very bytes already."""
    attempt = 1
    while True:
        name = conflict_name(path, version, attempt)
        target = root / name
        if name not in chosen and (not target.exists() or target.read_bytes() == data):
            return name
        attempt += 1
