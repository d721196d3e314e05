"""The local store reads a settled file's bytes once, and never returns bytes a file no longer holds."""

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reactstep.tools.errors import ToolError
from reactstep.tools.store import memos
from reactstep.tools.store.local import LocalStore
from reactstep.tools.store.memos import ContentMemo


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the content memo opened, in order."""
    seen: list[str] = []
    real: Callable[..., Any] = open

    def counting(name: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(Path(name).name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(memos, "open", counting, raising=False)
    return seen


def test_a_settled_file_is_read_from_disk_once(
    tmp_path: Path, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ContentMemo, "RACY_S", 0.0)  # every file counts as settled at once
    store = LocalStore(tmp_path)
    store.put("p", "src/a.py", b"print(1)\n")
    assert [store.get("p", "src/a.py") for _ in range(3)] == [b"print(1)\n"] * 3
    assert opened == ["a.py"]
    store.put("p", "src/a.py", b"print(2)\n")  # a new file (atomic rename): a new inode
    assert store.get("p", "src/a.py") == b"print(2)\n"
    assert opened == ["a.py", "a.py"]


def test_a_file_changed_in_place_within_the_racy_window_is_read_again(
    tmp_path: Path, opened: list[str]
) -> None:
    store = LocalStore(tmp_path)
    store.put("p", "a.py", b"x = 1\n")
    assert store.get("p", "a.py") == b"x = 1\n"
    target = tmp_path / "p" / "a.py"
    stat = target.stat()
    target.write_bytes(b"x = 2\n")  # same size, same inode
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # mtime set back; ctime cannot be
    assert store.get("p", "a.py") == b"x = 2\n"
    assert opened == ["a.py", "a.py"]


def test_missing_files_and_folders_answer_as_before(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.put("p", "src/a.py", b"")
    with pytest.raises(ToolError, match=r"file not found: src/b\.py"):
        store.get("p", "src/b.py")
    with pytest.raises(ToolError, match="is a directory"):
        store.get("p", "src")
    assert store.get("p", "src/a.py") == b""


def test_the_memo_keeps_the_most_recent_files_within_its_budget(
    tmp_path: Path, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ContentMemo, "RACY_S", 0.0)
    contents = ContentMemo(budget_bytes=25)
    for name in ("a", "b", "c"):
        (tmp_path / name).write_bytes(name.encode() * 10)
    for name in ("a", "b", "c", "c", "b", "a"):
        assert contents.read(str(tmp_path / name)) == name.encode() * 10
    assert opened == ["a", "b", "c", "a"]  # 'a' was dropped when 'c' came; 'b' stayed (two fit)
