"""Whether a model can be called with what the server holds: an endpoint, a key, or the provider's key
in the environment. `/readyz` reports the default model `unconfigured` when none of them is there, and
`reactstep ask` says so before any call."""

from reactstep.service.llm.gateway import missing_provider_keys, provider_of
from reactstep.service.settings import Settings

EXAMPLE = "REACTSTEP_LLM_MODEL=openai/my-model REACTSTEP_LLM_API_BASE=http://127.0.0.1:8080/v1"


def llm_problem(settings: Settings, model: str | None = None) -> str | None:
    """Why `model` (the default model when None) cannot be called with the server's settings, or None."""
    model = model or settings.llm_model
    if settings.llm_api_base:
        return None  # an OpenAI-compatible endpoint; it may want no key at all
    same_provider = provider_of(model) == provider_of(settings.llm_model)
    if settings.llm_api_key is not None and same_provider:
        return None
    missing = missing_provider_keys(model)
    if not missing:
        return None
    keys = " or ".join(["REACTSTEP_LLM_API_KEY", *missing] if same_provider else missing)
    return (
        f"no LLM is configured for {model}: set REACTSTEP_LLM_MODEL and REACTSTEP_LLM_API_BASE for an "
        f"OpenAI-compatible server (e.g. {EXAMPLE}), or {keys} for the hosted model"
    )
