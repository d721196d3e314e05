"""A remote embedding model's failures name the embedding model, where it was called and what to check,
never "the LLM provider": each answered by a real loopback server through litellm's embedding call."""

import pytest
from pydantic import SecretStr

from reactstep.service.errors import UpstreamError
from reactstep.service.llm.remote_embedder import LiteLLMEmbedder
from tests.service.llm.test_http_route import FixedAnswer, fixed  # noqa: F401 (the fixture)

MODEL = "openai/embedder"


@pytest.mark.parametrize(
    ("status", "body", "code", "message"),
    [
        (
            401,
            {"error": {"message": "bad key"}},
            "llm_auth_failed",
            "{where} refused the API key (HTTP 401); check user_api_keys.embeddingKey or "
            "REACTSTEP_EMBEDDING_API_KEY",
        ),
        (
            429,
            {"error": {"message": "slow down"}},
            "llm_rate_limited",
            "{where} is rate limiting requests (HTTP 429); retry later",
        ),
        (
            503,
            {"error": {"message": "loading model"}},
            "embedding_unavailable",
            "{where} is unavailable (HTTP 503): loading model; retry later",
        ),
        (
            404,
            {"error": {"message": "model 'embedder' not found"}},
            "llm_bad_response",
            "{where} rejected the call (HTTP 404): model 'embedder' not found",
        ),
        (200, {"object": "list"}, "llm_bad_response", "{where} returned no vectors"),
    ],
)
def test_embedding_provider_errors_name_the_embedding_model(
    fixed: FixedAnswer,  # noqa: F811 (the fixture)
    status: int,
    body: object,
    code: str,
    message: str,
) -> None:
    fixed.answer(status, body)
    embedder = LiteLLMEmbedder(MODEL, api_base=fixed.base_url, api_key=SecretStr("k"), timeout_s=5.0)
    with pytest.raises(UpstreamError) as raised:
        embedder.embed_query("main")
    where = f"the embedding model {MODEL} at {fixed.base_url}"
    assert (raised.value.code, str(raised.value)) == (code, message.format(where=where))
