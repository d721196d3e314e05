"""Low-rank weight deltas (LoRA) learned for code search, merged into an encoder's weights before export.

An adapter file is a NumPy `.npz` archive: for each adapted dense layer `<key>` (a BertModel weight name
without `.weight`), `<key>|A` (rank x in) and `<key>|B` (out x rank), float16, plus `alpha` and `r`.
The merged weight is `W + (alpha / r) * B @ A`: the graph bert_graph.py writes is the same shape and
the same speed as the model's own, only its weights differ.
"""

from pathlib import Path

import numpy as np

from reactstep.tools.embedding.bert_graph import Weights
from reactstep.tools.errors import AdapterMismatch


def merge_lora(weights: Weights, adapter: Path) -> Weights:
    """A copy of `weights` with every delta in `adapter` added (float32)."""
    with np.load(adapter) as stored:
        scale = float(stored["alpha"]) / float(stored["r"])
        merged = dict(weights)
        for name in stored.files:
            if not name.endswith("|A"):
                continue
            key = name.removesuffix("|A")
            down = stored[name].astype(np.float32)
            up = stored[f"{key}|B"].astype(np.float32)
            target = f"{key}.weight"
            base = weights.get(target)
            if base is None or base.shape != (up.shape[0], down.shape[1]):
                raise AdapterMismatch(f"{adapter.name}: {target} is not a weight of that shape in the model")
            merged[target] = (base.astype(np.float32) + scale * (up @ down)).astype(np.float32)
    return merged
