"""A folder's sync state knows which server and which incarnation of the project it describes: a new
server or a project deleted and created again starts fresh and says so, unless the project holds files
the folder never sent; and `sync --keep-both` keeps both sides of a conflict, byte for byte."""

import json
from pathlib import Path

import httpx
import pytest

from reactstep.client.workspace.folder import state_path
from reactstep.client.workspace.keep_both import conflict_name
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder
from tests.client.conftest import SECRET
from tests.client.test_cli_sync import approve, run, server_files


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "version.py").write_text("VERSION = '1.0'\n")
    (root / "README.md").write_text("# demo\n")
    return root


def created(url: str) -> float:
    value: float = httpx.get(f"{url}/api/projects/demo").json()["created"]
    return value


def test_a_project_deleted_and_created_again_starts_fresh_and_says_so(
    url: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    first = created(url)
    assert json.loads(state_path(folder, "demo").read_text())["created"] == first
    assert httpx.delete(f"{url}/api/projects/demo").status_code == 204
    capsys.readouterr()

    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0  # was 409 base_version ahead
    out, err = capsys.readouterr()
    assert err.splitlines()[-1].startswith(f"project 'demo' on {url} is not the one {folder} last synced (")
    assert err.splitlines()[-1].endswith("; it holds no file: starting fresh")
    assert out.startswith("synced demo at version 2: uploaded 2 files")
    assert server_files(url, "demo") == {"README.md": b"# demo\n", "pkg/version.py": b"VERSION = '1.0'\n"}
    assert json.loads(state_path(folder, "demo").read_text())["created"] == created(url) != first


def test_another_incarnation_holding_files_is_refused_and_force_takes_it(
    url: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    assert httpx.delete(f"{url}/api/projects/demo").status_code == 204
    assert httpx.put(f"{url}/api/projects/demo").status_code == 201
    assert httpx.put(f"{url}/api/projects/demo/files/theirs.py", content=b"THEIRS = 1\n").status_code == 200
    capsys.readouterr()

    assert run("sync", str(folder), "--project", "demo", "--server", url) == 1
    using, err = capsys.readouterr().err.splitlines()
    assert using == f"using the server at {url} (--server)"
    assert err.startswith(f"error: refused: project 'demo' on {url} is not the one {folder} last synced (")
    assert "and it holds 1 file(s) this folder never sent: a sync would replace or delete them" in err
    assert server_files(url, "demo") == {"theirs.py": b"THEIRS = 1\n"}  # nothing was changed

    assert run("sync", str(folder), "--project", "demo", "--server", url, "--force") == 0
    assert sorted(server_files(url, "demo")) == ["README.md", "pkg/version.py"]


def test_the_folder_synced_with_a_new_data_dir_starts_fresh(
    url: str,
    folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without --server the state names the in-process server of whichever data dir is set."""
    assert run("sync", str(folder), "--project", "demo") == 0
    monkeypatch.setenv("REACTSTEP_DATA_DIR", str(tmp_path / "another-data"))
    capsys.readouterr()
    assert run("sync", str(folder), "--project", "demo") == 0
    out, err = capsys.readouterr()
    assert "project 'demo' on in-process is not the one" in err
    assert "it holds no file: starting fresh" in err
    assert out.startswith("synced demo at version 2: uploaded 2 files")


def test_a_second_server_starts_fresh_and_says_so(
    url: str, folder: Path, tmp_path: Path, local_embedder: LocalEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync", str(folder), "--project", "demo", "--server", url + "/") == 0
    settings = Settings(data_dir=tmp_path / "second", approval_secret=SECRET)
    with BackgroundServer(create_app(settings, embedder=local_embedder)) as second:
        capsys.readouterr()
        assert run("sync", str(folder), "--project", "demo", "--server", second.url) == 0
        out, err = capsys.readouterr()
        assert (
            err.splitlines()[-1]
            == f"{folder} last synced 'demo' with {url}; starting fresh with {second.url}"
        )
        assert out.startswith("synced demo at version 2: uploaded 2 files")
    state = json.loads(state_path(folder, "demo").read_text())
    assert state["server"] == second.url


def test_a_state_of_the_first_format_is_said_and_started_afresh(
    url: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    state = json.loads(state_path(folder, "demo").read_text())
    del state["created"]
    state_path(folder, "demo").write_text(json.dumps({**state, "format": 1}))
    approve(url, "demo", {"path": "pkg/version.py", "find": "1.0", "replace": "2.0"})
    capsys.readouterr()

    assert run("pull", str(folder), "--project", "demo", "--server", url) == 0
    out, err = capsys.readouterr()
    assert out == "pulled demo to version 3: wrote 1 files, removed 0, 0 already here\n"
    assert err == (
        f"using the server at {url} (--server)\n"
        f"{state_path(folder, 'demo')} is a sync state of format 1; this reactstep reads format 2: "
        "starting fresh\n"
    )
    saved = json.loads(state_path(folder, "demo").read_text())
    assert (saved["format"], saved["version"], saved["created"]) == (2, 3, created(url))


@pytest.mark.parametrize(
    ("path", "copy"),
    [
        ("src/app.py", "src/app.conflict-26.py"),
        ("a/b.tar.gz", "a/b.tar.conflict-26.gz"),
        (".env", ".env.conflict-26"),
        ("tools/Makefile", "tools/Makefile.conflict-26"),
    ],
)
def test_conflict_names(path: str, copy: str) -> None:
    assert conflict_name(path, 26) == copy


def test_keep_both_keeps_the_servers_bytes_beside_the_folders(
    url: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    approve(url, "demo", {"path": "pkg/version.py", "find": "1.0", "replace": "2.0"})  # version 3
    mine = b"VERSION = '1.5'  # mine\r\n\xe2\x82\xac\n"
    (folder / "pkg" / "version.py").write_bytes(mine)
    capsys.readouterr()

    assert run("sync", str(folder), "--project", "demo", "--server", url) == 1  # the default refuses
    assert "--keep-both" in capsys.readouterr().err
    assert run("sync", str(folder), "--project", "demo", "--server", url, "--keep-both") == 0
    assert capsys.readouterr().out.startswith(
        "synced demo at version 5: uploaded 2 files (45 bytes), 1 unchanged, deleted 0, "
        "kept the server's copy of 1 conflict(s): pkg/version.conflict-3.py; "
    )
    theirs = b"VERSION = '2.0'\n"
    assert (folder / "pkg" / "version.conflict-3.py").read_bytes() == theirs
    assert (folder / "pkg" / "version.py").read_bytes() == mine
    assert server_files(url, "demo") == {
        "README.md": b"# demo\n",
        "pkg/version.py": mine,
        "pkg/version.conflict-3.py": theirs,
    }
    capsys.readouterr()
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0  # settled
    assert "uploaded 0 files (0 bytes), 3 unchanged" in capsys.readouterr().out


def test_a_pull_from_a_project_created_again_starts_fresh_and_writes_only_what_is_new(
    url: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("sync", str(folder), "--project", "demo", "--server", url) == 0
    (folder / "README.md").write_text("# edited here\n")
    assert httpx.delete(f"{url}/api/projects/demo").status_code == 204
    assert httpx.put(f"{url}/api/projects/demo").status_code == 201
    approve(url, "demo", {"path": "NEW.md", "content": "new\n"}, tool="create_file")
    capsys.readouterr()

    assert run("pull", str(folder), "--project", "demo", "--server", url) == 0  # was 409 since ahead
    out, err = capsys.readouterr()
    assert err.splitlines()[-1].endswith("; it holds 1 file(s): starting fresh")
    assert out == "pulled demo to version 1: wrote 1 files, removed 0, 0 already here\n"
    assert (folder / "NEW.md").read_text() == "new\n"
    assert (folder / "README.md").read_text() == "# edited here\n"
