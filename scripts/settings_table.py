"""Rewrite docs/configuration.md's settings tables from the settings model (`--check`: exit 1 when stale)."""

import sys
from pathlib import Path

from generated_page import write_or_check

from reactstep.service.settings_table import with_table

PAGE = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"


def main() -> int:
    return write_or_check(PAGE, with_table(PAGE.read_text()), "scripts/settings_table.py")


if __name__ == "__main__":
    sys.exit(main())
