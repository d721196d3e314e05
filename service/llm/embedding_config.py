"""Pick the embedder for a request: the server's own, or a litellm model the request names."""

from reactstep.contract.common import EmbeddingModelConfig, UserApiKeys
from reactstep.service.errors import ValidationFailed
from reactstep.service.llm.config import llm_timeout_s, server_key
from reactstep.service.llm.net_guard import check_api_base, check_model
from reactstep.service.llm.remote_embedder import LiteLLMEmbedder
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import Embedder


def resolve_embedder(
    config: EmbeddingModelConfig | None, keys: UserApiKeys, settings: Settings, default: Embedder
) -> Embedder:
    """The default embedder unless the request names another model (its api_base allowlisted)."""
    model = (config.model if config else None) or settings.embedding_model
    request_base = config.api_base if config else None
    if model == default.model_name and (not request_base or model.startswith("local/")):
        return default  # a local model calls no api_base: one sent changes nothing
    if model.startswith("local/"):
        known = default.model_name
        raise ValidationFailed(f"unknown local embedding model {model!r}; this server has {known}")
    if config and (config.model or request_base):
        field = "embedding_model_config.model"
        check_model(model, settings.llm_allowed_providers, field, request_base is not None)
    api_base, api_base_setting = settings.embedding_api_base, "REACTSTEP_EMBEDDING_API_BASE"
    if request_base:
        api_base_setting = "embedding_model_config.api_base"
        check_api_base(request_base, settings.llm_api_base_allowlist, api_base_setting)
        api_base = request_base
    fallback = server_key(settings.embedding_api_key, model, settings.embedding_model, request_base)
    return LiteLLMEmbedder(
        model,
        api_base=api_base,
        api_key=keys.embeddingKey or fallback,
        timeout_s=llm_timeout_s(settings, api_base),
        api_base_setting=api_base_setting,
    )
