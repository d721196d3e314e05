"""Rewrite docs/configuration.md's settings tables from the settings model (`--check`: exit 1 when stale)."""

import sys
from pathlib import Path

from reactstep.service.settings_table import with_table

PAGE = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"


def main() -> int:
    current = PAGE.read_text()
    wanted = with_table(current)
    if "--check" in sys.argv[1:]:
        if current != wanted:
            print("docs/configuration.md's settings tables are out of date: run scripts/settings_table.py")
            return 1
        return 0
    PAGE.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
