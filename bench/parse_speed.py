"""The reply parser on the conformance corpus: pass rate per format family, and parse time per reply.

Run: .venv/bin/python bench/parse_speed.py [--rounds 300]

The pass rates are parse_reply's on tests/service/parsing/corpus (the corpus test checks the same
over HTTP). The timings parse replies of about 2 KB and 50 KB in four shapes: a text action after a
long thought, a JSON blob, a nearly-JSON blob that takes a repair, and a long final answer.
"""

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from stats import machine, percentile

from reactstep.service.parsing.reply import FormatError, ParsedReply, parse_reply
from reactstep.tools.catalog import default_registry

CORPUS = Path(__file__).parent.parent / "tests" / "service" / "parsing" / "corpus"
PROSE = "I should look at how the request flows from the route to the store before changing it. "


def tools() -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    registry = default_registry()
    schemas = registry.schemas()
    for tool in json.loads((CORPUS / "client_tools.json").read_text()):
        schemas[tool["name"]] = tool["parameters"]
    return schemas, registry.aliases()


def outcome(
    text: str, schemas: dict[str, Any], aliases: dict[str, Any], plain_answer: bool = False
) -> dict[str, Any]:
    try:
        reply: ParsedReply = parse_reply(text, schemas, aliases, plain_answer)
    except FormatError as exc:
        return {"status": "format_error", "error": str(exc)}
    if reply.action is None:
        return {"status": "final_answer", "final_answer": reply.final_answer}
    return {"status": "action_proposed", "tool": reply.action.tool_name, "args": reply.action.tool_args}


def matches(expect: dict[str, Any], got: dict[str, Any]) -> bool:
    if got["status"] != expect["status"]:
        return False
    if expect["status"] == "action_proposed":
        return bool(got["tool"] == expect["tool"] and got["args"] == expect["args"])
    if expect["status"] == "final_answer":
        return bool(got["final_answer"] == expect["final_answer"])
    return expect["error_contains"] in got["error"]


def pass_rates(schemas: dict[str, Any], aliases: dict[str, Any]) -> None:
    total, passed = Counter[str](), Counter[str]()
    for path in sorted(CORPUS.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            case = json.loads(line)
            total[case["family"]] += 1
            plain = case.get("llm_config", {}).get("reply_format") == "native_text"
            got = outcome(case["reply"], schemas, aliases, plain)
            passed[case["family"]] += matches(case["expect"], got)
    print(f"{'family':<12} {'cases':>5} {'passed':>6} {'rate':>6}")
    for family in sorted(total):
        print(f"{family:<12} {total[family]:>5} {passed[family]:>6} {passed[family] / total[family]:>6.3f}")
    print(
        f"{'all':<12} {sum(total.values()):>5} {sum(passed.values()):>6} "
        f"{sum(passed.values()) / sum(total.values()):>6.3f}"
    )


def shaped(size: int) -> dict[str, str]:
    """Replies of about `size` characters; the JSON ones are half thought, half file content."""
    thought = (PROSE * (size // len(PROSE) + 1))[:size]
    half = thought[: size // 2]
    small = half[:12_000]  # json-repair only works on objects up to MAX_REPAIR_CHARS
    create = '"action": "create_file", "action_input": {"path": "a.md", '
    return {
        "text action": f'Thought: {thought}\nAction: read_file(file_path="src/app.py", start_line=1)',
        "json blob": f'{half}\n```json\n{{{create}"content": "{half}"}}}}\n```',
        "python literal": f"{half}\n```json\n{{{create}'content': '{half}',}},}}\n```".replace('"', "'"),
        "json_repair": f'{half}\n```json\n{{{create}/* new */ "content": "{small}"}}\n```',
        "final answer": f"Thought: done\nFinal Answer: {thought}",
    }


def timings(schemas: dict[str, Any], aliases: dict[str, Any], rounds: int) -> None:
    for size in (2_000, 50_000):
        for shape, text in shaped(size).items():
            samples = []
            for _ in range(rounds):
                started = time.perf_counter()
                outcome(text, schemas, aliases)
                samples.append((time.perf_counter() - started) * 1000)
            p50, p99 = percentile(samples, 0.5), percentile(samples, 0.99)
            kb = len(text.encode()) / 1024
            per_kb = p50 / kb
            print(
                f"{kb:6.1f} KB {shape:<14} p50 {p50:7.3f} ms  p99 {p99:7.3f} ms  ({per_kb:.4f} ms/KB at p50)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    schemas, aliases = tools()
    print(machine())
    pass_rates(schemas, aliases)
    timings(schemas, aliases, args.rounds)


if __name__ == "__main__":
    main()
