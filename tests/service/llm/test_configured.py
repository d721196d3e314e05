"""Whether a model can be called with what the server holds: an endpoint, its key, or the provider's key
in the environment (litellm's own table of which variable each provider reads)."""

import pytest

from reactstep.service.llm.configured import llm_problem
from reactstep.service.settings import Settings

HOW = (
    "set REACTSTEP_LLM_MODEL and REACTSTEP_LLM_API_BASE for an OpenAI-compatible server (e.g. "
    "REACTSTEP_LLM_MODEL=openai/my-model REACTSTEP_LLM_API_BASE=http://127.0.0.1:8080/v1), or "
)


@pytest.fixture(autouse=True)
def no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_nothing_configured_names_every_variable_that_would_do() -> None:
    assert llm_problem(Settings()) == (
        f"no LLM is configured for openai/gpt-4o-mini: {HOW}REACTSTEP_LLM_API_KEY or OPENAI_API_KEY for the "
        "hosted model"
    )


@pytest.mark.parametrize(
    "settings",
    [
        Settings(llm_api_base="http://127.0.0.1:8080/v1"),
        Settings(llm_api_key="sk-server"),
        Settings(llm_model="hosted_vllm/my-model"),
    ],
    ids=["an endpoint", "the server's key", "a provider that needs no key"],
)
def test_configured(settings: Settings) -> None:
    assert llm_problem(settings) is None


def test_the_provider_key_in_the_environment_is_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert llm_problem(Settings()) is None


def test_the_server_key_is_only_for_the_default_models_provider() -> None:
    assert llm_problem(Settings(llm_api_key="sk-openai"), "anthropic/claude-3-5-sonnet-latest") == (
        f"no LLM is configured for anthropic/claude-3-5-sonnet-latest: {HOW}ANTHROPIC_API_KEY for the "
        "hosted model"
    )
