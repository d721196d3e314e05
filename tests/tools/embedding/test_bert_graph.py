"""The ONNX graph written from the safetensors weights, without torch, gives sentence-transformers' own
vectors: reference vectors made once with sentence-transformers on torch are committed beside this test."""

import json
from pathlib import Path

import pytest

from reactstep.tools.embedding.bert_graph import BertShape
from reactstep.tools.embedding.embeddings import LocalEmbedder

REFERENCE = json.loads((Path(__file__).parent / "data" / "minilm_reference.json").read_text())


def cosine(left: list[float], right: list[float]) -> float:
    dot = sum(a * b for a, b in zip(left, right, strict=True))
    return float(dot / (sum(a * a for a in left) ** 0.5 * sum(b * b for b in right) ** 0.5))


@pytest.mark.parametrize("case", REFERENCE["cases"], ids=lambda case: case["text"][:24])
def test_vectors_match_sentence_transformers(fp32_embedder: LocalEmbedder, case: dict[str, object]) -> None:
    text, reference = case["text"], case["vector"]
    assert isinstance(text, str) and isinstance(reference, list)
    ours = fp32_embedder.embed_documents([text])[0]
    assert cosine(ours, reference) >= 0.999999
    assert max(abs(a - b) for a, b in zip(ours, reference, strict=True)) < 1e-5


def test_the_reference_was_made_by_the_original_runtime() -> None:
    assert REFERENCE["source"].startswith("sentence-transformers ")
    assert len(REFERENCE["cases"]) == 5 and all(len(case["vector"]) == 384 for case in REFERENCE["cases"])


def test_only_gelu_bert_with_absolute_positions(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"hidden_act": "relu", "hidden_size": 8}))
    with pytest.raises(ValueError, match="only BERT with GELU and absolute positions"):
        BertShape.read(config)
