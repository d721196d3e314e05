"""The local store hashes a file again only when it may have changed, and never returns a stale ETag."""

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reactstep.tools.store.local import LocalStore
from reactstep.tools.store.memos import EtagMemo


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files hashed, in order (every call of hashlib.file_digest)."""
    seen: list[str] = []
    real: Callable[..., Any] = hashlib.file_digest

    def counting(handle: Any, digest: str) -> Any:
        seen.append(Path(handle.name).name)
        return real(handle, digest)

    monkeypatch.setattr(hashlib, "file_digest", counting)
    monkeypatch.setattr(EtagMemo, "RACY_S", 0.0)  # every file counts as settled at once
    return seen


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def test_a_second_listing_reads_no_unchanged_file(tmp_path: Path, reads: list[str]) -> None:
    store = LocalStore(tmp_path)
    for name in ("a.py", "b.py", "c.py"):
        store.put("p", name, name.encode())
    assert [info.etag for info in store.list("p")] == [md5(b"a.py"), md5(b"b.py"), md5(b"c.py")]
    assert reads == ["a.py", "b.py", "c.py"]
    assert [info.etag for info in store.list("p")] == [md5(b"a.py"), md5(b"b.py"), md5(b"c.py")]
    assert store.head("p", "b.py") is not None
    assert reads == ["a.py", "b.py", "c.py"]


def test_an_in_place_edit_with_the_same_size_and_mtime_is_seen(tmp_path: Path, reads: list[str]) -> None:
    store = LocalStore(tmp_path)
    store.put("p", "a.py", b"one")
    assert store.head("p", "a.py").etag == md5(b"one")  # type: ignore[union-attr]
    target = tmp_path / "p" / "a.py"
    before = target.stat()
    with target.open("r+b") as handle:  # no new inode, same size, mtime put back
        handle.write(b"two")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert store.head("p", "a.py").etag == md5(b"two")  # type: ignore[union-attr]


def test_a_file_changed_within_the_racy_window_is_not_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reads: list[str]
) -> None:
    monkeypatch.setattr(EtagMemo, "RACY_S", 3600.0)
    store = LocalStore(tmp_path)
    store.put("p", "a.py", b"one")
    list(store.list("p"))
    list(store.list("p"))
    assert reads == ["a.py", "a.py"]
