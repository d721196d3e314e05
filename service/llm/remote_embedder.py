"""An Embedder backed by any litellm embedding model (the calls themselves live in gateway.py)."""

import math
from collections.abc import Sequence

from pydantic import SecretStr

from reactstep.service.llm.gateway import embed_texts
from reactstep.service.llm.provider_errors import EmbeddingEndpoint

BATCH = 64


class LiteLLMEmbedder:
    """Embeds through a provider; the dimension is learnt from the first vectors it returns."""

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None,
        api_key: SecretStr | None,
        timeout_s: float,
        api_base_setting: str = "REACTSTEP_EMBEDDING_API_BASE",
    ) -> None:
        self._endpoint = EmbeddingEndpoint(model, api_base, api_base_setting, timeout_s)
        self._api_key = api_key
        self._dimension: int | None = None

    @property
    def model_name(self) -> str:
        """The litellm model name."""
        return self._endpoint.model

    @property
    def dimension(self) -> int:
        """Vector length; asks the provider once if no vectors were made yet."""
        if self._dimension is None:
            self.embed_query("dimension probe")
        assert self._dimension is not None
        return self._dimension

    @property
    def known_dimension(self) -> int | None:
        """The dimension once a call has returned vectors; None before."""
        return self._dimension

    def embed_query(self, text: str) -> list[float]:
        """One L2-normalised vector."""
        return self.embed_documents([text])[0]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """L2-normalised vectors, BATCH texts per provider call."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            batch = list(texts[start : start + BATCH])
            raw = embed_texts(self._endpoint, batch, self._api_key)
            vectors.extend(_normalised(vector) for vector in raw)
        if vectors:
            self._dimension = len(vectors[0])
        return vectors


def _normalised(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(value * value for value in vector)) or 1.0
    return [value / norm for value in vector]
