"""Back-end failures the model cannot fix, as the service's 502/503 errors."""

from types import TracebackType

from reactstep.service.errors import EmbeddingFailed, StorageUnavailable, VectorStoreUnavailable
from reactstep.tools.embedding.embeddings import EmbeddingError
from reactstep.tools.errors import StoreUnavailable
from reactstep.tools.vector_store import store as vectors


def translated_backend_errors() -> "BackendErrors":
    """Back-end failures the model cannot fix become 502/503 errors with a code."""
    return TRANSLATED


class BackendErrors:
    """The translation, as a context manager with no state (one serves every `with`): it wraps every
    tool run, and a generator's context manager costs several times more."""

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, trace: TracebackType | None
    ) -> None:
        if isinstance(exc, StoreUnavailable):
            raise StorageUnavailable(f"object storage is unavailable: {exc}") from exc
        if isinstance(exc, vectors.VectorStoreUnavailable):
            raise VectorStoreUnavailable(f"the vector store is unavailable: {exc}") from exc
        if isinstance(exc, EmbeddingError):
            raise EmbeddingFailed(f"the embedding model failed: {exc}") from exc


TRANSLATED = BackendErrors()
