"""find_definition and find_importers through execute_action, after POST /api/projects/{id}/index,
on the local store and on S3 (moto on loopback)."""

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.service.backends import s3_client
from reactstep.service.http.app import create_app
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder
from reactstep.tools.store.local import LocalStore
from reactstep.tools.store.objects import ObjectStore
from reactstep.tools.store.s3 import S3Store
from tests.tools.symbol_project import FILES, PROJECT, index, run_tool, upload


def s3_store(endpoint: str) -> S3Store:
    """An S3 store in a fresh bucket on the moto server."""
    settings = Settings(
        storage_backend="s3",
        s3_endpoint_url=endpoint,
        s3_access_key_id="test",
        s3_secret_access_key="test",
        s3_region="us-east-1",
        s3_bucket=f"t-{uuid.uuid4().hex[:24]}",
    )
    client = s3_client(settings)
    client.create_bucket(Bucket=settings.s3_bucket)
    return S3Store(settings.s3_bucket, settings.s3_prefix, client)


def open_store(backend: str, root: Path, request: pytest.FixtureRequest) -> ObjectStore:
    if backend == "local":
        return LocalStore(root / "objects")
    return s3_store(request.getfixturevalue("s3_server"))


@pytest.fixture(scope="module", params=["local", "s3"])
def indexed(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, local_embedder: LocalEmbedder
) -> Iterator[tuple[TestClient, dict[str, Any]]]:
    """An app over the indexed project, and what its first index run reported."""
    root = tmp_path_factory.mktemp(f"symbols-{request.param}")
    store = open_store(request.param, root, request)
    upload(store)
    with TestClient(create_app(Settings(data_dir=root), store=store, embedder=local_embedder)) as client:
        yield client, index(client)


@pytest.fixture
def client(indexed: tuple[TestClient, dict[str, Any]]) -> TestClient:
    return indexed[0]


def test_first_run_parses_every_text_file(indexed: tuple[TestClient, dict[str, Any]]) -> None:
    report = indexed[1]
    assert (report["files"], report["parsed"], report["symbols"]) == (len(FILES) - 1, len(FILES) - 1, 16)


USER = """app/models.py:6 class User
    class User:
    A registered user."""
USER_TS = """web/models.ts:2 class User
    export interface User
    A user as the API returns it."""
GET_USER = """app/services.py:7 method UserService.get_user
    def get_user(self, user_id: int) -> User:
    Return the user with this id."""
GROUP_GET_USER = """app/models.py:20 method Group.get_user
    def get_user(self, index: int) -> User:"""
FETCH_USER = """web/api.ts:3 function fetchUser
         export async function fetchUser(id: number): Promise<User>"""


@pytest.mark.parametrize(
    ("args", "observation"),
    [
        ({"symbol": "User"}, f'2 definitions of "User":\n{USER}\n{USER_TS}'),
        ({"symbol": "get_user"}, f'2 definitions of "get_user":\n{GROUP_GET_USER}\n{GET_USER}'),
        ({"symbol": "UserService.get_user"}, f'1 definition of "UserService.get_user":\n{GET_USER}'),
        ({"symbol": " app.models.User "}, f'1 definition of "app.models.User":\n{USER}'),
        (
            {"symbol": "app.models.User.display_name"},
            '1 definition of "app.models.User.display_name":\napp/models.py:14 method User.display_name\n'
            "    def display_name(self) -> str:\n    The name as shown in the UI.",
        ),
        ({"symbol": "User", "kind": "class"}, f'2 class definitions of "User":\n{USER}\n{USER_TS}'),
        (
            {"symbol": "get_user", "kind": "function"},
            f'2 function definitions of "get_user":\n{GROUP_GET_USER}\n{GET_USER}',
        ),
        (
            {"symbol": "User", "kind": "function"},
            'No function definition of "User" in the index. Try code_search or grep for other spellings.',
        ),
        (
            {"symbol": "MAX_USERS", "kind": "variable"},
            '1 variable definition of "MAX_USERS":\napp/models.py:3 variable MAX_USERS\n    MAX_USERS = 100',
        ),
        (
            {"symbol": "User", "kind": "import"},
            '4 imports of "User":\n'
            "app/services.py:1: from .models import MAX_USERS, User\n"
            "tests/test_models.py:1: from app.models import User\n"
            'web/api.ts:1: import { API_ROOT, User } from "./models"\n'
            'web/components/UserCard.tsx:1: import { fetchUser, User } from "../index"',
        ),
        (
            {"symbol": "nowhere"},
            'No definition of "nowhere" in the index. Try code_search or grep for other spellings.',
        ),
        # resolve: through the re-export in app/api/__init__.py to app/services.py
        (
            {"symbol": "UserService.get_user", "mode": "resolve", "file": "app/api/views.py"},
            "app/api/views.py:1: from . import UserService\n"
            "  -> app/services.py:7 method UserService.get_user\n"
            "         def get_user(self, user_id: int) -> User:\n"
            "         Return the user with this id.",
        ),
        # resolve: TS, `../index` re-exports `*` from ./models
        (
            {"symbol": "User", "mode": "resolve", "file": "web/components/UserCard.tsx"},
            'web/components/UserCard.tsx:1: import { fetchUser, User } from "../index"\n'
            "  -> web/models.ts:2 class User\n"
            "         export interface User\n"
            "         A user as the API returns it.",
        ),
        # resolve everywhere: "./api.js" names web/api.ts
        (
            {"symbol": "fetchUser", "mode": "resolve"},
            f'web/api.test.ts:1: import {{ fetchUser }} from "./api.js"\n  -> {FETCH_USER}\n\n'
            'web/components/UserCard.tsx:1: import { fetchUser, User } from "../index"\n'
            f"  -> {FETCH_USER}\n\n"
            f'web/index.ts:1: import {{ fetchUser }} from "./api"\n  -> {FETCH_USER}',
        ),
        (
            {"symbol": "show_user", "mode": "resolve", "file": "./app/api/views.py"},
            "app/api/views.py defines show_user itself:\n"
            "app/api/views.py:5 function show_user\n    def show_user(user_id: int) -> str:",
        ),
        (
            {"symbol": "main", "mode": "resolve"},
            'No import of main in the index.\n1 definition of "main":\napp/cli.py:6 function main\n'
            "    def main() -> int:",
        ),
        (
            {"symbol": "sys", "mode": "resolve", "file": "app/cli.py"},
            'No import of sys in app/cli.py in the index.\nNo definition of "sys" in the index. '
            "Try code_search or grep for other spellings.",
        ),
    ],
)
def test_find_definition(client: TestClient, args: dict[str, Any], observation: str) -> None:
    result = run_tool(client, "find_definition", **args)
    assert (result["observation"], result["is_error"]) == (observation, False)


@pytest.mark.parametrize(
    ("args", "observation"),
    [
        (
            {"module": "app.models"},
            "Imports of app/models.py: 3 in 3 files\n"
            "app/api/views.py:2: from .. import models\n"
            "app/services.py:1: from .models import MAX_USERS, User\n"
            "tests/test_models.py:1: from app.models import User",
        ),
        (
            {"module": "app/models.py", "symbol": "User"},
            "Imports of User from app/models.py: 2 in 2 files\n"
            "app/services.py:1: from .models import MAX_USERS, User\n"
            "tests/test_models.py:1: from app.models import User",
        ),
        (
            {"module": "app.services"},
            "Imports of app/services.py: 1 in 1 file\n"
            "app/api/__init__.py:1: from ..services import UserService",
        ),
        (
            {"module": "app.api"},
            "Imports of app/api/__init__.py: 1 in 1 file\napp/api/views.py:1: from . import UserService",
        ),
        (
            {"module": "web/api.ts"},
            "Imports of web/api.ts: 2 in 2 files\n"
            'web/api.test.ts:1: import { fetchUser } from "./api.js"\n'
            'web/index.ts:1: import { fetchUser } from "./api"',
        ),
        (
            {"module": "web/index"},
            "Imports of web/index.ts: 1 in 1 file\n"
            'web/components/UserCard.tsx:1: import { fetchUser, User } from "../index"',
        ),
        (
            {"module": "./models", "symbol": "API_ROOT"},
            "Imports of API_ROOT from app/models.py, web/models.ts: 2 in 2 files\n"
            'web/api.ts:1: import { API_ROOT, User } from "./models"\n'
            'web/index.ts:2: import * from "./models"',
        ),
        (
            {"module": "../components/UserCard"},
            "No file imports web/components/UserCard.tsx.",
        ),
        (
            {"module": "react"},
            'Imports of "react" (not a project file: matched by name): 1 in 1 file\n'
            'web/components/UserCard.tsx:2: import default from "react"',
        ),
        (
            {"module": "sys", "symbol": "argv"},
            'No file imports argv from "sys" (not a project file: matched by name).',
        ),
        ({"module": "app.cli"}, "No file imports app/cli.py."),
    ],
)
def test_find_importers(client: TestClient, args: dict[str, Any], observation: str) -> None:
    result = run_tool(client, "find_importers", **args)
    assert (result["observation"], result["is_error"]) == (observation, False)


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("find_definition", {}, "Error: find_definition: argument 'symbol': Field required"),
        (
            "find_definition",
            {"symbol": ""},
            "Error: find_definition: argument 'symbol': String should have at least 1",
        ),
        (
            "find_definition",
            {"symbol": "User", "kind": "module"},
            "Error: find_definition: argument 'kind': Input",
        ),
        (
            "find_definition",
            {"symbol": "User", "mode": "guess"},
            "Error: find_definition: argument 'mode': Input",
        ),
        (
            "find_definition",
            {"symbol": "User", "type": "class"},
            "Error: find_definition: argument 'type': Extra",
        ),
        (
            "find_definition",
            {"symbol": "User", "mode": "resolve", "file": "app/nope.py"},
            "Error: app/nope.py is not in the symbol index; give the path of an indexed file",
        ),
        (
            "find_definition",
            {"symbol": "User", "mode": "resolve", "file": "../other/app.py"},
            "Error: path '../other/app.py' must be relative",
        ),
        ("find_importers", {}, "Error: find_importers: argument 'module': Field required"),
        (
            "find_importers",
            {"module": "x", "symbol": ""},
            "Error: find_importers: argument 'symbol': String should",
        ),
        ("find_importers", {"module": "app/../../x"}, "Error: path 'app/../../x' must be relative"),
        ("project_overview", {"verbose": True}, "Error: project_overview: argument 'verbose': Extra inputs"),
    ],
)
def test_bad_arguments(client: TestClient, tool: str, args: dict[str, Any], message: str) -> None:
    result = run_tool(client, tool, **args)
    assert result["is_error"] is True
    assert result["observation"].startswith(message), result["observation"]


@pytest.mark.parametrize(
    ("tool", "args", "what"),
    [
        ("find_definition", {"symbol": "User"}, "find_definition needs its symbol index"),
        ("find_importers", {"module": "app"}, "find_importers needs its symbol index"),
        ("project_overview", {}, "it has no project overview"),
    ],
)
def test_a_project_never_indexed_is_a_clear_error(
    client: TestClient, tool: str, args: dict[str, Any], what: str
) -> None:
    client.put("/api/projects/fresh")
    result = run_tool(client, tool, project="fresh", **args)
    assert result == {
        **result,
        "is_error": True,
        "observation": f"Error: project 'fresh' is not indexed yet ({what}); index it first "
        "(`reactstep index PATH --project fresh` or POST /api/projects/fresh/index)",
    }


def test_index_files_stay_out_of_the_projects_tree(client: TestClient) -> None:
    listed = run_tool(client, "find_files", pattern="**/*.json")["observation"]
    assert listed.splitlines()[1:] == ["package.json"]
    assert ".reactstep-index" not in run_tool(client, "list_files", recursive=True)["observation"]
    escaped = run_tool(client, "read_file", file_path="../.reactstep-index/shop/symbols.json")
    assert escaped["is_error"] is True


# --- incremental -----------------------------------------------------------------------------


@pytest.fixture(params=["local", "s3"])
def fresh(
    request: pytest.FixtureRequest, tmp_path: Path, local_embedder: LocalEmbedder
) -> Iterator[tuple[TestClient, ObjectStore]]:
    """An app over the project, not indexed yet, and its store."""
    store = open_store(request.param, tmp_path, request)
    upload(store)
    with TestClient(create_app(Settings(data_dir=tmp_path), store=store, embedder=local_embedder)) as app:
        yield app, store


def stored_entries(store: ObjectStore) -> dict[str, Any]:
    data = store.get_index_file(PROJECT, "symbols.json")
    assert data is not None
    document: dict[str, Any] = json.loads(data)
    assert document["version"] == 1
    files: dict[str, Any] = document["files"]
    return files


def test_a_rerun_parses_only_what_changed(fresh: tuple[TestClient, ObjectStore]) -> None:
    client, store = fresh
    assert index(client)["parsed"] == len(FILES) - 1
    before = stored_entries(store)
    assert index(client)["parsed"] == 0
    assert stored_entries(store) == before
    store.put(
        PROJECT, "app/services.py", FILES["app/services.py"] + b"\n\ndef audit(user):\n    return user\n"
    )
    report = index(client)
    assert (report["parsed"], report["symbols"]) == (1, 17)
    after = stored_entries(store)
    assert {path for path in after if after[path] != before[path]} == {"app/services.py"}
    assert after["app/services.py"]["symbols"][-1] == {
        "name": "audit",
        "qualified_name": "audit",
        "kind": "function",
        "line": 14,
        "end_line": 15,
        "signature": "def audit(user):",
        "docstring": "",
    }
    assert run_tool(client, "find_definition", symbol="audit")["observation"] == (
        '1 definition of "audit":\napp/services.py:14 function audit\n    def audit(user):'
    )


def test_a_deleted_file_leaves_the_index(fresh: tuple[TestClient, ObjectStore]) -> None:
    client, store = fresh
    index(client)
    store.delete(PROJECT, "web/api.test.ts")
    assert index(client)["parsed"] == 0
    assert "web/api.test.ts" not in stored_entries(store)
    assert run_tool(client, "find_importers", module="web/api.ts")["observation"] == (
        'Imports of web/api.ts: 1 in 1 file\nweb/index.ts:1: import { fetchUser } from "./api"'
    )


def test_a_lost_symbol_index_is_rebuilt_without_embedding(fresh: tuple[TestClient, ObjectStore]) -> None:
    client, store = fresh
    index(client)
    store.put_index_file(PROJECT, "symbols.json", b"{not json")
    report = index(client)
    assert (report["parsed"], report["embedded"], report["symbols"]) == (len(FILES) - 1, 0, 16)
    assert set(stored_entries(store)) == set(FILES) - {"web/logo.png"}
