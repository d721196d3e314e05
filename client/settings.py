"""The client's settings, read from the environment in this one place (the server's are its own).

REACTSTEP_SERVER                  the server to use when --server is not given
REACTSTEP_CLIENT_API_KEY          the service key the commands send (Authorization: Bearer)
REACTSTEP_DATA_DIR                where a `reactstep serve` on this machine leaves its note
                                  (default ./.reactstep, the server's default too)
REACTSTEP_UPLOAD_MAX_FILE_BYTES   larger files are not uploaded by sync (default 1,000,000)
"""

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DATA_DIR = Path("./.reactstep")
DEFAULT_UPLOAD_MAX_FILE_BYTES = 1_000_000


class ConfigError(ValueError):
    """A client setting that cannot be used; its message names the variable."""


@dataclass(frozen=True)
class ClientConfig:
    """What the commands read from the environment, once."""

    server: str | None = None
    api_key: str | None = None
    data_dir: Path = DEFAULT_DATA_DIR
    upload_max_file_bytes: int = DEFAULT_UPLOAD_MAX_FILE_BYTES

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "ClientConfig":
        """The settings the environment gives; ConfigError when one cannot be read."""
        env = os.environ if env is None else env
        return cls(
            server=env.get("REACTSTEP_SERVER") or None,
            api_key=env.get("REACTSTEP_CLIENT_API_KEY") or None,
            data_dir=Path(env.get("REACTSTEP_DATA_DIR") or DEFAULT_DATA_DIR),
            upload_max_file_bytes=_positive_int(
                env, "REACTSTEP_UPLOAD_MAX_FILE_BYTES", DEFAULT_UPLOAD_MAX_FILE_BYTES
            ),
        )


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    text = env.get(name)
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"{name}: expected a whole number of bytes, got {text!r}") from None
    if value <= 0:
        raise ConfigError(f"{name}: expected a positive number, got {value}")
    return value
