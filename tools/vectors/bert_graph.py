"""A BERT encoder as an ONNX graph, written from its safetensors weights with onnx's helper API: no torch.

    input_ids, attention_mask, token_type_ids  [batch, sequence] int64
      ─► word + position + token-type embeddings ─► LayerNorm
      ─► per layer: self-attention (heads, scaled dot product, masked softmax) ─► dense ─► add, LayerNorm
                    ─► dense ─► GELU (erf) ─► dense ─► add, LayerNorm
      ─► token_embeddings  [batch, sequence, hidden] float32 (pooling stays in numpy)

It is the computation of transformers' BertModel in eval mode (no dropout), written out op by op; the
vectors it gives are compared with reference vectors in tests/tools/vectors/test_bert_graph.py.
"""

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17  # LayerNormalization is an op from 17 on
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT_NAME = "token_embeddings"


@dataclass(frozen=True)
class BertShape:
    """The sizes config.json gives."""

    hidden: int
    heads: int
    layers: int
    layer_norm_eps: float

    @classmethod
    def read(cls, config_path: Path) -> "BertShape":
        config = json.loads(config_path.read_text())
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


def write_bert_graph(model_dir: Path, target: Path) -> None:
    """Write the encoder of model_dir (config.json, model.safetensors) as an ONNX file at target."""
    from safetensors.numpy import load_file

    shape = BertShape.read(model_dir / "config.json")
    weights = load_file(str(model_dir / "model.safetensors"))
    builder = _Builder(weights)
    hidden = builder.embeddings(shape)
    mask = builder.attention_bias()
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
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save_model(model, str(target))


class _Builder:
    """Nodes and initializers, named uniquely as they are made."""

    def __init__(self, weights: dict[str, npt.NDArray[np.generic]]) -> None:
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
        self.nodes.append(helper.make_node(op_type, list(inputs), [output], **attributes))
        return output

    def embeddings(self, shape: BertShape) -> str:
        words = self.op("Gather", self.weight("embeddings.word_embeddings.weight"), "input_ids")
        types = self.op("Gather", self.weight("embeddings.token_type_embeddings.weight"), "token_type_ids")
        length = self.op("Gather", self.op("Shape", "input_ids"), self.constant(1, np.int64), axis=0)
        positions = self.op("Range", self.constant(0, np.int64), length, self.constant(1, np.int64))
        placed = self.op("Gather", self.weight("embeddings.position_embeddings.weight"), positions)
        summed = self.op("Add", self.op("Add", words, types), placed)
        return self.layer_norm(summed, "embeddings.LayerNorm", shape)

    def attention_bias(self) -> str:
        """[batch, 1, 1, sequence]: 0 where the mask is 1, the float32 minimum where it is 0."""
        mask = self.op("Cast", self.op("Unsqueeze", "attention_mask", self.constant([1, 2], np.int64)), to=1)
        hidden_out = self.op("Sub", self.constant(1.0), mask)
        return self.op("Mul", hidden_out, self.constant(np.finfo(np.float32).min))

    def layer(self, hidden: str, bias: str, prefix: str, shape: BertShape) -> str:
        attended = self.attention(hidden, bias, f"{prefix}.attention.self", shape)
        projected = self.dense(attended, f"{prefix}.attention.output.dense")
        hidden = self.layer_norm(
            self.op("Add", projected, hidden), f"{prefix}.attention.output.LayerNorm", shape
        )
        expanded = self.gelu(self.dense(hidden, f"{prefix}.intermediate.dense"))
        contracted = self.dense(expanded, f"{prefix}.output.dense")
        return self.layer_norm(self.op("Add", contracted, hidden), f"{prefix}.output.LayerNorm", shape)

    def attention(self, hidden: str, bias: str, prefix: str, shape: BertShape) -> str:
        head_size = shape.hidden // shape.heads
        split = self.constant([0, 0, shape.heads, head_size], np.int64)  # 0 keeps batch and sequence

        def heads(name: str) -> str:  # [batch, heads, sequence, head_size]
            return self.op(
                "Transpose",
                self.op("Reshape", self.dense(hidden, f"{prefix}.{name}"), split),
                perm=[0, 2, 1, 3],
            )

        query, key, value = heads("query"), heads("key"), heads("value")
        scores = self.op("MatMul", query, self.op("Transpose", key, perm=[0, 1, 3, 2]))
        scaled = self.op("Add", self.op("Mul", scores, self.constant(1.0 / math.sqrt(head_size))), bias)
        context = self.op("MatMul", self.op("Softmax", scaled, axis=-1), value)
        merged = self.op("Transpose", context, perm=[0, 2, 1, 3])
        return self.op("Reshape", merged, self.constant([0, 0, shape.hidden], np.int64))

    def dense(self, hidden: str, prefix: str) -> str:
        product = self.op("MatMul", hidden, self.weight(f"{prefix}.weight", transpose=True))
        return self.op("Add", product, self.weight(f"{prefix}.bias"))

    def gelu(self, hidden: str) -> str:
        """x * 0.5 * (1 + erf(x / sqrt(2))), BERT's exact GELU."""
        erf = self.op("Erf", self.op("Mul", hidden, self.constant(1.0 / math.sqrt(2.0))))
        return self.op(
            "Mul", self.op("Mul", hidden, self.constant(0.5)), self.op("Add", erf, self.constant(1.0))
        )

    def layer_norm(self, hidden: str, prefix: str, shape: BertShape) -> str:
        scale, offset = self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")
        return self.op("LayerNormalization", hidden, scale, offset, axis=-1, epsilon=shape.layer_norm_eps)

    def _name(self, kind: str) -> str:
        self._count += 1
        return f"{kind}_{self._count}"
