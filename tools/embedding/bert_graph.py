"""A BERT encoder as an ONNX graph, written from its safetensors weights with onnx's helper API: no torch.

    input_ids, attention_mask, token_type_ids  [batch, sequence] int64
      ─► word + position + token-type embeddings ─► LayerNorm
      ─► per layer: Attention (packed Q/K/V, heads, masked softmax) ─► dense ─► SkipLayerNormalization
                    ─► dense ─► BiasGelu (erf) ─► dense ─► SkipLayerNormalization
      ─► token_embeddings  [batch, sequence, hidden] float32 (pooling stays in numpy)

It is the computation of transformers' BertModel in eval mode (no dropout). Each layer is written with
onnxruntime's fused CPU kernels (the com.microsoft ops its transformer optimizer would produce, which
it cannot find in a graph written op by op): the same arithmetic in fewer passes over memory, 1.6x
the chunks/s of the op-by-op graph on real code (bench/embedding_speed.py) at cosine 1.0 to it. The
vectors are compared with reference vectors in tests/tools/embedding/test_bert_graph.py.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17  # LayerNormalization is an op from 17 on
CONTRIB = "com.microsoft"  # onnxruntime's own fused kernels
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT_NAME = "token_embeddings"
Weights = dict[str, npt.NDArray[np.generic]]  # by transformers' BertModel names


@dataclass(frozen=True)
class BertShape:
    """The sizes config.json gives."""

    hidden: int
    heads: int
    layers: int
    layer_norm_eps: float

    @classmethod
    def read(cls, config_path: Path) -> "BertShape":
        return cls.from_config(json.loads(config_path.read_text()))

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> "BertShape":
        if (
            config.get("hidden_act") != "gelu"
            or config.get("position_embedding_type", "absolute") != "absolute"
        ):
            raise ValueError("only BERT with GELU and absolute positions is supported")
        return cls(
            int(config["hidden_size"]),
            int(config["num_attention_heads"]),
            int(config["num_hidden_layers"]),
            float(config["layer_norm_eps"]),
        )


def write_bert_graph(shape: BertShape, weights: Weights, target: Path) -> None:
    """Write the encoder of these weights (transformers' BertModel names) as an ONNX file at target."""
    builder = _Builder(weights)
    hidden = builder.embeddings(shape)
    mask = builder.attention_mask()
    for layer in range(shape.layers):
        hidden = builder.layer(hidden, mask, f"encoder.layer.{layer}", shape)
    builder.nodes.append(helper.make_node("Identity", [hidden], [OUTPUT_NAME]))
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"]) for name in INPUT_NAMES
    ]
    output = helper.make_tensor_value_info(
        OUTPUT_NAME, TensorProto.FLOAT, ["batch", "sequence", shape.hidden]
    )
    graph = helper.make_graph(builder.nodes, "bert_encoder", inputs, [output], builder.initializers)
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid(CONTRIB, 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save_model(model, str(target))


class _Builder:
    """Nodes and initializers, named uniquely as they are made."""

    def __init__(self, weights: Weights) -> None:
        self.weights = weights
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._count = 0

    def constant(self, value: npt.ArrayLike, dtype: type = np.float32) -> str:
        name = self._name("const")
        self.initializers.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def weight(self, key: str, transpose: bool = False) -> str:
        array = self.weights[key].astype(np.float32)
        name = key if not transpose else f"{key}.T"
        self.initializers.append(
            numpy_helper.from_array(np.ascontiguousarray(array.T if transpose else array), name)
        )
        return name

    def op(self, op_type: str, *inputs: str, **attributes: Any) -> str:
        output = self._name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [output], name=output, **attributes))
        return output

    def embeddings(self, shape: BertShape) -> str:
        words = self.op("Gather", self.weight("embeddings.word_embeddings.weight"), "input_ids")
        types = self.op("Gather", self.weight("embeddings.token_type_embeddings.weight"), "token_type_ids")
        length = self.op("Gather", self.op("Shape", "input_ids"), self.constant(1, np.int64), axis=0)
        positions = self.op("Range", self.constant(0, np.int64), length, self.constant(1, np.int64))
        placed = self.op("Gather", self.weight("embeddings.position_embeddings.weight"), positions)
        summed = self.op("Add", self.op("Add", words, types), placed)
        return self.layer_norm(summed, "embeddings.LayerNorm", shape)

    def attention_mask(self) -> str:
        """The [batch, sequence] 0/1 mask as the int32 the Attention kernel reads."""
        return self.op("Cast", "attention_mask", to=TensorProto.INT32)

    def layer(self, hidden: str, mask: str, prefix: str, shape: BertShape) -> str:
        attended = self.attention(hidden, mask, f"{prefix}.attention.self", shape)
        projected = self.op(
            "MatMul", attended, self.weight(f"{prefix}.attention.output.dense.weight", transpose=True)
        )
        hidden = self.skip_layer_norm(projected, hidden, f"{prefix}.attention.output", shape)
        expanded = self.op(
            "MatMul", hidden, self.weight(f"{prefix}.intermediate.dense.weight", transpose=True)
        )
        activated = self.contrib("BiasGelu", expanded, self.weight(f"{prefix}.intermediate.dense.bias"))
        contracted = self.op(
            "MatMul", activated, self.weight(f"{prefix}.output.dense.weight", transpose=True)
        )
        return self.skip_layer_norm(contracted, hidden, f"{prefix}.output", shape)

    def attention(self, hidden: str, mask: str, prefix: str, shape: BertShape) -> str:
        """Multi-head self-attention in one kernel: Q, K and V weights packed side by side."""
        names = ("query", "key", "value")
        packed = np.concatenate(
            [self.weights[f"{prefix}.{name}.weight"].astype(np.float32).T for name in names], axis=1
        )
        bias = np.concatenate([self.weights[f"{prefix}.{name}.bias"].astype(np.float32) for name in names])
        return self.contrib(
            "Attention", hidden, self.constant(packed), self.constant(bias), mask, num_heads=shape.heads
        )

    def skip_layer_norm(self, projected: str, residual: str, prefix: str, shape: BertShape) -> str:
        """LayerNorm(projected + dense bias + residual) in one kernel."""
        return self.contrib(
            "SkipLayerNormalization",
            projected,
            residual,
            self.weight(f"{prefix}.LayerNorm.weight"),
            self.weight(f"{prefix}.LayerNorm.bias"),
            self.weight(f"{prefix}.dense.bias"),
            epsilon=shape.layer_norm_eps,
        )

    def layer_norm(self, hidden: str, prefix: str, shape: BertShape) -> str:
        scale, offset = self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")
        return self.op("LayerNormalization", hidden, scale, offset, axis=-1, epsilon=shape.layer_norm_eps)

    def contrib(self, op_type: str, *inputs: str, **attributes: Any) -> str:
        """An onnxruntime fused op (com.microsoft domain)."""
        output = self._name(op_type.lower())
        self.nodes.append(
            helper.make_node(op_type, list(inputs), [output], name=output, domain=CONTRIB, **attributes)
        )
        return output

    def _name(self, kind: str) -> str:
        self._count += 1
        return f"{kind}_{self._count}"
