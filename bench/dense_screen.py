"""Screen an embedding model by its dense ranking alone, before it is worth a local-model entry.

Two steps, each in the environment that has what it needs:

    .venv/bin/python bench/dense_screen.py sets --data /tmp/realq/codexglue --site /tmp/search-bench \\
        --out /tmp/screen
    /tmp/train-venv/bin/python bench/dense_screen.py rank MODEL_DIR [--adapter FILE.npz] --sets /tmp/screen

`sets` writes one JSON file per set: the texts the product's dense leg embeds (each chunk's dense_text)
and each query with the chunks that answer it. Real-question sets (real_questions.py's SOURCES, their
first --max-queries queries) answer with any chunk of a right file; docstring sets (docstring_dataset.py,
of the packages fetched under --site) with the chunk that holds the function's `def` line.

`rank` embeds them with a sentence-transformers folder on torch (mean pooling, as every model here
pools; the venv of scripts/train_code_adapter.py plus `pip install transformers`), optionally with a
LoRA adapter merged into its weights (lora.py's arithmetic), and prints MRR@10 per set and the
documents embedded per second. No fusion, no int8, no name boosts: a screen, not code_search's figure.
"""

import argparse
import json
import time
from pathlib import Path

MAX_DOC_TOKENS, MAX_QUERY_TOKENS = 256, 64


def main() -> None:
    parser = argparse.ArgumentParser()
    steps = parser.add_subparsers(dest="step", required=True)
    sets = steps.add_parser("sets", help="write the sets (in the project's venv)")
    sets.add_argument("--data", type=Path, required=True, help="real_questions.py's --data folder")
    sets.add_argument("--site", type=Path, required=True, help="retrieval_quality.py's --work-dir")
    sets.add_argument("--real-sets", nargs="*", default=["staqc-dev", "cosqa-dev"])
    sets.add_argument("--packages", nargs="*", default=["attrs", "httpx", "jinja2"])
    sets.add_argument("--max-queries", type=int, default=400)
    sets.add_argument("--out", type=Path, required=True)
    rank = steps.add_parser("rank", help="rank them with a model (in a venv with torch and transformers)")
    rank.add_argument("model", type=Path, help="a sentence-transformers model folder")
    rank.add_argument("--adapter", type=Path, help="a LoRA .npz (lora.py's format) to merge first")
    rank.add_argument("--sets", type=Path, required=True, help="the folder `sets` wrote")
    args = parser.parse_args()
    if args.step == "sets":
        write_sets(args)
    else:
        rank_sets(args)


def write_sets(args: argparse.Namespace) -> None:
    import tempfile

    from docstring_dataset import SOURCE_FOLDERS, build
    from real_questions import load_set

    from reactstep.tools.index.chunk_text import dense_text
    from reactstep.tools.source.chunking import Chunk, chunk_file

    def chunks(files: dict[str, str]) -> list[Chunk]:
        return [chunk for path, text in sorted(files.items()) for chunk in chunk_file(path, text)]

    def save(name: str, pool: list[Chunk], queries: list[tuple[str, list[int]]]) -> None:
        body = {"texts": [dense_text(chunk) for chunk in pool], "queries": queries}
        (args.out / f"{name}.json").write_text(json.dumps(body))
        print(f"{name}: {len(pool)} chunks, {len(queries)} queries")

    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.real_sets:
        files, real = load_set(name, args.data)
        pool = chunks(files)
        asked = real[: args.max_queries]
        save(name, pool, [(q.text, [i for i, c in enumerate(pool) if c.path in q.paths]) for q in asked])
    for package in args.packages:
        source = args.site / f"{package}-site" / SOURCE_FOLDERS.get(package, package)
        with tempfile.TemporaryDirectory() as temp:
            stripped = Path(temp) / package
            found = build(source, stripped)
            pool = chunks({p.relative_to(stripped).as_posix(): p.read_text() for p in stripped.rglob("*.py")})
        answers = {
            query: [i for i, c in enumerate(pool) if query.answered_by(c.path, c.start_line, c.end_line)]
            for query in found
        }
        for kind in ("docstring", "question"):
            texts = {query: query.text if kind == "docstring" else query.question for query in found}
            queries = [(texts[query], answers[query]) for query in found if answers[query] and texts[query]]
            save(f"{package}-{kind}", pool, queries)


def rank_sets(args: argparse.Namespace) -> None:
    import numpy as np
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.set_num_threads(2)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModel.from_pretrained(args.model).eval()
    if args.adapter:
        state = model.state_dict()
        with np.load(args.adapter) as stored:
            scale = float(stored["alpha"]) / float(stored["r"])
            for name in (n for n in stored.files if n.endswith("|A")):
                key = name.removesuffix("|A")
                delta = stored[f"{key}|B"].astype(np.float32) @ stored[name].astype(np.float32)
                state[f"{key}.weight"] += scale * torch.from_numpy(delta)
        model.load_state_dict(state)

    def encode(texts: list[str], max_tokens: int) -> "torch.Tensor":
        batch = tokenizer(texts, padding=True, truncation=True, max_length=max_tokens, return_tensors="pt")
        mask = batch["attention_mask"].unsqueeze(-1).float()
        pooled = (model(**batch).last_hidden_state * mask).sum(1) / mask.sum(1)
        return torch.nn.functional.normalize(pooled, dim=1)

    embedded: dict[tuple[str, ...], torch.Tensor] = {}  # a package's two sets share one pool
    for file in sorted(args.sets.glob("*.json")):
        body = json.loads(file.read_text())
        texts, queries = body["texts"], body["queries"]
        pool = tuple(texts)
        started = time.perf_counter()
        with torch.no_grad():
            if pool not in embedded:
                order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
                vectors = torch.zeros(len(texts), model.config.hidden_size)
                for start in range(0, len(order), 32):
                    rows = order[start : start + 32]
                    vectors[rows] = encode([texts[i] for i in rows], MAX_DOC_TOKENS)
                embedded[pool] = vectors
                rate = f"{len(texts) / (time.perf_counter() - started):.1f} docs/s"
            else:
                rate = "pool embedded above"
            asked = encode([text for text, _ in queries], MAX_QUERY_TOKENS)
        top = (asked @ embedded[pool].T).topk(10, dim=1).indices.tolist()
        total = 0.0
        for row, (_, answers) in zip(top, queries, strict=True):
            right = set(answers)
            total += next((1 / rank for rank, i in enumerate(row, 1) if i in right), 0.0)
        print(
            f"{file.stem:20} MRR@10 {total / len(queries):.3f}  ({len(queries)} queries; {rate})", flush=True
        )


if __name__ == "__main__":
    main()
