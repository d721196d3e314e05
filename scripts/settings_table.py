"""Rewrite README.md's settings table from the settings model (`--check`: exit 1 when it is out of date)."""

import sys
from pathlib import Path

from reactstep.service.settings_table import with_table

README = Path(__file__).resolve().parent.parent / "README.md"


def main() -> int:
    current = README.read_text()
    wanted = with_table(current)
    if "--check" in sys.argv[1:]:
        if current != wanted:
            print("README.md's settings table is out of date: run .venv/bin/python scripts/settings_table.py")
            return 1
        return 0
    README.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
