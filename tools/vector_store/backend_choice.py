"""Pick the vector store back-end once, from plain values: Qdrant's engine in-process, or a server by URL."""

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import SecretStr

from reactstep.tools.errors import VectorStoreError
from reactstep.tools.vector_store.store import VectorStore


@dataclass(frozen=True)
class VectorConfig:
    """Which back-end, and where: `root` for the embedded engine, `qdrant_url` for a server."""

    backend: Literal["embedded", "qdrant"] = "embedded"
    root: Path = Path(".reactstep/vectors")
    qdrant_url: str | None = None
    qdrant_api_key: SecretStr | None = None
    qdrant_timeout_s: float = 10.0
    optimize_after: int = 10_000  # points written before the embedded store optimizes a collection


def open_vector_store(config: VectorConfig) -> VectorStore:
    """The store the config names: "embedded" (the default) or "qdrant" at `qdrant_url`."""
    if config.backend == "qdrant":
        if not config.qdrant_url:
            raise VectorStoreError("REACTSTEP_VECTOR_BACKEND=qdrant needs REACTSTEP_QDRANT_URL")
        # Imported here: qdrant-client is slow to import and the embedded engine never needs it.
        from reactstep.tools.vector_store.qdrant import QdrantVectorStore

        key = config.qdrant_api_key.get_secret_value() if config.qdrant_api_key else None
        return QdrantVectorStore(config.qdrant_url, key, config.qdrant_timeout_s)
    from reactstep.tools.vector_store.edge import EdgeVectorStore

    return EdgeVectorStore(config.root, config.optimize_after)
