"""Rewrite docs/http-api.md's table of endpoints from openapi.yaml (`--check`: exit 1 when it is stale)."""

import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "http-api.md"
BEGIN = "<!-- endpoints table: made by scripts/api_table.py from openapi.yaml; do not edit -->"
END = "<!-- end of the endpoints table -->"
METHODS = ("get", "put", "post", "delete", "patch")


def endpoints_table(contract: dict[str, Any]) -> str:
    """One row per operation, in the contract's order: method and path, what it does, key, statuses."""
    keyed_by_default = bool(contract.get("security"))
    rows = ["| endpoint | what it does | key | statuses |", "|---|---|---|---|"]
    for path, operations in contract["paths"].items():
        for method, operation in operations.items():
            if method not in METHODS:
                continue
            keyed = bool(operation["security"]) if "security" in operation else keyed_by_default
            statuses = ", ".join(sorted(str(status) for status in operation.get("responses", {})))
            summary = operation.get("summary", "").replace("|", "\\|")
            rows.append(
                f"| `{method.upper()} {path}` | {summary} | {'yes' if keyed else 'no'} | {statuses} |"
            )
    return "\n".join(rows)


def with_table(page: str, contract: dict[str, Any]) -> str:
    head, found, rest = page.partition(BEGIN)
    _, found_end, tail = rest.partition(END)
    if not (found and found_end):
        raise ValueError(f"{PAGE.name} lacks the markers {BEGIN!r} and {END!r}")
    return f"{head}{BEGIN}\n{endpoints_table(contract)}\n{END}{tail}"


def main() -> int:
    contract = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    current = PAGE.read_text()
    wanted = with_table(current, contract)
    if "--check" in sys.argv[1:]:
        if current != wanted:
            print(
                "docs/http-api.md's endpoints table is out of date: run .venv/bin/python scripts/api_table.py"
            )
            return 1
        return 0
    PAGE.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
