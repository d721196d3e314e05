"""list_files through execute_action: depth, pagination and the exact call for the next page."""

from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.service.http.app import create_app
from reactstep.service.parsing.reply import parse_reply
from reactstep.service.settings import Settings
from reactstep.tools.catalog import default_registry
from reactstep.tools.store.local import LocalStore

PROJECT = {
    "README.md": b"# Demo\n",
    "src/app.py": b"def main():\n    return 42\n",
    "src/util/strings.py": b"def shout(text):\n",
    "src/util/deep/er/x.py": b"x = 1\n",
}


def observe(client: TestClient, **tool_args: Any) -> tuple[str, bool]:
    """Run list_files through the HTTP app; the observation and its error flag."""
    body = {"project_id": "demo", "session_id": "s-1", "tool_name": "list_files", "tool_args": tool_args}
    response = client.post("/api/agent/execute_action", json=body)
    assert response.status_code == 200, response.text
    result = response.json()
    return result["observation"], result["is_error"]


def client_for(root: Path, files: dict[str, bytes], **settings: Any) -> TestClient:
    """An app over a local store holding `files` in project 'demo'."""
    store = LocalStore(root / "objects")
    for path, data in files.items():
        store.put("demo", path, data)
    return TestClient(create_app(Settings(data_dir=root, **settings), store=store))


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    """A small project four levels deep."""
    return client_for(tmp_path_factory.mktemp("list"), PROJECT)


@pytest.fixture(scope="module")
def many_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir whose local store holds 250 files in one folder of project 'demo'."""
    root = tmp_path_factory.mktemp("many")
    folder = root / "objects" / "demo" / "many"
    folder.mkdir(parents=True)
    for number in range(250):  # written directly: 250 fsyncing puts would be slow for nothing
        (folder / f"f{number:03d}.txt").write_bytes(b"x")
    return root


@pytest.fixture(scope="module")
def many(many_root: Path) -> TestClient:
    """The 250 files, with up to 1000 entries shown over all pages."""
    return TestClient(create_app(Settings(data_dir=many_root), store=LocalStore(many_root / "objects")))


def entries(first: int, last: int) -> list[str]:
    """The listing lines of many/f<first>..f<last>."""
    return [f"many/f{number:03d}.txt  (1 bytes)" for number in range(first, last + 1)]


@pytest.mark.parametrize(
    ("tool_args", "observation"),
    [
        pytest.param({}, "Contents of ./ (2 entries):\nsrc/\nREADME.md  (7 bytes)", id="depth-1-default"),
        pytest.param(
            {"depth": 2},
            "Contents of ./ (3 entries):\nsrc/util/\nREADME.md  (7 bytes)\nsrc/app.py  (26 bytes)",
            id="depth-2",
        ),
        pytest.param(
            {"path": "src", "depth": 2},
            "Contents of src/ (3 entries):\nsrc/util/deep/\nsrc/app.py  (26 bytes)\n"
            "src/util/strings.py  (17 bytes)",
            id="depth-2-below-a-folder",
        ),
        pytest.param(
            {"path": "src", "recursive": True},
            "Contents of src/ (3 entries):\nsrc/app.py  (26 bytes)\nsrc/util/deep/er/x.py  (6 bytes)\n"
            "src/util/strings.py  (17 bytes)",
            id="recursive-is-every-level",
        ),
        pytest.param(
            {"path": "src", "recursive": True, "depth": 1},
            "Contents of src/ (2 entries):\nsrc/util/\nsrc/app.py  (26 bytes)",
            id="depth-overrides-recursive",
        ),
        pytest.param(
            {"path": "src/util", "depth": 100},
            "Contents of src/util/ (2 entries):\nsrc/util/deep/er/x.py  (6 bytes)\n"
            "src/util/strings.py  (17 bytes)",
            id="depth-beyond-the-tree",
        ),
    ],
)
def test_depth(client: TestClient, tool_args: dict[str, Any], observation: str) -> None:
    assert observe(client, **tool_args) == (observation, False)


@pytest.mark.parametrize(
    ("tool_args", "message"),
    [
        ({"depth": 0}, "Error: list_files: argument 'depth': Input should be greater than or equal to 1"),
        ({"depth": 101}, "Error: list_files: argument 'depth': Input should be less than or equal to 100"),
        ({"page": 0}, "Error: list_files: argument 'page': Input should be greater than or equal to 1"),
        ({"page": 2}, "Error: page 2 is past the end: ./ has 1 page(s) of entries"),
        ({"offset": 100}, "Error: list_files: argument 'offset': Extra inputs are not permitted"),
        ({"path": "../other"}, "Error: path '../other' must be relative to the project root, without '..'"),
        ({"path": "src/../../other"}, "Error: path 'src/../../other' must be relative"),
        ({"path": "~/x"}, "Error: path '~/x' is absolute"),
        ({"path": "src/app.py"}, "Error: src/app.py is a file, not a folder; use read_file to read it"),
    ],
)
def test_bad_input(client: TestClient, tool_args: dict[str, Any], message: str) -> None:
    observation, is_error = observe(client, **tool_args)
    assert (observation[: len(message)], is_error) == (message, True)


@pytest.mark.parametrize(
    ("tool_args", "lines"),
    [
        pytest.param(
            {"path": "many"},
            [
                "Contents of many/ (250 entries; page 1 of 3):",
                *entries(0, 99),
                '[Showing entries 1-100 of 250. For the next page, call list_files(path="many", page=2)]',
            ],
            id="first-page",
        ),
        pytest.param(
            {"path": "many", "page": 2},
            [
                "Contents of many/ (250 entries; page 2 of 3):",
                *entries(100, 199),
                '[Showing entries 101-200 of 250. For the next page, call list_files(path="many", page=3)]',
            ],
            id="middle-page",
        ),
        pytest.param(
            {"path": "many", "page": 3},
            ["Contents of many/ (250 entries; page 3 of 3):", *entries(200, 249)],
            id="last-page",
        ),
        pytest.param(
            {"recursive": True, "page": 1},
            [
                "Contents of ./ (250 entries; page 1 of 3):",
                *entries(0, 99),
                "[Showing entries 1-100 of 250. For the next page, call "
                'list_files(path=".", recursive=true, page=2)]',
            ],
            id="root-recursive",
        ),
    ],
)
def test_pages(many: TestClient, tool_args: dict[str, Any], lines: list[str]) -> None:
    assert observe(many, **tool_args) == ("\n".join(lines), False)


def test_the_suggested_call_parses_to_the_next_page(many: TestClient) -> None:
    observation, _ = observe(many, path="many", depth=3)
    call = observation.splitlines()[-1].split("call ", 1)[1].rstrip("]")
    assert call == 'list_files(path="many", depth=3, page=2)'
    action = parse_reply(f"Thought: on.\nAction: {call}", default_registry().schemas()).action
    assert action is not None
    assert observe(many, **action.tool_args)[0].splitlines()[1] == "many/f100.txt  (1 bytes)"


def test_the_entry_cap_ends_the_last_page(tmp_path: Path) -> None:
    # A cap of 1,000 entries over all pages: ten pages of 100, then the count of the rest.
    folder = tmp_path / "objects" / "demo" / "many"
    folder.mkdir(parents=True)
    for number in range(1_050):  # written directly, as in many_root
        (folder / f"f{number:04d}.txt").write_bytes(b"x")
    client = TestClient(create_app(Settings(data_dir=tmp_path), store=LocalStore(tmp_path / "objects")))
    shown = [f"many/f{number:04d}.txt  (1 bytes)" for number in range(900, 1_000)]
    lines = ["Contents of many/ (1050 entries; page 10 of 10):", *shown, "...and 50 more"]
    assert observe(client, path="many", page=10) == ("\n".join(lines), False)
