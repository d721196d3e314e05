"""What several bodies share: strict request models, ids, paths (and the bytes a refused one names),
lent keys, the embedding model."""

import re
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    StringConstraints,
)
from pydantic_core import PydanticCustomError

PROJECT_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
ProjectId = Annotated[
    str,
    StringConstraints(pattern=PROJECT_ID_PATTERN),
    Field(
        description="The project whose files the tools read; letters, digits, '.', '_', '-'.",
        examples=["3f0c6a52-8d7e-4b8a-9a57-1c2f4e6d9b10"],
    ),
]
SessionId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=128),
    Field(
        description="The client's id for the loop; echoed back, never stored.",
        examples=["b7e14c9a-2f6d-4e0b-8c3a-5d9f1a7e2b64"],
    ),
]
# What a file path may hold, as the server's path rules accept it (tools/store/paths.py), but its
# Unicode NFC form and its parts' 255 bytes of UTF-8, which no pattern can say: not absolute ('/',
# '~', 'C:'), no '..' part, not the project root, no control character or backslash, each part at
# most 255 characters, and none of these once percent-decoded twice.
FILE_PATH_PATTERN = (
    r"^(?![/~]|%(?:25)?(?:2[Ff]|7[Ee]))"  # absolute
    r"(?!(?:%(?:25)?[0-9A-Fa-f]{2}|[\s\S])(?::|%(?:25)?3[Aa]))"  # a drive letter
    r"(?!(?:\.?/)*\.?$)"  # the project root
    r"(?![\s\S]*(?:^|/|%(?:25)?2[Ff])(?:\.|%(?:25)?2[Ee]){2}(?:/|%(?:25)?2[Ff]|$))"  # a '..' part
    r"(?![\s\S]*[^/]{256})"  # a part over 255 characters (the server counts 255 bytes of UTF-8)
    r"(?![\s\S]*%(?:25)?(?:[01][0-9A-Fa-f]|7[Ff]|5[Cc]))"  # a control character or '\', escaped
    r"[^\x00-\x1f\x7f\\]*$"
)
MAX_PATH_CHARS = 1024
FILE_PATH_SCHEMA: dict[str, Any] = {
    "type": "string",
    "maxLength": MAX_PATH_CHARS,
    "pattern": FILE_PATH_PATTERN,
}


def escaped_bytes(text: str) -> str:
    """The bytes a str of a path stands for, escaped: b'\\xff\\xfe.py' for the surrogate escapes of
    the bytes FF FE (how a URL's or a file system's non-UTF-8 name is decoded), the UTF-8 of a lone
    surrogate from a JSON escape otherwise."""
    try:
        return repr(text.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:
        return repr(text.encode("utf-8", "surrogatepass"))


MAX_ARGS = 64  # keys of tool_args and of a client tool's parameters schema


def at_most(limit: int) -> BeforeValidator:
    """A map's bound checked before its entries are (pydantic counts a list first, a map last): a map
    over it is refused as pydantic refuses a list, naming its size and the bound."""

    def check(value: Any) -> Any:
        if isinstance(value, dict) and len(value) > limit:
            raise PydanticCustomError(
                "too_long",
                "Dictionary should have at most {max_length} items, not {actual_length}",
                {"field_type": "Dictionary", "max_length": limit, "actual_length": len(value)},
            )
        return value

    return BeforeValidator(check)


def _integral(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


# An integer as JSON Schema has it: 5.0 is the integer 5 (5.5 and "5" are still refused).
Integer = Annotated[int, BeforeValidator(_integral)]


def nulls_left_out(schema: dict[str, Any]) -> None:
    """For a body whose None fields are left out of its JSON: such a field, when present, is not null."""
    required = set(schema.get("required", ()))
    for name, field in schema.get("properties", {}).items():
        if name in required or field.get("default", ...) is not None:
            continue
        del field["default"]
        if isinstance(kinds := field.get("type"), list):
            kinds = [kind for kind in kinds if kind != "null"]
            field["type"] = kinds[0] if len(kinds) == 1 else kinds
        if None in field.get("enum", ()):
            field["enum"] = [value for value in field["enum"] if value is not None]
        branches = [branch for branch in field.pop("anyOf", ()) if branch != {"type": "null"}]
        if len(branches) == 1:
            field.update(branches[0])
        elif branches:
            field["anyOf"] = branches


class WireModel(BaseModel):
    """A body of the HTTP contract: the docstrings of the class and its fields are the spec's descriptions
    (scripts/openapi.py reads the fields' docstrings from this source).

    Its validator is built when it first validates, not when the module is imported: a client that
    reads three of the contract's thirty-odd models pays for those three (the rules are the same).
    """

    model_config = ConfigDict(defer_build=True)


class StrictModel(WireModel):
    """A request model: unknown keys and wrong types are errors, not silently dropped or coerced."""

    model_config = ConfigDict(extra="forbid", strict=True)


HEADER_SAFE_PATTERN = r"^[\x20-\x7e]*$"  # compiled at its first use (re caches it), not at import


def _header_safe(key: SecretStr) -> SecretStr:
    """Refuse a key that no Authorization header can carry, before it is sent anywhere."""
    if not re.fullmatch(HEADER_SAFE_PATTERN, key.get_secret_value()):
        raise ValueError("a key holds printable ASCII only")
    return key


# A lent key: printable ASCII (what an Authorization header carries), so a control character, a
# newline above all, never reaches an HTTP client that would quote the key in its error.
LentKey = Annotated[
    SecretStr,
    Field(max_length=500, json_schema_extra={"pattern": HEADER_SAFE_PATTERN}),
    AfterValidator(_header_safe),
]


class UserApiKeys(StrictModel):
    """Keys lent for this request only; never logged, stored or echoed."""

    llmKey: LentKey | None = None
    """The LLM provider key (default REACTSTEP_LLM_API_KEY). Printable ASCII only (what an
    Authorization header carries): another character is 422 `validation_failed` before any call.
    """
    embeddingKey: LentKey | None = None
    """The embedding provider key. Printable ASCII only (what an Authorization header
    carries): another character is 422 `validation_failed` before any call.
    """


class EmbeddingModelConfig(StrictModel):
    """Which embedding model code search uses (seeds/001)."""

    model: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    api_base: Annotated[str, StringConstraints(max_length=500)] | None = None
