"""Embed in windows and write each window on a second thread while the next one is embedded.

    window 1: embed ─► write ─────┐
    window 2:          embed ─────┴─► write ─┐
    window 3:                   embed ───────┴─► write ...

The model runs outside the GIL, so writing (sparse vectors, upserts) costs no wall time beside it.
A window is wide so the embedder can batch texts of similar length together (embeddings.py), and
narrow enough that a progress call after each one keeps a long run visibly alive.
"""

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from reactstep.tools.embedding.embeddings import Embedder
from reactstep.tools.index.embedding_cache import EmbeddingCache

WINDOW = 256  # texts per embedding call
Item = TypeVar("Item")


def embed_and_write(
    items: Sequence[Item],
    texts_of: Callable[[Item], Sequence[str]],
    cache: EmbeddingCache,
    embedder: Embedder,
    write: Callable[[Sequence[Item], list[list[list[float]]]], None],
    after_window: Callable[[Sequence[Item]], None] | None = None,
) -> list[int]:
    """Write every item with a vector per text (from the cache or the model).

    `texts_of` gives each item the same number of texts (a chunk's code and its name, say); `write`
    gets, per item, their vectors in that order; `after_window` each window once it is embedded and
    handed to the writer. Returns how many texts of each kind the model embedded.
    """
    embedded = [0] * (len(texts_of(items[0])) if items else 0)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="index-write") as writer:
        writing: Future[None] | None = None
        for start in range(0, len(items), WINDOW):
            window = items[start : start + WINDOW]
            texts = [texts_of(item) for item in window]
            by_kind = []
            for kind in range(len(embedded)):
                vectors, fresh = cache.embed([item_texts[kind] for item_texts in texts], embedder)
                by_kind.append(vectors)
                embedded[kind] += fresh
            if writing is not None:
                writing.result()  # one window in flight; a failed write stops the run here
            writing = writer.submit(write, window, [list(vectors) for vectors in zip(*by_kind, strict=True)])
            if after_window is not None:
                after_window(window)
        if writing is not None:
            writing.result()
    return embedded
