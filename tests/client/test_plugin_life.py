"""An IDE plugin's whole life with a project, over HTTP only, on the local store and on S3 (moto):
create -> sync a real repository (the installed httpx package) -> index -> code_search -> approved
write -> code_search shows the new code -> the change feed lists the write -> the plugin fetches it ->
re-sync is a no-op -> `reactstep index` of the old folder refuses to revert -> `pull`, then sync is a no-op.
"""

import hashlib
import shutil
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reactstep.client.cli.main import main
from reactstep.service.backends import s3_client
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder

SECRET = "plugin-life-secret-0123456789abcdef"
VERSION_FILE = "httpx/__version__.py"


@pytest.fixture(params=["local", "s3"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    if request.param == "local":
        return Settings(data_dir=tmp_path / "server", approval_secret=SECRET)
    bucket = f"plugin-{uuid.uuid4().hex[:12]}"
    settings = Settings(
        data_dir=tmp_path / "server",
        approval_secret=SECRET,
        storage_backend="s3",
        s3_endpoint_url=request.getfixturevalue("s3_server"),
        s3_bucket=bucket,
        s3_region="us-east-1",
        s3_access_key_id="test",
        s3_secret_access_key="test",
    )
    s3_client(settings).create_bucket(Bucket=bucket)
    return settings


@pytest.fixture
def url(settings: Settings, local_embedder: LocalEmbedder) -> Iterator[str]:
    with BackgroundServer(create_app(settings, embedder=local_embedder)) as server:
        yield server.url


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A real repository: the source of the httpx package this environment runs."""
    root = tmp_path / "repo"
    shutil.copytree(Path(httpx.__file__).parent, root / "httpx", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "README.md").write_text("# httpx, as installed\n")
    return root


class Plugin:
    """What an IDE plugin does, in plain HTTP calls: a manifest, a sync plan, uploads, the feed."""

    def __init__(self, url: str, project: str, workspace: Path) -> None:
        self.base = f"{url}/api/projects/{project}"
        self.http = httpx.Client(timeout=120)
        self.workspace = workspace
        self.version: int | None = None

    def manifest(self) -> dict[str, str]:
        return {
            path.relative_to(self.workspace).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(self.workspace.rglob("*"))
            if path.is_file() and ".reactstep" not in path.parts
        }

    def sync(self, **extra: Any) -> dict[str, Any]:
        body = {"files": self.manifest(), "base_version": self.version, **extra}
        response = self.http.post(self.base + "/sync", json=body)
        assert response.status_code == 200, response.text
        plan: dict[str, Any] = response.json()
        return plan

    def upload(self, plan: dict[str, Any]) -> None:
        for path in plan["upload"]:
            etag = plan["etags"][path]
            headers = {"if-match": f'"{etag}"'} if etag else {"if-none-match": "*"}
            response = self.http.put(
                f"{self.base}/files/{path}", content=(self.workspace / path).read_bytes(), headers=headers
            )
            assert response.status_code == 200, response.text


def execute(url: str, body: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(f"{url}/api/agent/execute_action", json=body, timeout=120)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_the_plugin_life_over_http(
    url: str, repository: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "plugin"
    shutil.copytree(repository, workspace)
    plugin = Plugin(url, "lib", workspace)

    assert plugin.http.put(plugin.base).status_code == 201
    plan = plugin.sync()
    assert plan["version"] == 0 and plan["conflicts"] == [] and len(plan["upload"]) == len(plugin.manifest())
    plugin.upload(plan)
    plan = plugin.sync(index=True)
    assert (plan["upload"], plan["delete"], plan["conflicts"]) == ([], [], [])
    assert plan["index"]["files"] == len(plugin.manifest()) == 25  # 23 modules, py.typed, README.md
    plugin.version = plan["version"]
    assert plugin.http.get(plugin.base).json()["index_state"] == "ready"

    search = {"project_id": "lib", "session_id": "p", "tool_name": "code_search"}
    before = execute(url, {**search, "tool_args": {"query": "__version__", "path": "httpx/__version__.py"}})
    assert '__version__ = "0.28.1"' in before["observation"]

    write = {
        "project_id": "lib",
        "session_id": "p",
        "tool_name": "replace_in_file",
        "tool_args": {"path": VERSION_FILE, "find": '"0.28.1"', "replace": '"0.29.0"'},
    }
    preview = execute(url, write)
    assert preview["approval"]["required"] is True
    written = execute(url, {**write, "approval_token": preview["approval"]["token"]})
    assert written["observation"] == f"Wrote {VERSION_FILE} (+1 -1 lines)."

    after = execute(url, {**search, "tool_args": {"query": "__version__", "path": "httpx/__version__.py"}})
    assert '__version__ = "0.29.0"' in after["observation"]
    assert "0.28.1" not in after["observation"]
    assert plugin.http.get(plugin.base).json()["index_state"] == "ready"

    feed = plugin.http.get(plugin.base + "/changes", params={"since": plugin.version}).json()
    new_bytes = (workspace / VERSION_FILE).read_bytes().replace(b'"0.28.1"', b'"0.29.0"')
    assert feed == {
        "version": plugin.version + 1,
        "changes": [
            {
                "version": plugin.version + 1,
                "path": VERSION_FILE,
                "sha256": hashlib.sha256(new_bytes).hexdigest(),
                "origin": "tool",
                "url": f"{httpx.URL(plugin.base).path}/files/{VERSION_FILE}?version={plugin.version + 1}",
            }
        ],
    }
    fetched = plugin.http.get(f"{plugin.base}/files/{VERSION_FILE}")
    assert fetched.content == new_bytes
    assert (
        plugin.http.get(
            f"{plugin.base}/files/{VERSION_FILE}", headers={"if-none-match": fetched.headers["etag"]}
        ).status_code
        == 304
    )
    (workspace / VERSION_FILE).write_bytes(fetched.content)
    plugin.version = feed["version"]

    again = plugin.sync()
    assert (again["upload"], again["delete"], again["conflicts"], again["version"]) == (
        [],
        [],
        [],
        plugin.version,
    )
    assert plugin.http.get(plugin.base).json()["version"] == plugin.version  # the no-op sync changed nothing

    capsys.readouterr()
    assert main(["index", str(repository), "--project", "lib", "--server", url]) == 1
    assert f"{VERSION_FILE} (version {plugin.version})" in capsys.readouterr().err
    assert plugin.http.get(f"{plugin.base}/files/{VERSION_FILE}").content == new_bytes  # not reverted

    assert main(["pull", str(repository), "--project", "lib", "--server", url]) == 0
    assert capsys.readouterr().out.startswith(f"pulled lib to version {plugin.version}: wrote 1 files")
    assert (repository / VERSION_FILE).read_bytes() == new_bytes
    assert main(["sync", str(repository), "--project", "lib", "--server", url]) == 0
    assert "uploaded 0 files (0 bytes)" in capsys.readouterr().out
    assert plugin.http.get(plugin.base).json()["version"] == plugin.version


def test_a_client_that_disconnects_mid_upload_leaves_nothing(url: str) -> None:
    assert httpx.put(f"{url}/api/projects/lib").status_code == 201
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as raw:
        raw.sendall(
            b"PUT /api/projects/lib/files/half.py HTTP/1.1\r\nHost: x\r\n"
            b"Content-Length: 100000\r\nContent-Type: application/octet-stream\r\n\r\n" + b"x = 1\n" * 100
        )
    time.sleep(1.0)  # the server notices the close on its own time; nothing may land meanwhile or after
    assert httpx.get(f"{url}/api/projects/lib/files/half.py").status_code == 404
    assert httpx.get(f"{url}/api/projects/lib").json()["version"] == 0
