"""Pick the embedder for a request: the server's own, or a litellm model the request names."""

from service.errors import ValidationFailed
from service.llm_config import check_api_base
from service.remote_embedder import LiteLLMEmbedder
from service.schemas import EmbeddingModelConfig, UserApiKeys
from service.settings import Settings
from tools.embeddings import Embedder


def resolve_embedder(
    config: EmbeddingModelConfig | None, keys: UserApiKeys, settings: Settings, default: Embedder
) -> Embedder:
    """The default embedder unless the request names another model (its api_base allowlisted)."""
    model = (config.model if config else None) or settings.embedding_model
    if model == default.model_name and not (config and config.api_base):
        return default
    if model.startswith("local/"):
        known = default.model_name
        raise ValidationFailed(f"unknown local embedding model {model!r}; this server has {known}")
    api_base = settings.embedding_api_base
    if config and config.api_base:
        check_api_base(config.api_base, settings.llm_api_base_allowlist)
        api_base = config.api_base
    key = keys.embeddingKey or settings.embedding_api_key
    return LiteLLMEmbedder(model, api_base=api_base, api_key=key, timeout_s=settings.llm_timeout_s)
