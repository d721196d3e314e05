"""Back-end failures the model cannot fix, as the service's 502/503 errors."""

from collections.abc import Iterator
from contextlib import contextmanager

from reactstep.service.errors import EmbeddingFailed, StorageUnavailable, VectorStoreUnavailable
from reactstep.tools.errors import StoreUnavailable
from reactstep.tools.vectors import store as vectors
from reactstep.tools.vectors.embeddings import EmbeddingError


@contextmanager
def translated_backend_errors() -> Iterator[None]:
    """Back-end failures the model cannot fix become 502/503 errors with a code."""
    try:
        yield
    except StoreUnavailable as exc:
        raise StorageUnavailable(f"object storage is unavailable: {exc}") from exc
    except vectors.VectorStoreUnavailable as exc:
        raise VectorStoreUnavailable(f"the vector store is unavailable: {exc}") from exc
    except EmbeddingError as exc:
        raise EmbeddingFailed(f"the embedding model failed: {exc}") from exc
