"""What the local store remembers about files that have settled: their MD5 and, for small ones, their bytes.

Both are keyed by the file's path and (inode, size, mtime, ctime), and kept only for a file unchanged
for RACY_S seconds when it was read: any later change moves its ctime (which nobody can set back) to
a time at least that far from the recorded one, so what is returned is never stale. A file written
in place between the stat and the read is kept under its old key, which no later stat matches.
"""

import errno
import hashlib
import os
import threading
import time
from collections import OrderedDict
from pathlib import Path
from stat import S_ISDIR

Key = tuple[int, int, int, int]


def _key(stat: os.stat_result) -> Key:
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def _settled(stat: os.stat_result, racy_s: float) -> bool:
    return max(stat.st_mtime_ns, stat.st_ctime_ns) < time.time_ns() - int(racy_s * 1e9)


class EtagMemo:
    """The MD5 of files hashed before, so listing a large project does not read every file each time."""

    RACY_S = 2.0
    LIMIT = 500_000

    def __init__(self) -> None:
        self._known: dict[str, tuple[tuple[int, int, int, int], str]] = {}

    def etag(self, target: Path, stat: os.stat_result) -> str:
        """The file's MD5, read only when the memo has none for this state of the file."""
        key = _key(stat)
        name = str(target)
        known = self._known.get(name)
        if known is not None and known[0] == key:
            return known[1]
        with target.open("rb") as handle:
            digest = hashlib.file_digest(handle, "md5").hexdigest()
        if _settled(stat, self.RACY_S):
            if len(self._known) >= self.LIMIT:
                self._known.clear()
            self._known[name] = (key, digest)
        return digest


class ContentMemo:
    """The bytes of small settled files, most recently read first, within a total budget.

    Saves the open, read and close of a file read again unchanged (an agent re-reads its hot files
    every few steps); a stat still checks every read.
    """

    RACY_S = 2.0
    MAX_FILE_BYTES = 256 * 1024

    def __init__(self, budget_bytes: int = 32 * 1024 * 1024) -> None:
        self._budget = budget_bytes
        self._held = 0
        self._kept: OrderedDict[str, tuple[Key, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def read(self, name: str, stat: os.stat_result | None = None) -> bytes:
        """The file's bytes (OSError as open() raises it, IsADirectoryError for a directory);
        `stat`, when the caller has just taken it, saves taking it again."""
        stat = stat or os.stat(name)
        if S_ISDIR(stat.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
        if (known := self.known(name, stat)) is not None:
            return known
        with open(name, "rb", buffering=0) as handle:
            data = handle.readall()
        if len(data) == stat.st_size <= self.MAX_FILE_BYTES and _settled(stat, self.RACY_S):
            self._keep(name, _key(stat), data)
        return data

    def known(self, name: str, stat: os.stat_result) -> bytes | None:
        """The bytes kept for `name` while it is the file `stat` describes, or None."""
        key = _key(stat)
        with self._lock:
            kept = self._kept.get(name)
            if kept is None or kept[0] != key:
                return None
            self._kept.move_to_end(name)
            return kept[1]

    def _keep(self, name: str, key: Key, data: bytes) -> None:
        with self._lock:
            old = self._kept.pop(name, None)
            self._held += len(data) - (len(old[1]) if old else 0)
            self._kept[name] = (key, data)
            while self._held > self._budget:
                _, (_, dropped) = self._kept.popitem(last=False)
                self._held -= len(dropped)
