"""The client's settings: the environment, read once per command (cli/main.py) or fixture
(pytest_plugin.py) into ClientSettings, and nowhere else. The server's settings are its own; the client
installs without them.

REACTSTEP_SERVER                  the server to use when --server is not given
REACTSTEP_CLIENT_API_KEY          the service key the commands send (Authorization: Bearer)
REACTSTEP_DATA_DIR                where a `reactstep serve` on this machine leaves its note
                                  (default ./.reactstep, the server's default too)
REACTSTEP_UPLOAD_MAX_FILE_BYTES   larger files are not uploaded by sync (default 1,000,000)

An empty variable counts as unset.
"""

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError

DEFAULT_DATA_DIR = Path("./.reactstep")


class ConfigError(ValueError):
    """A client setting that cannot be used; its message names the variable."""


class ClientSettings(BaseModel):
    """What the commands take from the environment; each field read from the variable its alias names."""

    model_config = ConfigDict(frozen=True, validate_by_name=True, validate_by_alias=True)

    server: str | None = Field(None, validation_alias="REACTSTEP_SERVER")
    api_key: str | None = Field(None, validation_alias="REACTSTEP_CLIENT_API_KEY")
    data_dir: Path = Field(DEFAULT_DATA_DIR, validation_alias="REACTSTEP_DATA_DIR")
    upload_max_file_bytes: PositiveInt = Field(1_000_000, validation_alias="REACTSTEP_UPLOAD_MAX_FILE_BYTES")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "ClientSettings":
        """The settings the environment gives; ConfigError naming the variable when one cannot be read."""
        env = os.environ if env is None else env
        names = [str(field.validation_alias) for field in cls.model_fields.values()]
        try:
            return cls.model_validate({name: env[name] for name in names if env.get(name)})
        except ValidationError as exc:
            problems = exc.errors(include_input=False, include_url=False)
            raise ConfigError(
                "\n".join(f"{problem['loc'][0]}: {problem['msg']}" for problem in problems)
            ) from None
