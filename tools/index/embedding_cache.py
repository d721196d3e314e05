"""Dense vectors cached by what was embedded: the same text under the same model is embedded once.

    key = sha256(space + "\\0" + text)      (the space names the model and its dimension, not the chunk
                                          collection's word-vector format: a new format embeds nothing)
    point id = uuid5(key) in the collection "<space>-cache", payload {project_id: ".cache"}

The text a chunk is embedded with leaves out the directories of its path (dense_text in
indexer.py), so renaming a directory, reverting a file, switching branches or indexing a second
project with the same code finds every vector here and embeds nothing. The cache lives in the same
vector store as the chunks (embedded engine or Qdrant server), so replicas share it. It is never
pruned: it holds one vector per distinct chunk text ever embedded.
"""

import hashlib
import uuid
from collections.abc import Sequence

from reactstep.tools.embedding.embeddings import Embedder
from reactstep.tools.embedding.sparse import SparseVector
from reactstep.tools.vector_store.store import ChunkPoint, VectorStore

CACHE_PROJECT = ".cache"  # no project id starts with '.', so no search ever sees these points
_NAMESPACE = uuid.UUID("5f0b8e2a-3c1d-4b7e-9a6f-0d2c4e8b1a73")


class EmbeddingCache:
    """Dense vectors of texts by content, for one collection's model."""

    def __init__(self, vectors: VectorStore, space: str, dimension: int) -> None:
        self._vectors = vectors
        self._collection = space
        self._cache = f"{space}-cache"
        vectors.ensure_collection(self._cache, dimension)

    def embed(self, texts: Sequence[str], embedder: Embedder) -> tuple[list[list[float]], int]:
        """A vector per text, and how many texts the model had to embed (the others were cached)."""
        keys = [self._key(text) for text in texts]
        found = self._vectors.dense_vectors(self._cache, list(dict.fromkeys(keys)))
        missing = list(dict.fromkeys(key for key in keys if key not in found))
        if missing:
            text_of = dict(zip(keys, texts, strict=True))
            fresh = embedder.embed_documents([text_of[key] for key in missing])
            self._vectors.upsert(
                self._cache,
                [
                    ChunkPoint(key, vector, SparseVector((), ()), {"project_id": CACHE_PROJECT, "path": key})
                    for key, vector in zip(missing, fresh, strict=True)
                ],
            )
            found.update(zip(missing, fresh, strict=True))
        return [found[key] for key in keys], len(missing)

    def _key(self, text: str) -> str:
        digest = hashlib.sha256(f"{self._collection}\0{text}".encode()).hexdigest()
        return str(uuid.uuid5(_NAMESPACE, digest))
