"""Rewrite docs/http-api.md's tables from the contract and the error types (`--check`: exit 1 when stale).

The endpoints table comes from openapi.yaml; the error codes table from the error tree (every subclass
of contract/errors.py's ServiceError, in service/ and tools/), grouped by HTTP status.
"""

import sys
from pathlib import Path
from typing import Any

import yaml
from generated_page import write_or_check

from reactstep.contract.errors import ServiceError
from reactstep.service import errors as service_errors
from reactstep.tools import errors as tools_errors

LEAVES = (service_errors, tools_errors)  # imported so that every leaf of the tree is a known subclass

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "http-api.md"
METHODS = ("get", "put", "post", "delete", "patch")
ENDPOINTS = (
    "<!-- endpoints table: made by scripts/api_table.py from openapi.yaml; do not edit -->",
    "<!-- end of the endpoints table -->",
)
ERRORS = (
    "<!-- errors table: made by scripts/api_table.py from the error tree; do not edit -->",
    "<!-- end of the errors table -->",
)
WHEN = {
    400: "a malformed request",
    401: "no valid service key",
    403: "the key, the browser origin or the server's policy (a provider, an api_base) may not do this",
    404: "no such project, file, version or step, or no such route",
    405: "a known path asked with a method it does not answer (with Allow)",
    408: "the body came too slowly",
    409: "the project changed in a way the request did not expect, or the run it waited for was stopped",
    412: "an If-Match / If-None-Match header no longer holds; nothing was changed",
    413: "the body is too large",
    422: "the request is readable but not valid (the message names the field)",
    429: "the service key is at one of its limits (with Retry-After; the details name the limit)",
    499: "never received: the client left and its step was cancelled (the server's log and metrics say so)",
    500: "a failure of the server itself",
    502: "a back-end answered wrongly",
    503: "a back-end is down or rate-limited, or the server is saturated (with Retry-After)",
    504: "a back-end did not answer within its deadline",
}


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


def error_tree() -> list[type[ServiceError]]:
    """Every class of the error tree: the root and each subclass, once."""
    found: list[type[ServiceError]] = []
    pending: list[type[ServiceError]] = [ServiceError]
    while pending:
        kind = pending.pop()
        if kind not in found:
            found.append(kind)
            pending.extend(kind.__subclasses__())
    return found


def errors_table() -> str:
    """One row per HTTP status an error can have: when, and every code with that status."""
    codes: dict[int, set[str]] = {}
    for kind in error_tree():
        codes.setdefault(kind.status, set()).update(kind.carried_codes())
    rows = ["| status | when | codes |", "|---|---|---|"]
    for status in sorted(codes):
        named = ", ".join(f"`{code}`" for code in sorted(codes[status]))
        rows.append(f"| {status} | {WHEN.get(status, '')} | {named} |")
    return "\n".join(rows)


def with_table(page: str, markers: tuple[str, str], table: str) -> str:
    begin, end = markers
    head, found, rest = page.partition(begin)
    _, found_end, tail = rest.partition(end)
    if not (found and found_end):
        raise ValueError(f"{PAGE.name} lacks the markers {begin!r} and {end!r}")
    return f"{head}{begin}\n{table}\n{end}{tail}"


def main() -> int:
    contract = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    wanted = with_table(PAGE.read_text(), ENDPOINTS, endpoints_table(contract))
    return write_or_check(PAGE, with_table(wanted, ERRORS, errors_table()), "scripts/api_table.py")


if __name__ == "__main__":
    sys.exit(main())
