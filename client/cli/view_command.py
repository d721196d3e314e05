"""`reactstep view TRACE [--report R] [-o PAGE]`: a trace as one HTML page (traces/viewer.py)."""

import argparse
from pathlib import Path

from reactstep.client.traces.viewer import write_page


def add_view_command(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """The `view` subcommand."""
    command = commands.add_parser("view", help="write a recorded trace as one self-contained HTML page")
    command.add_argument("trace", type=Path, help="a trace written by `reactstep ask --record`")
    command.add_argument("--report", type=Path, help="a replay report (JSON): its diverging step is marked")
    command.add_argument("-o", "--output", type=Path, help="where to write the page (default: TRACE.html)")
    command.set_defaults(run=run_view)


def run_view(args: argparse.Namespace) -> int:
    """Write the page and print where it is."""
    print(write_page(args.trace, args.report, args.output))
    return 0
