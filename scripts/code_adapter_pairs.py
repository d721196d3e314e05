"""The training pairs of the code-search adapter: (docstring sentence, question or name) -> its code.

Run with the project's venv: .venv/bin/python scripts/code_adapter_pairs.py --out /tmp/adapter/pairs.json
then train with scripts/train_code_adapter.py (a separate venv with torch; see its docstring).

The pairs are made exactly as the search benchmark makes its queries (bench/docstring_dataset.py:
docstrings blanked out of a copy, the first sentence, its "how do I" question, the qualified name),
but from other code: this Python's standard library and the packages installed beside the project,
never a benchmark package nor its siblings (BENCH_FAMILY), so bench/retrieval_quality.py measures the
adapter on code it never saw. Each query's answer is the chunk the product cuts around its `def` line,
as the index embeds it (chunk_text.dense_text). At most PER_SOURCE pairs a source, sampled with a fixed seed.

`--questions FILE --exclude FILE...` writes question pairs instead: each positively labelled (question,
code) of a StaQC-format file (CodeXGLUE's train_staqc.json: doc, code, label), the code as the product
indexes it (its first chunk's dense_text, in a file named like bench/real_questions.py's pool files),
leaving out every pair whose question or code appears in an --exclude file (the sets it is graded on).
"""

import argparse
import json
import random
import shutil
import sys
import sysconfig
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from docstring_dataset import MIN_QUERY_WORDS, RELEASES, SOURCE_FOLDERS, build

from reactstep.tools.index.chunk_text import dense_text
from reactstep.tools.source.chunking import Chunk, outline_file

PER_SOURCE = 2500
# Installed packages the pairs come from (those present are used; the standard library always is).
PACKAGES = (
    *("aiohttp", "anyio", "boto3", "botocore", "cryptography", "dateutil", "fsspec", "h11"),
    *("huggingface_hub", "hypothesis", "jsonschema", "litellm", "markdown_it", "mcp", "moto"),
    *("multidict", "mypy", "numpy", "onnx", "openai", "pip", "prometheus_client", "pydantic"),
    *("pygments", "qdrant_client", "referencing", "requests", "rich", "s3transfer", "schemathesis"),
    *("setuptools", "sortedcontainers", "starlette", "tokenizers", "urllib3", "uvicorn", "yaml", "yarl"),
)
# The benchmark's packages and the code that shares their authors and idioms: never trained on.
BENCH_FAMILY = frozenset(
    {*RELEASES, *SOURCE_FOLDERS.values(), "httpcore", "markupsafe", "flask", "click", "itsdangerous"}
    | {"pluggy", "iniconfig", "_pytest", "py", "cattrs"}
)
STDLIB_SKIPPED = ("site-packages", "test", "idlelib", "lib2to3", "tkinter", "turtledemo", "ensurepip")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True, help="the pairs file to write (JSON)")
    parser.add_argument("--work-dir", type=Path, help="where the blanked copies go (default: beside --out)")
    parser.add_argument("--questions", type=Path, help="write question pairs from this StaQC-format file")
    parser.add_argument("--exclude", type=Path, nargs="*", default=[], help="sets to keep out (same format)")
    args = parser.parse_args()
    if args.questions:
        rows = question_pairs(args.questions, args.exclude)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows))
        print(f"{len(rows)} question pairs in {args.out}")
        return
    work = args.work_dir or args.out.parent / "copies"
    rows = []
    for name, source in sources(work).items():
        made = pairs(source, work / name)
        random.Random(name).shuffle(made)
        rows.extend({"source": name, **row} for row in sorted(made[:PER_SOURCE], key=str))
        print(f"{name}: {len(made)} pairs, {min(len(made), PER_SOURCE)} kept", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows))
    print(f"{len(rows)} pairs in {args.out}")


def sources(work: Path) -> dict[str, Path]:
    """The standard library (a copy without its tests and GUI) and each installed package of PACKAGES."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    copy = work / "stdlib-source"
    if not copy.exists():
        for file in stdlib.rglob("*.py"):
            relative = file.relative_to(stdlib)
            if relative.parts[0] in STDLIB_SKIPPED or "tests" in relative.parts:
                continue
            (copy / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(file, copy / relative)
    found = {"stdlib": copy}
    site = Path(sysconfig.get_paths()["purelib"])
    for name in PACKAGES:
        if name not in BENCH_FAMILY and (site / name).is_dir():
            found[name] = site / name
    return found


def pairs(source: Path, copy: Path) -> list[dict[str, str]]:
    """Each documented function's queries and the chunk holding its `def` line."""
    try:
        queries = build(source, copy)
    except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
        print(f"skipped {source}: {exc}")
        return []
    chunks: dict[str, list[Chunk]] = {}
    made = []
    for query in queries:
        if query.path not in chunks:
            chunks[query.path] = outline_file(query.path, (copy / query.path).read_text()).chunks
        chunk = next((c for c in chunks[query.path] if c.start_line <= query.def_line <= c.end_line), None)
        if chunk is None:
            continue
        question = query.question if len(query.question.split()) >= MIN_QUERY_WORDS + 3 else ""
        made.append(
            {
                "text": query.text,
                "question": question,
                "identifier": query.identifier,
                "code": dense_text(chunk),
            }
        )
    return made


def question_pairs(source: Path, exclude: list[Path]) -> list[dict[str, str]]:
    """The right (question, code) pairs of `source` whose question and code no excluded set holds."""
    kept_out = [json.loads(path.read_text()) for path in exclude]
    questions = {_spaced(pair["doc"]) for pairs in kept_out for pair in pairs}
    codes = {pair["code"] for pairs in kept_out for pair in pairs}
    made = []
    for number, pair in enumerate(json.loads(source.read_text())):
        question = _spaced(pair["doc"])
        if pair["label"] != 1 or question in questions or pair["code"] in codes:
            continue
        chunks = outline_file(f"f{number:05d}.py", pair["code"]).chunks
        if chunks:
            row = {"source": source.stem, "text": question, "question": "", "identifier": ""}
            made.append({**row, "code": dense_text(chunks[0])})
    return made


def _spaced(text: str) -> str:
    return " ".join(text.split())


if __name__ == "__main__":
    main()
