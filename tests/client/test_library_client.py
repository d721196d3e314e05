"""The project routes of Client and AsyncClient against the real server on loopback (conftest's `url`):
typed answers, index progress as events, sync_folder and pull of a folder, errors with the server's
code, message and request_id."""

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from reactstep.client import (
    AsyncClient,
    Client,
    Conflict,
    NotFound,
    PreconditionFailed,
    PullRefused,
    SyncOptions,
    SyncRefused,
)
from reactstep.client.api.operations import NEW_FILE
from reactstep.client.api.wire import IndexProgress

APP = b"def main():\n    return 1\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "app.py").write_bytes(APP)
    (root / "README.md").write_text("# demo\n")
    return root


def test_files_travel_and_come_back_with_versions_and_etags(url: str) -> None:
    with Client(url) as rs:
        assert rs.projects.create("demo").version == 0
        stored = rs.projects.upload("demo", "src/a.py", b"A = 1\n", if_match=NEW_FILE)
        assert (stored.path, stored.version, stored.changed) == ("src/a.py", 1, True)
        assert rs.projects.download("demo", "src/a.py") == (b"A = 1\n", stored.etag)
        again = rs.projects.upload("demo", "src/a.py", b"A = 2\n", if_match=stored.etag)
        assert again.version == 2
        rs.projects.delete_file("demo", "src/a.py")
        rs.projects.delete_file("demo", "src/a.py")  # gone already: no error
        assert rs.projects.download("demo", "src/a.py") is None
        feed = rs.projects.changes("demo")
        assert feed.version == 3
        assert [(change.version, change.path, change.origin) for change in feed.changes] == [
            (1, "src/a.py", "sync"),
            (2, "src/a.py", "sync"),
            (3, "src/a.py", "sync"),
        ]
        assert feed.changes[2].sha256 is None
        assert rs.projects.get("demo").files == 0


def test_errors_carry_status_code_message_and_request_id(url: str) -> None:
    with Client(url) as rs:
        with pytest.raises(NotFound) as missing:
            rs.projects.get("nowhere")
        assert (missing.value.status, missing.value.code) == (404, "project_not_found")
        assert "nowhere" in missing.value.message and missing.value.request_id
        rs.projects.create("demo")
        stored = rs.projects.upload("demo", "a.py", b"1\n")
        with pytest.raises(PreconditionFailed) as stale:
            rs.projects.upload("demo", "a.py", b"2\n", if_match="0" * 64)
        assert (stale.value.status, stale.value.code) == (412, "precondition_failed")
        with pytest.raises(PreconditionFailed):
            rs.projects.upload("demo", "a.py", b"2\n", if_match=NEW_FILE)
        with pytest.raises(Conflict) as ahead:
            rs.projects.changes("demo", since=stored.version + 5)
        assert ahead.value.status == 409
    assert httpx.get(f"{url}/api/projects/demo/files/a.py").content == b"1\n"


def test_sync_index_and_pull_a_folder(url: str, folder: Path) -> None:
    progress: list[IndexProgress] = []
    uploads: list[tuple[int, int, str]] = []
    with Client(url) as rs:
        report = rs.projects.sync_folder("demo", folder, on_upload=lambda *seen: uploads.append(seen))
        assert (report.uploaded, report.version) == (2, 2)
        assert uploads == [(1, 2, "README.md"), (2, 2, "pkg/app.py")]
        result = rs.projects.index("demo", on_progress=progress.append)
        assert (result.project_id, result.files) == ("demo", 2)
        assert progress[-1].phase == "done" and progress[-1].files_total == 2
        # a tool's write (here: another client's PUT stands in) comes home with pull
        etag = rs.projects.download("demo", "pkg/app.py")
        assert etag is not None
        rs.projects.upload("demo", "pkg/app.py", b"def main():\n    return 2\n", if_match=etag[1])
        pulled = rs.projects.pull("demo", folder)
    assert pulled.version == 3
    assert (folder / "pkg" / "app.py").read_bytes() == APP  # a client's change is no tool's: kept


def test_a_sync_that_would_revert_a_tool_write_is_refused(url: str, folder: Path) -> None:
    approve_write = {"path": "pkg/app.py", "find": "1", "replace": "3"}
    with Client(url) as rs:
        rs.projects.sync_folder("demo", folder)
        tool = tool_write(url, approve_write)
        assert "Wrote pkg/app.py" in tool
        (folder / "pkg" / "app.py").write_bytes(b"def main():\n    return 4\n")
        with pytest.raises(SyncRefused) as refused:
            rs.projects.sync_folder("demo", folder)
        assert refused.value.paths == ["pkg/app.py"]
        with pytest.raises(PullRefused):
            rs.projects.pull("demo", folder)
        assert rs.projects.pull("demo", folder, force=True).written == ["pkg/app.py"]
        assert rs.projects.sync_folder("demo", folder, SyncOptions(force=True)).uploaded == 0
    assert (folder / "pkg" / "app.py").read_bytes() == b"def main():\n    return 3\n"


def tool_write(url: str, args: dict[str, Any]) -> str:
    """replace_in_file through execute_action, approved: a write by a tool."""
    request = {"project_id": "demo", "session_id": "s", "tool_name": "replace_in_file", "tool_args": args}
    with Client(url) as rs:
        preview = rs.execute(request)
        assert preview.approval is not None and preview.approval.required
        return rs.execute({**request, "approval_token": preview.approval.token}).observation


def test_the_async_client_does_the_same(url: str, folder: Path) -> None:
    async def main() -> tuple[Any, ...]:
        async with AsyncClient(url) as rs:
            seen: list[str] = []

            async def on_progress(step: IndexProgress) -> None:
                seen.append(step.phase)

            synced = await rs.projects.sync_folder("demo", folder)
            indexed = await rs.projects.index("demo", on_progress=on_progress)
            with pytest.raises(NotFound) as missing:
                await rs.projects.get("nowhere")
            feed = await rs.projects.changes("demo")
            pulled = await rs.projects.pull("demo", folder)
            return synced, indexed, seen, missing.value, feed, pulled

    synced, indexed, seen, missing, feed, pulled = asyncio.run(main())
    assert (synced.uploaded, indexed.files, seen[-1]) == (2, 2, "done")
    assert (missing.code, missing.status) == ("project_not_found", 404)
    assert [change.path for change in feed.changes] == ["README.md", "pkg/app.py"]
    assert (pulled.version, pulled.written) == (2, [])
