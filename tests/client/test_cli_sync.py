"""`reactstep sync`, `index` and `pull` against a real server on loopback (local store): only changed
files travel, tool writes are never reverted without --force, and pull brings them home."""

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from reactstep.client import Client
from reactstep.client.api.errors import ClientError
from reactstep.client.cli.main import main
from reactstep.client.workspace.folder import state_path
from reactstep.client.workspace.sync import SyncOptions, sync_folder


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "version.py").write_text("VERSION = '1.0'\n")
    (root / "pkg" / "app.py").write_text("def run():\n    return 1\n")
    (root / "README.md").write_text("# demo\n")
    return root


def run(*argv: str) -> int:
    return main(list(argv))


def server_files(url: str, project: str) -> dict[str, bytes]:
    listed = {}
    changes = httpx.get(f"{url}/api/projects/{project}/changes?since=0").json()["changes"]
    for path in sorted({change["path"] for change in changes}):
        response = httpx.get(f"{url}/api/projects/{project}/files/{path}")
        if response.status_code == 200:
            listed[path] = response.content
    return listed


def version(url: str, project: str) -> int:
    number: int = httpx.get(f"{url}/api/projects/{project}").json()["version"]
    return number


def approve(url: str, project: str, args: dict[str, Any], tool: str = "replace_in_file") -> None:
    """An approved write through execute_action, as the agent makes it."""
    body = {"project_id": project, "session_id": "s", "tool_name": tool, "tool_args": args}
    preview = httpx.post(f"{url}/api/agent/execute_action", json=body).json()
    done = httpx.post(
        f"{url}/api/agent/execute_action", json={**body, "approval_token": preview["approval"]["token"]}
    ).json()
    assert done["is_error"] is False, done


def test_sync_creates_the_project_and_sends_only_what_changed(
    url: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    assert capsys.readouterr().out == (
        "synced demo at version 3: uploaded 3 files (47 bytes), 0 unchanged, deleted 0; "
        "skipped 0 ignored, 0 binary, 0 oversize\n"
    )
    assert server_files(url, "demo") == {
        "README.md": b"# demo\n",
        "pkg/app.py": b"def run():\n    return 1\n",
        "pkg/version.py": b"VERSION = '1.0'\n",
    }
    assert version(url, "demo") == 3
    state = json.loads(state_path(folder, "demo").read_text())
    assert (state["server"], state["version"], sorted(state["files"])) == (
        url,
        3,
        ["README.md", "pkg/app.py", "pkg/version.py"],
    )

    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    assert "uploaded 0 files (0 bytes), 3 unchanged, deleted 0" in capsys.readouterr().out
    assert version(url, "demo") == 3  # a no-op sync changes nothing

    (folder / "pkg" / "app.py").write_text("def run():\n    return 2\n")
    (folder / "README.md").unlink()
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    assert "synced demo at version 5: uploaded 1 files (24 bytes), 1 unchanged, deleted 1" in (
        capsys.readouterr().out
    )
    assert server_files(url, "demo") == {
        "pkg/app.py": b"def run():\n    return 2\n",
        "pkg/version.py": b"VERSION = '1.0'\n",
    }
    assert version(url, "demo") == 5


def test_keep_deleted_leaves_the_servers_extra_files(url: str, folder: Path) -> None:
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    (folder / "README.md").unlink()
    assert run("sync", str(folder), "--project", "demo", "--server", url, "--keep-deleted") == 0
    assert "README.md" in server_files(url, "demo")


def test_ignored_binary_oversize_and_unsafe_names_stay_home(
    url: str, folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REACTSTEP_UPLOAD_MAX_FILE_BYTES", "100")
    (folder / ".gitignore").write_text("build/\n*.log\n")
    (folder / "build").mkdir()
    (folder / "build" / "out.py").write_text("x = 1\n")
    (folder / "debug.log").write_text("noise\n")
    (folder / "logo.png").write_bytes(b"\x89PNG\x00\x01")
    (folder / "big.txt").write_text("x" * 101)
    (folder / "tab\tname.py").write_text("y = 2\n")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    assert capsys.readouterr().out.endswith(
        "skipped 2 ignored, 1 binary, 1 oversize, 1 with names the server refuses\n"
    )
    assert sorted(server_files(url, "demo")) == [".gitignore", "README.md", "pkg/app.py", "pkg/version.py"]


def test_a_tool_write_is_not_reverted_without_force_and_pull_brings_it_home(
    url: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    approve(url, "demo", {"path": "pkg/version.py", "find": "1.0", "replace": "2.0"})
    capsys.readouterr()

    assert run("index", str(folder), "--project", "demo", "--server", url) == 1
    refusal = capsys.readouterr().err
    assert "a tool on the server changed 1 file(s) of project 'demo'" in refusal
    assert "pkg/version.py (version 4)" in refusal
    assert "reactstep pull" in refusal
    assert server_files(url, "demo")["pkg/version.py"] == b"VERSION = '2.0'\n"  # nothing was changed

    assert run("pull", str(folder), "--project", "demo", "--server", url) == 0
    assert capsys.readouterr().out == "pulled demo to version 4: wrote 1 files, removed 0, 0 already here\n"
    assert (folder / "pkg" / "version.py").read_text() == "VERSION = '2.0'\n"

    before = version(url, "demo")
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    assert "uploaded 0 files (0 bytes), 3 unchanged, deleted 0" in capsys.readouterr().out
    assert version(url, "demo") == before
    assert run("pull", str(folder), "--project", "demo", "--server", url) == 0
    assert "wrote 0 files, removed 0, 0 already here" in capsys.readouterr().out


def test_force_overwrites_the_tool_write_with_the_folders_bytes(
    url: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    approve(url, "demo", {"path": "pkg/version.py", "find": "1.0", "replace": "2.0"})
    approve(url, "demo", {"path": "pkg/new.py", "content": "NEW = 1\n"}, tool="create_file")
    assert run("sync", str(folder), "--project", "demo", "--server", url, "--force") == 0
    assert "overwrote 2 tool write(s)" in capsys.readouterr().out
    files = server_files(url, "demo")
    assert files["pkg/version.py"] == b"VERSION = '1.0'\n"
    assert "pkg/new.py" not in files  # the folder lacks it: with --force it goes


def test_pull_refuses_to_overwrite_an_edit_made_here(
    url: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    approve(url, "demo", {"path": "pkg/version.py", "find": "1.0", "replace": "2.0"})
    (folder / "pkg" / "version.py").write_text("VERSION = '1.5'  # mine\n")
    capsys.readouterr()
    assert run("pull", str(folder), "--project", "demo", "--server", url) == 1
    assert "pkg/version.py" in capsys.readouterr().err
    assert (folder / "pkg" / "version.py").read_text() == "VERSION = '1.5'  # mine\n"
    assert run("pull", str(folder), "--project", "demo", "--server", url, "--force") == 0
    assert (folder / "pkg" / "version.py").read_text() == "VERSION = '2.0'\n"


def test_pull_into_a_copy_never_synced_takes_files_the_server_had_and_new_ones(
    url: str, folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without sync state the whole feed tells old copies (safe to replace) from local edits."""
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "pkg").mkdir()
    (copy / "pkg" / "version.py").write_text("VERSION = '1.0'\n")  # as first synced
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    approve(url, "demo", {"path": "pkg/version.py", "find": "1.0", "replace": "2.0"})
    approve(url, "demo", {"path": "pkg/new.py", "content": "NEW = 1\n"}, tool="create_file")
    capsys.readouterr()
    assert run("pull", str(copy), "--project", "demo", "--server", url) == 0
    assert capsys.readouterr().out == "pulled demo to version 5: wrote 2 files, removed 0, 0 already here\n"
    assert (copy / "pkg" / "version.py").read_text() == "VERSION = '2.0'\n"
    assert (copy / "pkg" / "new.py").read_text() == "NEW = 1\n"


def test_pull_removes_a_tool_written_file_another_client_deleted_since(
    url: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    approve(url, "demo", {"path": "pkg/version.py", "find": "1.0", "replace": "2.0"})
    assert httpx.delete(f"{url}/api/projects/demo/files/pkg/version.py").status_code == 200
    capsys.readouterr()
    assert run("pull", str(folder), "--project", "demo", "--server", url) == 0
    assert capsys.readouterr().out == "pulled demo to version 5: wrote 0 files, removed 1, 0 already here\n"
    assert not (folder / "pkg" / "version.py").exists()
    assert (folder / "pkg" / "app.py").exists()


def test_a_file_changed_in_the_same_second_as_the_sync_is_seen(url: str, folder: Path) -> None:
    """A just-written file is recorded without its mtime, so a same-size edit with the same mtime shows."""
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    target = folder / "pkg" / "version.py"
    stat = target.stat()
    target.write_text("VERSION = '9.0'\n")  # same size
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    assert server_files(url, "demo")["pkg/version.py"] == b"VERSION = '9.0'\n"


def test_an_unreadable_state_falls_back_to_checking_every_tool_write(url: str, folder: Path) -> None:
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    approve(url, "demo", {"path": "pkg/version.py", "find": "1.0", "replace": "2.0"})
    state_path(folder, "demo").write_text("{not json")
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 1
    assert server_files(url, "demo")["pkg/version.py"] == b"VERSION = '2.0'\n"


def test_a_file_changed_on_the_server_between_plan_and_upload_stops_the_sync(url: str, folder: Path) -> None:
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    (folder / "pkg" / "app.py").write_text("def run():\n    return 3\n")

    def race(request: httpx.Request) -> None:  # another client writes just before this PUT
        if request.method == "PUT" and "/files/" in request.url.path:
            httpx.put(str(request.url), content=b"someone else\n")

    racing = httpx.Client(base_url=url, event_hooks={"request": [race]})
    with Client(url, http=racing) as client, pytest.raises(ClientError, match="changed on the server"):
        client.do(sync_folder("demo", folder, url, SyncOptions()))
    assert server_files(url, "demo")["pkg/app.py"] == b"someone else\n"


def test_index_streams_progress_and_prints_both_summaries(
    url: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[tuple[str, int, int]] = []
    with Client(url) as client:
        report = client.projects.sync_folder(
            "demo",
            folder,
            SyncOptions(index=True),
            on_upload=lambda done, total, path: seen.append(("upload", done, total)),
            on_index=lambda done, total, path: seen.append(("index", done, total)),
        )
    assert report.index is not None and report.index["files"] == 3
    assert [item for item in seen if item[0] == "upload"] == [("upload", n, 3) for n in (1, 2, 3)]
    assert ("index", 3, 3) in seen
    assert run("index", str(folder), "--project", "demo", "--server", url) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("synced demo at version 3: uploaded 0 files")
    assert lines[1].startswith("re-indexed 0 changed files: 0 chunks, 0 embedded")


def test_without_server_the_cli_runs_one_in_process(
    url: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync", str(folder), "--project", "demo") == 0
    assert "uploaded 3 files" in capsys.readouterr().out
    assert json.loads(state_path(folder, "demo").read_text())["server"] == "in-process"
    assert run("sync", str(folder), "--project", "demo") == 0
    assert "uploaded 0 files (0 bytes), 3 unchanged" in capsys.readouterr().out


def test_a_missing_folder_and_an_unreachable_server_are_clear_errors(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync", str(tmp_path / "nowhere"), "--project", "demo") == 2
    assert "is not a directory" in capsys.readouterr().err
    assert run("sync", str(folder), "--project", "demo", "--server", "http://127.0.0.1:9") == 1
    assert "cannot reach http://127.0.0.1:9" in capsys.readouterr().err
