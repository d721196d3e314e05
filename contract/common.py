"""What several bodies share: strict request models, ids, lent keys, the embedding model."""

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SecretStr, StringConstraints

PROJECT_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
ProjectId = Annotated[str, StringConstraints(pattern=PROJECT_ID_PATTERN)]
SessionId = Annotated[str, StringConstraints(min_length=1, max_length=128)]
MAX_ARGS = 64  # keys of tool_args and of a client tool's parameters schema


def _integral(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


# An integer as JSON Schema has it: 5.0 is the integer 5 (5.5 and "5" are still refused).
Integer = Annotated[int, BeforeValidator(_integral)]


class StrictModel(BaseModel):
    """A request model: unknown keys and wrong types are errors, not silently dropped or coerced."""

    model_config = ConfigDict(extra="forbid", strict=True)


class UserApiKeys(StrictModel):
    """Keys the client lends for this request only; never logged or echoed."""

    llmKey: SecretStr | None = Field(None, max_length=500)
    embeddingKey: SecretStr | None = Field(None, max_length=500)


class EmbeddingModelConfig(StrictModel):
    """Which embedding model code_search uses (seeds/001)."""

    model: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    api_base: Annotated[str, StringConstraints(max_length=500)] | None = None
