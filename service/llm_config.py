"""Resolve a request's llm_config and keys against the server's defaults and allowlist."""

from urllib.parse import urlsplit

from service.errors import ForbiddenApiBase
from service.llm import LLMRequest
from service.schemas import LLMConfig, UserApiKeys
from service.settings import Settings

# The text protocol's turn ends where the model would write an observation itself.
TEXT_STOP = ("\nObservation:",)


def resolve_llm_request(config: LLMConfig, keys: UserApiKeys, settings: Settings) -> LLMRequest:
    """The call to make, messages still empty: request overrides first, then server defaults."""
    api_base = settings.llm_api_base
    if config.api_base is not None:
        check_api_base(config.api_base, settings.llm_api_base_allowlist)
        api_base = config.api_base
    return LLMRequest(
        model=config.model or settings.llm_model,
        messages=[],
        temperature=settings.llm_temperature if config.temperature is None else config.temperature,
        max_tokens=config.max_tokens or settings.llm_max_tokens,
        timeout_s=settings.llm_timeout_s,
        api_base=api_base,
        api_key=keys.llmKey or settings.llm_api_key,
        stop=TEXT_STOP,
    )


def check_api_base(api_base: str, allowlist: list[str]) -> None:
    """Refuse an api_base whose scheme, host and port are not on the allowlist."""
    origin = _origin(api_base)
    if origin is None or not any(_matches(origin, entry) for entry in allowlist):
        raise ForbiddenApiBase(
            "llm_config.api_base is not on this server's allowlist (REACTSTEP_LLM_API_BASE_ALLOWLIST)"
        )


def _origin(url: str) -> tuple[str, str, str] | None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username:
        return None
    default_port = 443 if parts.scheme == "https" else 80
    return parts.scheme, parts.hostname.lower(), str(port or default_port)


def _matches(origin: tuple[str, str, str], entry: str) -> bool:
    wildcard_port = entry.endswith(":*")
    allowed = _origin(entry[:-2] if wildcard_port else entry)
    if allowed is None:
        return False
    if wildcard_port:
        return origin[:2] == allowed[:2]
    return origin == allowed
