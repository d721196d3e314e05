"""The sha256 of every file of a project, as a sync compares them with the client's manifest.

Clients hash their bytes with sha256; the store knows each file's MD5 etag. hashes.json beside the
project maps path -> [etag, sha256], so only a file whose etag is new is read and hashed again; a
no-op sync of a large project lists the store once and reads nothing. The cache is advisory (last
writer wins): an entry is used only while its etag matches the listing.
"""

import hashlib
import json

from reactstep.tools.errors import ToolError
from reactstep.tools.store.objects import ObjectStore
from reactstep.tools.store.paths import ProjectPath

CACHE = "hashes.json"


def content_hashes(store: ObjectStore, project_id: str) -> dict[ProjectPath, str]:
    """path -> sha256 hex of the file's bytes, for every file of the project."""
    return {path: digest for path, (_, digest) in tagged_hashes(store, project_id).items()}


def tagged_hashes(store: ObjectStore, project_id: str) -> dict[ProjectPath, tuple[str, str]]:
    """path -> (etag in the listing, sha256 hex of those bytes), for every file of the project."""
    cached = _load(store, project_id)
    hashes: dict[ProjectPath, tuple[str, str]] = {}
    fresh: dict[str, list[str]] = {}
    for info in store.list(project_id):
        entry = cached.get(info.path)
        if entry is not None and entry[0] == info.etag:
            digest = entry[1]
        else:
            try:
                digest = hashlib.sha256(store.get(project_id, info.path)).hexdigest()
            except ToolError:
                continue  # deleted since the listing
        hashes[info.path] = (info.etag, digest)
        fresh[info.path] = [info.etag, digest]
    if fresh != cached:
        store.put_index_file(project_id, CACHE, json.dumps(fresh, sort_keys=True).encode())
    return hashes


def _load(store: ObjectStore, project_id: str) -> dict[str, list[str]]:
    data = store.get_index_file(project_id, CACHE)
    if data is None:
        return {}
    try:
        loaded = json.loads(data)
    except ValueError:
        return {}  # a torn or foreign file: rebuild it
    return loaded if isinstance(loaded, dict) else {}
