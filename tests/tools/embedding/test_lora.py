"""The code-search adapter: a LoRA delta merged into all-MiniLM-L6-v2's weights before export."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from reactstep.tools.embedding.embeddings import LocalEmbedder
from reactstep.tools.embedding.local_models import (
    ADAPTERS,
    MINILM,
    MINILM_CODE,
    MINILM_CODE_INT8,
    MINILM_INT8,
    vectors_revision,
)
from reactstep.tools.embedding.lora import AdapterMismatch, merge_lora
from reactstep.tools.ranking.retrieval import embedding_space

KEY = "encoder.layer.0.attention.self.query"
ONES = (np.ones((2, 6), np.float16), np.ones((4, 2), np.float16))  # a rank-2 delta of a 4 x 6 weight


def write_adapter(path: Path, down: np.ndarray, up: np.ndarray, alpha: float, rank: int) -> Path:
    np.savez(path, alpha=np.float32(alpha), r=np.int32(rank), **{f"{KEY}|A": down, f"{KEY}|B": up})
    return path


def test_a_delta_is_added_to_its_weight_and_nothing_else(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    weights = {f"{KEY}.weight": rng.random((4, 6), dtype=np.float32), "other": np.ones(3, np.float32)}
    down = rng.random((2, 6)).astype(np.float16)
    up = rng.random((4, 2)).astype(np.float16)

    merged = merge_lora(weights, write_adapter(tmp_path / "a.npz", down, up, alpha=4.0, rank=2))

    expected = weights[f"{KEY}.weight"] + 2.0 * (up.astype(np.float32) @ down.astype(np.float32))
    np.testing.assert_allclose(merged[f"{KEY}.weight"], expected, rtol=1e-6)
    assert merged["other"] is weights["other"]
    assert merged[f"{KEY}.weight"].dtype == np.float32


def test_a_blend_adds_each_delta_at_its_share(tmp_path: Path) -> None:
    """scripts/blend_code_adapters.py, as adapter 4 was made: the merged weight is W + 0.7 d1 + 0.3 d2."""
    rng = np.random.default_rng(5)
    weight = rng.random((4, 6), dtype=np.float32)
    first = [rng.random(shape).astype(np.float16) for shape in ((2, 6), (4, 2))]
    second = [rng.random(shape).astype(np.float16) for shape in ((3, 6), (4, 3))]
    base = write_adapter(tmp_path / "base.npz", *first, alpha=4.0, rank=2)
    other = write_adapter(tmp_path / "other.npz", *second, alpha=3.0, rank=3)
    script = Path(__file__).resolve().parents[3] / "scripts" / "blend_code_adapters.py"

    subprocess.run(
        [sys.executable, script, base, other, "--share", "0.3", "--out", tmp_path / "blend.npz"],
        check=True,
        capture_output=True,
    )

    def delta(down: np.ndarray, up: np.ndarray) -> np.ndarray:
        return up.astype(np.float32) @ down.astype(np.float32)

    merged = merge_lora({f"{KEY}.weight": weight}, tmp_path / "blend.npz")[f"{KEY}.weight"]
    expected = weight + 0.7 * 2.0 * delta(*first) + 0.3 * 1.0 * delta(*second)
    np.testing.assert_allclose(merged, expected, rtol=2e-3)
    with np.load(tmp_path / "blend.npz") as blend:
        assert int(blend["r"]) == 5 and blend[f"{KEY}|A"].shape == (5, 6)


@pytest.mark.parametrize("shape", [(4, 5), (3, 6)])
def test_a_delta_of_another_shape_is_refused(tmp_path: Path, shape: tuple[int, int]) -> None:
    weights = {f"{KEY}.weight": np.zeros(shape, np.float32)}
    adapter = write_adapter(tmp_path / "a.npz", *ONES, alpha=2, rank=2)

    with pytest.raises(AdapterMismatch, match=f"a.npz: {KEY}.weight is not a weight of that shape"):
        merge_lora(weights, adapter)


def test_a_delta_for_a_weight_the_model_lacks_is_refused(tmp_path: Path) -> None:
    adapter = write_adapter(tmp_path / "a.npz", *ONES, alpha=2, rank=2)

    with pytest.raises(AdapterMismatch, match=f"{KEY}.weight is not a weight"):
        merge_lora({}, adapter)


def test_the_shipped_adapter_covers_every_dense_layer_of_the_encoder() -> None:
    _, stock = MINILM.load()
    _, tuned = MINILM_CODE.load()
    changed = sorted(key for key in stock if not np.array_equal(stock[key], tuned[key]))
    parts = ("attention.self.query", "attention.self.key", "attention.self.value")
    parts += ("attention.output.dense", "intermediate.dense", "output.dense")
    assert changed == sorted(f"encoder.layer.{layer}.{part}.weight" for layer in range(6) for part in parts)
    assert (ADAPTERS / "minilm_code_4.npz").stat().st_size < 3_000_000  # committed: keep it small


def test_tuned_vectors_live_in_their_own_space() -> None:
    assert MINILM_CODE.digest() != MINILM.digest()
    assert vectors_revision(MINILM_CODE.name) == "minilm_code_4"
    assert vectors_revision(MINILM_CODE_INT8.name) == "q2_minilm_code_4"
    assert vectors_revision(MINILM_INT8.name) == "q2"
    spaces = {
        embedding_space(LocalEmbedder(Path("/nonexistent"), model=model.name))
        for model in (MINILM, MINILM_INT8, MINILM_CODE, MINILM_CODE_INT8)
    }
    assert spaces == {
        "chunks_local_all_minilm_l6_v2_384",
        "chunks_local_all_minilm_l6_v2_int8_q2_384",
        "chunks_local_all_minilm_l6_v2_code_minilm_code_4_384",
        "chunks_local_all_minilm_l6_v2_code_int8_q2_minilm_code_4_384",
    }


def test_the_tuned_model_moves_every_vector_but_keeps_its_neighbourhood(
    tmp_path: Path, fp32_embedder: LocalEmbedder
) -> None:
    """The delta is applied (each vector moves) and small (each stays near its stock self): its effect on
    retrieval is measured by bench/retrieval_quality.py, not here."""
    texts = [
        "Split a dotted import path into its module and attribute names.",
        "resolve.py resolve_name\ndef resolve_name(spec):\n    module, _, attribute = spec.rpartition('.')\n",
        "config.py load_config\ndef load_config(path):\n    return json.loads(Path(path).read_text())",
    ]
    tuned = LocalEmbedder(tmp_path, model=MINILM_CODE.name).embed_documents(texts)
    stock = fp32_embedder.embed_documents(texts)
    cosines = [float(np.dot(a, b)) for a, b in zip(tuned, stock, strict=True)]
    assert all(0.6 < cosine < 0.97 for cosine in cosines), cosines
