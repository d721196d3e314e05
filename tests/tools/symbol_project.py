"""A small Python + TypeScript project for the symbol index tests, and helpers to index and query it."""

from typing import Any

from starlette.testclient import TestClient

from reactstep.tools.store.objects import ObjectStore

PROJECT = "shop"
FILES: dict[str, bytes] = {
    "README.md": b"# Shop\n",
    "pyproject.toml": b'[project]\nname = "shop"\n\n[project.scripts]\nshop = "app.cli:main"\n',
    "package.json": b'{"name": "shop-web", "main": "web/index.ts"}\n',
    "app/__init__.py": b'"""The shop app."""\n',
    "app/models.py": b'''"""Data classes of the shop."""

MAX_USERS = 100


class User:
    """A registered user.

    Users belong to groups."""

    def __init__(self, name: str) -> None:
        self.name = name

    def display_name(self) -> str:
        """The name as shown in the UI."""
        return self.name.title()


class Group:
    def get_user(self, index: int) -> User:
        return User(str(index))
''',
    "app/services.py": b'''from .models import MAX_USERS, User


class UserService:
    """Looks users up by id."""

    def get_user(self, user_id: int) -> User:
        """Return the user with this id."""
        if user_id > MAX_USERS:
            raise KeyError(user_id)
        return User(str(user_id))
''',
    "app/api/__init__.py": b'from ..services import UserService\n\n__all__ = ["UserService"]\n',
    "app/api/views.py": b"""from . import UserService
from .. import models


def show_user(user_id: int) -> str:
    return UserService().get_user(user_id).display_name()
""",
    "app/cli.py": b"""import sys

from app.api.views import show_user


def main() -> int:
    print(show_user(int(sys.argv[1])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
""",
    "tests/conftest.py": b"import pytest\n",
    "tests/test_models.py": b"""from app.models import User


def test_display_name():
    assert User("ada lovelace").display_name() == "Ada Lovelace"
""",
    "web/models.ts": b"""/** A user as the API returns it. */
export interface User {
  name: string;
}

export const API_ROOT = "/api";
""",
    "web/api.ts": b"""import { API_ROOT, User } from "./models";

export async function fetchUser(id: number): Promise<User> {
  const response = await fetch(`${API_ROOT}/users/${id}`);
  return response.json();
}
""",
    "web/index.ts": b'export { fetchUser } from "./api";\nexport * from "./models";\n',
    "web/components/UserCard.tsx": b"""import { fetchUser, User } from "../index";
import React from "react";

export function UserCard(props: { user: User }) {
  return <div>{props.user.name}</div>;
}
""",
    "web/api.test.ts": b"""import { fetchUser } from "./api.js";

test("fetchUser is a function", () => {
  expect(typeof fetchUser).toBe("function");
});
""",
    "web/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00",
}


def upload(store: ObjectStore, project: str = PROJECT) -> None:
    """Put every file of the project in the store."""
    for path, data in FILES.items():
        store.put(project, path, data)


def index(client: TestClient, project: str = PROJECT) -> dict[str, Any]:
    """POST the project's index request; the response body."""
    response = client.post(f"/api/projects/{project}/index")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def run_tool(client: TestClient, tool_name: str, project: str = PROJECT, **tool_args: Any) -> dict[str, Any]:
    """One execute_action call; the response body."""
    body = {"project_id": project, "session_id": "s", "tool_name": tool_name, "tool_args": tool_args}
    response = client.post("/api/agent/execute_action", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result
