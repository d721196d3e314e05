"""The exit statuses come from one table (client/cli/exit_codes.py): `reactstep --help` ends with it, the
docs page of the CLI holds it, and the commands return what it says."""

from pathlib import Path

import pytest

from reactstep.client.cli.exit_codes import EXIT_CODES, FAILED, USAGE, help_epilog, markdown_table
from reactstep.client.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def test_help_ends_with_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["--help"])
    assert ended.value.code == 0
    shown = capsys.readouterr().out
    assert shown.endswith("\n" + help_epilog() + "\n")
    listed = [line.split()[0] for line in help_epilog().splitlines()[1:] if not line.startswith("     ")]
    assert listed == ["0", "1", "2", "3", "130", "141", "128+N"] == list(EXIT_CODES)


def test_the_docs_page_holds_the_table() -> None:
    page = (ROOT / "docs" / "python-client.md").read_text()
    assert f"\n{markdown_table()}\n" in page


@pytest.mark.parametrize(
    ("argv", "status"),
    [
        (["replay", "trace.jsonl", "--live"], USAGE),  # --live without --from-step
        (["sync", "no/such/folder", "--project", "demo"], USAGE),
        (["sync", ".", "--project", "demo", "--server", "http://127.0.0.1:9"], FAILED),  # nothing listens
    ],
)
def test_the_commands_return_the_tables_statuses(
    argv: list[str], status: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == status
