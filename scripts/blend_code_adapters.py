"""Blend two code-search adapters: the merged delta (1 - share) * BASE + share * OTHER, as one LoRA file.

    .venv/bin/python scripts/blend_code_adapters.py BASE.npz OTHER.npz --share 0.5 --out BLEND.npz

Both files are train_code_adapter.py's format (`<key>|A`, `<key>|B`, `alpha`, `r`) with the same keys.
The blend is exact, not a refit: its A stacks both A's and its B both B's (each times its share and its
file's alpha / r), so its rank is the sum of theirs and its alpha / r is 1. Halfway between an adapter
and the one it was trained on from keeps most of what the short run taught (questions) and most of what
it was starting to forget (docstrings); docs/search.md has the figures.
"""

import argparse
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("base", type=Path)
    parser.add_argument("other", type=Path)
    parser.add_argument("--share", type=float, required=True, help="OTHER's share, 0 to 1")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if not 0 <= args.share <= 1:
        parser.error("--share is between 0 and 1")
    with np.load(args.base) as base, np.load(args.other) as other:
        keys = sorted(name.removesuffix("|A") for name in base.files if name.endswith("|A"))
        if keys != sorted(name.removesuffix("|A") for name in other.files if name.endswith("|A")):
            parser.error("the two adapters change different layers")
        parts = ((base, 1 - args.share), (other, args.share))
        arrays = {}
        for key in keys:
            downs = [stored[f"{key}|A"].astype(np.float32) for stored, _ in parts]
            ups = [
                stored[f"{key}|B"].astype(np.float32) * (share * float(stored["alpha"]) / float(stored["r"]))
                for stored, share in parts
            ]
            arrays[f"{key}|A"], arrays[f"{key}|B"] = np.concatenate(downs), np.concatenate(ups, axis=1)
    rank = arrays[f"{keys[0]}|A"].shape[0]
    blended = {name: value.astype(np.float16) for name, value in arrays.items()}
    np.savez_compressed(args.out, alpha=np.float32(rank), r=np.int32(rank), **blended)
    print(f"wrote {args.out}: rank {rank}, {args.share:g} of {args.other.name} and the rest {args.base.name}")


if __name__ == "__main__":
    main()
