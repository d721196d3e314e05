"""Write a docs page whose tables are made from the code, or with `--check` say it is out of date."""

import sys
from pathlib import Path


def write_or_check(page: Path, wanted: str, command: str) -> int:
    """Exit status: rewrite `page` with `wanted` (0), or with --check, 1 when it differs."""
    if "--check" not in sys.argv[1:]:
        page.write_text(wanted)
        return 0
    if page.read_text() != wanted:
        print(f"docs/{page.name}'s tables are out of date: run .venv/bin/python {command}")
        return 1
    return 0
