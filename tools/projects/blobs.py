"""File bytes kept once per sha256, as index files beside the project: blob-<sha256>.

A blob is written before the file and before the journal entry that names it, so every journaled
version's bytes are readable. Blobs never change: writing one that exists is a no-op.
"""

import hashlib

from reactstep.tools.errors import StaleFile
from reactstep.tools.store.objects import ObjectStore


def blob_name(sha256: str) -> str:
    """The index file holding the bytes whose sha256 is `sha256`."""
    return f"blob-{sha256}"


def keep_blob(store: ObjectStore, project_id: str, data: bytes) -> tuple[str, bool]:
    """Store `data` under its sha256 unless it is there; (sha256, whether it was there already)."""
    digest = hashlib.sha256(data).hexdigest()
    try:
        store.put_index_file_if(project_id, blob_name(digest), data, None)
    except StaleFile:
        return digest, True
    return digest, False


def read_blob(store: ObjectStore, project_id: str, sha256: str) -> bytes | None:
    """The bytes kept for `sha256`; None when they were never kept or were collected."""
    return store.get_index_file(project_id, blob_name(sha256))


def remove_blob(store: ObjectStore, project_id: str, sha256: str) -> None:
    """Delete the blob of `sha256` (garbage collection only)."""
    store.delete_index_file(project_id, blob_name(sha256))
