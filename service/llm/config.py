"""Resolve a request's llm_config and keys against the server's defaults and allowlists (net_guard)."""

from pydantic import SecretStr

from reactstep.contract.common import UserApiKeys
from reactstep.contract.llm_config import LLMConfig
from reactstep.service.limits import check_max_tokens
from reactstep.service.llm.gateway import model_facts, provider_of
from reactstep.service.llm.net_guard import check_api_base, check_provider, is_loopback_url
from reactstep.service.llm.protocol import LLMRequest, ModelFacts
from reactstep.service.settings import Settings

# The text protocol's turn ends where the model would write an observation itself.
TEXT_STOP = ("\nObservation:",)
DEFAULT_TEMPERATURE = 0.0  # the same step twice proposes the same action; a request may ask otherwise
DEFAULT_MAX_TOKENS = 1024  # a thought and one action; a request asks for more in llm_config.max_tokens
HOSTED_TIMEOUT_S = 60.0  # a hosted model answers a step within seconds; a minute is a fault
# A model on this machine's CPU: SmolLM2-135M's cold first step took 57-147 s on 2 cores.
LOCAL_TIMEOUT_S = 300.0


def resolve_llm_request(
    config: LLMConfig, keys: UserApiKeys, settings: Settings
) -> tuple[LLMRequest, ModelFacts]:
    """The call to make, messages still empty (request overrides first, then server defaults), and
    what the step needs to know about its model, asked once."""
    facts = model_facts(config.model or settings.llm_model)
    model = facts.model
    if config.model is not None or config.api_base is not None:
        with_base = config.api_base is not None
        check_provider(facts.provider, settings.llm_allowed_providers, "llm_config.model", with_base)
    check_max_tokens(config.max_tokens, settings.llm_max_tokens_cap)
    api_base = settings.llm_api_base
    if config.api_base is not None:
        check_api_base(config.api_base, settings.llm_api_base_allowlist)
        api_base = config.api_base
    key = provider_key(settings.llm_api_key, facts.provider, settings.llm_model, config.api_base)
    request = LLMRequest(
        model=model,
        messages=[],
        temperature=DEFAULT_TEMPERATURE if config.temperature is None else config.temperature,
        max_tokens=config.max_tokens or DEFAULT_MAX_TOKENS,
        timeout_s=llm_timeout_s(settings, api_base),
        api_base=api_base,
        api_key=keys.llmKey or key,
        stop=TEXT_STOP,
    )
    return request, facts


def llm_timeout_s(settings: Settings, api_base: str | None) -> float:
    """REACTSTEP_LLM_TIMEOUT_S, else the default for where the model runs: longer on this machine."""
    if settings.llm_timeout_s is not None:
        return settings.llm_timeout_s
    return LOCAL_TIMEOUT_S if api_base is not None and is_loopback_url(api_base) else HOSTED_TIMEOUT_S


def server_key(
    key: SecretStr | None, model: str, default_model: str, request_api_base: str | None
) -> SecretStr | None:
    """The server's own key, only for its own endpoint: never sent to a request's api_base or to
    another provider than the default model's."""
    return provider_key(key, provider_of(model), default_model, request_api_base)


def provider_key(
    key: SecretStr | None, provider: str | None, default_model: str, request_api_base: str | None
) -> SecretStr | None:
    """server_key for a model whose provider is already known."""
    if key is None or request_api_base is not None:
        return None
    return key if provider == provider_of(default_model) else None
