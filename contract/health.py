"""GET /healthz, /readyz and /version: is the process up, are its back-ends, what runs."""

from typing import Annotated, Literal

from pydantic import ConfigDict, StringConstraints

from reactstep.contract.common import WireModel


class Health(WireModel):
    """GET /healthz."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["ok"]


class Version(WireModel):
    """GET /version."""

    model_config = ConfigDict(extra="forbid")

    version: str
    """The installed reactstep package's version."""
    commit: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{40}$")] | None
    """The git commit the code runs from; null when unknown."""
    api_version: str
    """This contract's version (info.version)."""
    embedding_model: str
    """The server's default embedding model."""


class Readiness(WireModel):
    """GET /readyz."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["ready", "unavailable", "warming"]
    checks: dict[str, str]
    """Back-end name -> "ok" or "unavailable: <why>". `storage` is always there; `vectors` with a Qdrant
    server; `llm` always: "ok" (its endpoint answered), "configured" (a hosted model with its key; not
    probed), "unconfigured" (no endpoint and no key: every react_step must then bring its own llm_config
    and key) or "warming" (that verdict is still being made, in the first seconds after the first
    /readyz). `embeddings` with a remote embedding endpoint.
    """
