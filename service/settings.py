"""The one settings model: every field read from an env var prefixed REACTSTEP_ (an invalid one is
told as one line by setting_problems.py)."""

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# An origin as a browser sends it: scheme://host[:port], no path; "*" is any origin.
ORIGIN = re.compile(r"\*|[a-z][a-z0-9+.-]*://[^/\s?#]+")

# Hosted providers a request may name by default; each reads only the key the request sends.
# Providers that reach the server's own network or cloud credentials (ollama, bedrock, vertex_ai...)
# must be added by the operator.
DEFAULT_PROVIDERS = (
    "openai",
    "anthropic",
    "gemini",
    "mistral",
    "groq",
    "deepseek",
    "openrouter",
    "together_ai",
    "fireworks_ai",
    "cohere",
    "xai",
)


class Settings(BaseSettings):
    """Server configuration, read once at start-up."""

    model_config = SettingsConfigDict(env_prefix="REACTSTEP_", extra="ignore")

    # Serving
    data_dir: Path = Field(
        Path("./.reactstep"),
        description="Where embedded data lives: the local object store, the embedded vector store, the "
        "ONNX model cache, and the note a running `reactstep serve` leaves for the CLI.",
    )
    host: str = Field(
        "127.0.0.1",
        description="Address `reactstep serve` binds to; loopback, so nothing is exposed until you choose.",
    )
    port: int = Field(8000, description="Port `reactstep serve` listens on.")

    # The model
    llm_model: str = Field(
        "openai/gpt-4o-mini",
        description="Default litellm model name; a request's llm_config.model overrides it.",
    )
    llm_api_base: str | None = Field(
        None,
        description="Default API base URL for the LLM (an OpenAI-compatible server: llama.cpp, vLLM ...).",
    )
    llm_api_key: SecretStr | None = Field(
        None, description="Default LLM key when a request sends none; unset, each request brings its own."
    )
    llm_timeout_s: float | None = Field(
        None,
        gt=0,
        description="The longest one LLM call may take, in seconds: the setting to raise for a slow model. "
        "Unset: 60, or 300 when the model server is on this machine (a loopback api_base; a CPU model's "
        "first step can take minutes). A step's LLM work, retries included, may take as long.",
    )
    llm_api_base_allowlist: list[str] = Field(
        default_factory=list,
        description="Origins a request's llm_config.api_base may name, as `scheme://host:port`; host `*` "
        "or `*.domain`, port `*` for any port. Empty: no request points the server at another host.",
    )
    llm_allowed_providers: list[str] = Field(
        default_factory=lambda: list(DEFAULT_PROVIDERS),
        description="litellm providers a request's model may name (llm_config and embedding_model_config); "
        "ones that use the server's own network or cloud credentials must be added by the operator.",
    )
    llm_tool_calling: Literal["text", "native", "auto"] = Field(
        "text",
        description="Default tool calling: the text Action protocol (any model), native tool calls, or auto.",
    )
    llm_deadline_s: float | None = Field(
        None,
        gt=0,
        description="The longest one step's LLM work may take, retries included, so a step always answers. "
        "Unset: the LLM timeout, and at least 60 s so that retries fit.",
    )
    llm_max_retries: int = Field(
        3,
        description="Retries of a rate-limited, failing or timed-out LLM call (delays: the provider's "
        "Retry-After, else llm_retry_base_s doubling up to 8 s, with jitter).",
    )
    llm_retry_base_s: float = Field(
        0.5, ge=0, description="First retry delay; most rate limits clear within a second or two."
    )
    llm_max_tokens_cap: int = Field(
        32_768,
        ge=1,
        description="Largest llm_config.max_tokens a request may ask (422 above): lower it to bound what one "
        "reply costs on the server's key.",
    )
    llm_default_context_window: int = Field(
        8192,
        description="Context window, in tokens, of models litellm does not know (set a local model's own).",
    )

    # Storage
    storage_backend: Literal["local", "s3"] = Field(
        "local", description="Object store: a directory under data_dir, or S3/R2/MinIO that replicas share."
    )
    s3_bucket: str = Field("reactstep", description="Bucket holding project files.")
    s3_prefix: str = Field(
        "projects", description="Key prefix above `<project_id>/<path>`, so deployments can share a bucket."
    )
    s3_endpoint_url: str | None = Field(None, description="S3-compatible endpoint (R2, MinIO); unset: AWS.")
    s3_region: str = Field("auto", description="Region name; R2 uses 'auto'.")
    s3_access_key_id: SecretStr | None = Field(
        None, description="S3 access key id (unset: boto3's own credential chain)."
    )
    s3_secret_access_key: SecretStr | None = Field(None, description="S3 secret access key.")
    s3_timeout_s: float = Field(
        10.0,
        description="Connect and read timeout of one S3 call: a stalled store fails a request, not holds it.",
    )

    # Vectors and embeddings
    vector_backend: Literal["embedded", "qdrant"] = Field(
        "embedded",
        description="Qdrant's engine in-process (embedded: one process) or a Qdrant server (replicas).",
    )
    qdrant_url: str | None = Field(None, description="Qdrant server or cluster URL (vector_backend=qdrant).")
    qdrant_api_key: SecretStr | None = Field(None, description="API key for the Qdrant server.")
    qdrant_timeout_s: float = Field(
        10.0, description="Deadline for one Qdrant call: a stalled server fails the request, not holds it."
    )
    embedding_model: str = Field(
        "local/all-MiniLM-L6-v2-code-int8",
        description=(
            "Default embedding model: local/all-MiniLM-L6-v2-code-int8 (tuned for code search, int8), "
            "local/all-MiniLM-L6-v2-code (its fp32), local/all-MiniLM-L6-v2-int8 and local/all-MiniLM-L6-v2 "
            "(stock), local/paraphrase-MiniLM-L3-v2 (the l3 extra) or a litellm name."
        ),
    )
    embedding_api_base: str | None = Field(
        None, description="Default API base for a litellm embedding model."
    )
    embedding_api_key: SecretStr | None = Field(
        None, description="Default key for a litellm embedding model."
    )
    embedding_threads: int = Field(
        0,
        description="CPU threads for the local embedder; 0: all cores (set it when replicas share one host).",
    )

    # Approvals, files and versions
    approval_secret: SecretStr | None = Field(
        None,
        description="Key signing approval tokens; every replica needs the same one. Unset: a random "
        "key per process, so tokens do not survive a restart or cross replicas.",
    )
    approval_ttl_s: int = Field(
        600,
        ge=0,
        description="Seconds an approval token stays valid: time to read a diff; an older one is refused.",
    )
    file_max_bytes: int = Field(
        1_000_000,
        gt=0,
        description="The one limit on a file's size: PUT answers 413 above it, the write tools refuse to "
        "make a larger one, grep and the index pass one over. 1 MB holds any hand-written source file; "
        "larger ones are generated or data.",
    )
    index_abandoned_after_s: float = Field(
        30.0,
        gt=0,
        description="An index run silent this long died with its server; the next look restarts it. Long "
        "enough that a busy server's heartbeat (every second) is never taken for a dead one.",
    )
    version_retention_days: float = Field(
        30.0,
        ge=0,
        description="Days a replaced file version stays readable (a path's last 100 always are): how far "
        "back a lost change can be recovered, against the storage it costs.",
    )
    # Background steps and resumable streams
    step_results_ttl_s: float = Field(
        3600.0,
        gt=0,
        description="Seconds a finished background step's answer and events stay in the object store, for "
        "GET /api/agent/steps/{id} and a resumed stream on any replica; then 404. An hour covers a laptop "
        "that lost its network; each kept step costs its events' bytes.",
    )
    # Requests: bodies, keys, admission
    max_body_bytes: int = Field(
        16_000_000,
        gt=0,
        description="Largest JSON request body (413 above). Apart from file_max_bytes because a body is not "
        "a file: a sync manifest of 100,000 paths or a long conversation_history is several MB.",
    )
    api_keys: list[str] = Field(
        default_factory=list,
        description="Service API keys as `sha256:<hex of the key>:<project glob>[,<glob>...][:<limits>]` "
        "(`*` is every project; limits: docs/budgets.md; `reactstep hash-key` makes one); none configured "
        "is dev mode, served on loopback only.",
    )
    max_concurrent_requests: int = Field(
        64,
        ge=1,
        description="POST, PUT and DELETE requests at work at once: what the machine and the LLM bear.",
    )
    max_queue: int = Field(
        128,
        ge=0,
        description="POST requests waiting for a slot; more get 503 at once, not a wait without bound.",
    )
    body_timeout_s: float = Field(
        30.0,
        gt=0,
        description="Longest a client may take to send a body (408 after); it holds no slot meanwhile.",
    )
    # What the server shows: prompts, logs, browsers
    debug_prompt: bool = Field(
        False,
        description="Return the rendered prompt in react_step responses, to see exactly what the model read.",
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        "info",
        description="Level of the service's own log lines and uvicorn's (info: one line per request); "
        "other libraries log warnings and worse.",
    )
    log_format: Literal["auto", "json", "text"] = Field(
        "auto", description="Lines as JSON objects or key=value text; auto: text on a terminal, else json."
    )
    cors_origins: list[str] = Field(
        default_factory=list,
        description="Browser origins (scheme://host[:port]) that may call the API and /mcp; none: no CORS "
        "headers, and /mcp refuses any request with an Origin (403). '*' allows any origin; credentials "
        "are never allowed, the key travels in Authorization.",
    )

    @field_validator("log_level", "log_format", mode="before")
    @classmethod
    def _lower_case(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, origins: list[str]) -> list[str]:
        for origin in origins:
            if not ORIGIN.fullmatch(origin):
                raise ValueError("each origin is scheme://host[:port] with no path or trailing slash, or *")
        return origins

    @property
    def storage_root(self) -> Path:
        """The local object store's directory."""
        return self.data_dir / "objects"

    @property
    def vectors_root(self) -> Path:
        """The embedded vector store's directory."""
        return self.data_dir / "vectors"

    @property
    def models_root(self) -> Path:
        """Where derived model files (such as an ONNX export) are cached."""
        return self.data_dir / "models"
