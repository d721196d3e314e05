"""remember_request_secrets finds every SecretStr of a request body, however deep, through lists and
models that nest themselves, while it walks only the fields whose type can hold one."""

import contextvars
from typing import Any

from pydantic import BaseModel, SecretStr

from reactstep.service.redaction import _fields_that_may_hold_secrets, known_secrets, remember_request_secrets


class Keys(BaseModel):
    key: SecretStr | None = None


class Config(BaseModel):
    model: str = "m"
    options: dict[str, Any] = {}


class Middle(BaseModel):
    keys: list[Keys] = []
    config: Config = Config()


class Tree(BaseModel):
    children: list["Tree"] = []
    leaf: SecretStr | None = None


class Pair(BaseModel):
    """Two models that nest each other; only one of them holds a secret itself."""

    other: "Other | None" = None


class Other(BaseModel):
    pair: Pair | None = None
    token: SecretStr | None = None


class Body(BaseModel):
    middle: Middle = Middle()
    tree: Tree | None = None
    pair: Pair | None = None
    config: Config = Config()
    loose: Any = None


def secrets_of(body: BaseModel) -> set[str]:
    def remembered() -> set[str]:
        remember_request_secrets(body)
        return set(known_secrets())

    before = contextvars.Context().run(known_secrets)
    return contextvars.Context().run(remembered) - set(before)


def test_deep_secrets_are_found() -> None:
    body = Body(
        middle=Middle(keys=[Keys(), Keys(key=SecretStr("sk-in-a-list-1"))]),
        tree=Tree(children=[Tree(), Tree(children=[Tree(leaf=SecretStr("sk-deep-leaf-2"))])]),
        pair=Pair(other=Other(pair=Pair(other=Other(token=SecretStr("sk-mutual-3"))))),
        loose=Keys(key=SecretStr("sk-in-any-4")),
    )
    assert secrets_of(body) == {"sk-in-a-list-1", "sk-deep-leaf-2", "sk-mutual-3", "sk-in-any-4"}


def test_fields_that_cannot_hold_a_secret_are_not_walked() -> None:
    assert _fields_that_may_hold_secrets(Body) == ("middle", "tree", "pair", "loose")
    assert _fields_that_may_hold_secrets(Middle) == ("keys",)
    assert _fields_that_may_hold_secrets(Config) == ()
    assert secrets_of(Body()) == set()
