"""The one settings model; every field is read from an env var prefixed REACTSTEP_."""

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Server configuration, read once at start-up."""

    model_config = SettingsConfigDict(env_prefix="REACTSTEP_", extra="ignore")

    data_dir: Path = Field(Path("./.reactstep"), description="Where embedded data lives.")
    host: str = Field("127.0.0.1", description="Address `reactstep serve` binds to.")
    port: int = Field(8000, description="Port `reactstep serve` listens on.")

    llm_model: str = Field("openai/gpt-4o-mini", description="Default litellm model name.")
    llm_api_base: str | None = Field(None, description="Default API base URL for the LLM.")
    llm_api_key: SecretStr | None = Field(None, description="Default LLM key when none is sent.")
    llm_temperature: float = Field(0.0, description="Default sampling temperature.")
    llm_max_tokens: int = Field(1024, description="Default cap on tokens the model may generate.")
    llm_timeout_s: float = Field(60.0, description="Deadline for one LLM call, in seconds.")
    llm_api_base_allowlist: list[str] = Field(
        default_factory=list,
        description="Origins a request's llm_config.api_base may name, as scheme://host:port; "
        "a port of * allows any port.",
    )

    storage_backend: Literal["local", "s3"] = Field("local", description="Object store kind.")
    s3_bucket: str = Field("reactstep", description="Bucket holding project files.")
    s3_prefix: str = Field("projects", description="Key prefix above <project_id>/.")
    s3_endpoint_url: str | None = Field(None, description="S3-compatible endpoint (R2, MinIO).")
    s3_region: str = Field("auto", description="Region name; R2 uses 'auto'.")
    s3_access_key_id: SecretStr | None = Field(None, description="S3 access key id.")
    s3_secret_access_key: SecretStr | None = Field(None, description="S3 secret access key.")
    s3_timeout_s: float = Field(10.0, description="Connect and read timeout for S3 calls.")

    read_file_max_lines: int = Field(500, description="Lines read_file returns before cutting.")
    read_file_max_bytes: int = Field(50_000, description="Bytes read_file returns before cutting.")
    list_files_max_entries: int = Field(200, description="Entries list_files returns.")
    upload_max_file_bytes: int = Field(1_000_000, description="Larger files are not uploaded.")
    max_body_bytes: int = Field(1_000_000, description="Largest request body accepted.")
    max_history_items: int = Field(200, description="Longest conversation_history accepted.")
    debug_prompt: bool = Field(False, description="Return the rendered prompt in react_step responses.")

    @property
    def storage_root(self) -> Path:
        """The local object store's directory."""
        return self.data_dir / "objects"
