"""What several bodies share: strict request models, ids, lent keys, the embedding model."""

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SecretStr, StringConstraints

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
MAX_ARGS = 64  # keys of tool_args and of a client tool's parameters schema


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
    (scripts/openapi.py reads the fields' docstrings from this source)."""


class StrictModel(WireModel):
    """A request model: unknown keys and wrong types are errors, not silently dropped or coerced."""

    model_config = ConfigDict(extra="forbid", strict=True)


class UserApiKeys(StrictModel):
    """Keys lent for this request only; never logged, stored or echoed."""

    llmKey: SecretStr | None = Field(None, max_length=500)
    """The LLM provider key (default REACTSTEP_LLM_API_KEY)."""
    embeddingKey: SecretStr | None = Field(None, max_length=500)
    """The embedding provider key."""


class EmbeddingModelConfig(StrictModel):
    """Which embedding model code search uses (seeds/001)."""

    model: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    api_base: Annotated[str, StringConstraints(max_length=500)] | None = None
