"""The one settings model; every field is read from an env var prefixed REACTSTEP_."""

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

    data_dir: Path = Field(
        Path("./.reactstep"),
        description="Where embedded data lives: the local object store, the embedded vector store, the "
        "ONNX model cache, and the note a running `reactstep serve` leaves for the CLI.",
    )
    host: str = Field("127.0.0.1", description="Address `reactstep serve` binds to.")
    port: int = Field(8000, description="Port `reactstep serve` listens on.")

    llm_model: str = Field("openai/gpt-4o-mini", description="Default litellm model name.")
    llm_api_base: str | None = Field(
        None, description="Default API base URL for the LLM (an OpenAI-compatible server)."
    )
    llm_api_key: SecretStr | None = Field(None, description="Default LLM key when none is sent.")
    llm_temperature: float = Field(0.0, description="Default sampling temperature.")
    llm_max_tokens: int = Field(1024, description="Default cap on tokens the model may generate.")
    llm_timeout_s: float = Field(60.0, description="Deadline for one LLM call, in seconds.")
    llm_api_base_allowlist: list[str] = Field(
        default_factory=list,
        description="Origins a request's llm_config.api_base may name, as `scheme://host:port`; host `*` "
        "or `*.domain`, port `*` for any port.",
    )
    llm_allowed_providers: list[str] = Field(
        default_factory=lambda: list(DEFAULT_PROVIDERS),
        description="litellm providers a request's model may name (llm_config and embedding_model_config).",
    )
    llm_max_tokens_cap: int = Field(32_768, description="Largest llm_config.max_tokens a request may ask.")
    llm_max_reply_chars: int = Field(
        100_000, le=200_000, description="Longer model replies are cut to this length (history's limit)."
    )
    llm_tool_calling: Literal["text", "native", "auto"] = Field(
        "text", description="Default tool calling: the text Action protocol, native tool calls, or auto."
    )
    llm_deadline_s: float = Field(60.0, description="Deadline for one step's LLM work, retries included.")
    llm_max_retries: int = Field(
        3,
        description="Retries of a rate-limited, failing or timed-out LLM call (delays: the provider's "
        "Retry-After, else the backoff below).",
    )
    llm_retry_base_s: float = Field(0.5, description="First retry delay; it doubles per retry, with jitter.")
    llm_retry_max_s: float = Field(8.0, description="Longest delay between two retries.")
    llm_default_context_window: int = Field(
        8192, description="Context window, in tokens, of models litellm does not know."
    )
    max_observation_chars: int = Field(
        20_000, description="Longer observations reach the model as head + tail."
    )
    loop_repeats: int = Field(
        3, description="Same action + same observation this often: a warning, then `loop_detected`."
    )

    client_api_key: SecretStr | None = Field(
        None, description="Service key the reference client (ask, replay, index --server) sends."
    )
    storage_backend: Literal["local", "s3"] = Field("local", description="Object store kind.")
    s3_bucket: str = Field("reactstep", description="Bucket holding project files.")
    s3_prefix: str = Field("projects", description="Key prefix above `<project_id>/<path>`.")
    s3_endpoint_url: str | None = Field(None, description="S3-compatible endpoint (R2, MinIO).")
    s3_region: str = Field("auto", description="Region name; R2 uses 'auto'.")
    s3_access_key_id: SecretStr | None = Field(
        None, description="S3 access key id (unset: boto3's own credential chain)."
    )
    s3_secret_access_key: SecretStr | None = Field(None, description="S3 secret access key.")
    s3_timeout_s: float = Field(10.0, description="Connect and read timeout for S3 calls.")
    s3_max_attempts: int = Field(3, description="Attempts per S3 call, retries included (botocore).")

    vector_backend: Literal["embedded", "qdrant"] = Field(
        "embedded", description="Qdrant's engine in-process (embedded) or a Qdrant server by URL."
    )
    qdrant_url: str | None = Field(None, description="Qdrant server or cluster URL (vector_backend=qdrant).")
    qdrant_api_key: SecretStr | None = Field(None, description="API key for the Qdrant server.")
    qdrant_timeout_s: float = Field(10.0, description="Deadline for one Qdrant call, in seconds.")
    vector_optimize_after: int = Field(
        10_000,
        ge=0,
        description=(
            "Embedded store: optimize a collection (int8 copies of its dense vectors, in a child process) "
            "once this many points were written to it and writes paused for 2 s; 0 never does."
        ),
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
    embedding_threads: int = Field(0, description="CPU threads for the local embedder; 0 means all cores.")
    search_mode: Literal["hybrid", "dense", "lexical"] = Field(
        "hybrid", description="Which retrieval code_search runs; dense and lexical exist for benchmarks."
    )
    search_dense_weight: float = Field(1.0, description="Weight of the dense ranking in the fused score.")
    search_lexical_weight: float = Field(
        0.7, description="Weight of the lexical ranking in the fused score (bench/fusion_sweep.py)."
    )
    search_name_weight: float = Field(
        0.5, description="Weight of the symbol-name ranking in the fused score (hybrid mode; 0 turns it off)."
    )
    code_search_max_results: int = Field(10, description="Hits code_search returns when not asked.")
    code_search_max_chars: int = Field(12_000, description="Size budget of one code_search observation.")
    index_max_file_bytes: int = Field(1_000_000, description="Larger files are not indexed.")
    index_abandoned_after_s: float = Field(
        30.0,
        gt=0,
        description="An index run silent this long died with its server; the next look restarts it.",
    )
    project_overview_max_chars: int = Field(
        8_000, description="Budget of the project overview in the system prompt (about 2,000 tokens)."
    )

    read_file_max_lines: int = Field(500, description="Lines read_file returns before cutting.")
    read_file_max_bytes: int = Field(50_000, description="Bytes read_file returns before cutting.")
    list_files_max_entries: int = Field(1_000, description="Entries list_files returns over all pages.")
    list_files_page_size: int = Field(100, description="Entries per list_files page.")
    grep_max_file_bytes: int = Field(1_000_000, description="Larger files are skipped by grep.")
    write_max_bytes: int = Field(1_000_000, description="Largest file the write tools change or create.")
    approval_secret: SecretStr | None = Field(
        None,
        description="Key signing approval tokens; every replica needs the same one. Unset: a random "
        "key per process, so tokens do not survive a restart or cross replicas.",
    )
    approval_ttl_s: int = Field(600, ge=0, description="Seconds an approval token stays valid.")
    upload_max_file_bytes: int = Field(1_000_000, description="Larger files are not uploaded.")
    file_max_bytes: int = Field(
        10_000_000, description="Largest file PUT /api/projects/{id}/files/{path} stores (413 above)."
    )
    sync_max_files: int = Field(100_000, description="Most paths one sync manifest may list (422 above).")
    sync_max_body_bytes: int = Field(16_000_000, description="Largest sync request body (413 above).")
    version_retention_days: float = Field(
        30.0, ge=0, description="Days a replaced file version stays readable (a path's last 100 always are)."
    )
    max_body_bytes: int = Field(1_000_000, description="Largest request body accepted.")
    max_history_items: int = Field(200, description="Longest conversation_history accepted.")
    max_json_depth: int = Field(32, description="Deepest nesting of arrays and objects in a body.")
    api_keys: list[str] = Field(
        default_factory=list,
        description="Service API keys as `sha256:<hex of the key>:<project glob>[,<glob>...]` (`*` is every "
        "project; `reactstep hash-key` makes one); none configured is dev mode, served on loopback only.",
    )
    max_concurrent_requests: int = Field(
        64, ge=1, description="POST, PUT and DELETE requests at work at once."
    )
    max_queue: int = Field(128, ge=0, description="POST requests waiting for a slot; more get 503.")
    queue_timeout_s: float = Field(10.0, description="Longest wait for a slot before 503 overloaded.")
    body_timeout_s: float = Field(
        30.0,
        gt=0,
        description="Longest a client may take to send a body (408 after); it holds no slot meanwhile.",
    )
    max_reading_bodies: int = Field(
        256, ge=1, description="Request bodies read at once, before they take a slot; more get 503."
    )
    overload_retry_after_s: int = Field(1, description="Retry-After, in seconds, sent with 503 overloaded.")
    readiness_timeout_s: float = Field(2.0, description="Deadline of each /readyz probe, in seconds.")
    debug_prompt: bool = Field(False, description="Return the rendered prompt in react_step responses.")
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

    mcp_json_response: bool = Field(
        True,
        description="Answer each MCP POST with one JSON body (true) or a Server-Sent Events stream (false).",
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
