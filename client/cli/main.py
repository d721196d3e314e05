"""The `reactstep` command: sync, index, pull, ask, replay, view, mcp and acp; with the server package
installed, serve and hash-key too (service/commands.py, through the entry points servers.py reads)."""

import argparse
import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from reactstep.client.api.errors import ClientError
from reactstep.client.cli.acp_command import add_acp_command
from reactstep.client.cli.agent_commands import LLMNotConfigured, add_agent_commands
from reactstep.client.cli.exit_codes import FAILED, INTERRUPTED, SIGPIPE, USAGE, help_epilog
from reactstep.client.cli.mcp_command import add_mcp_command
from reactstep.client.cli.servers import INSTALL_SERVER, server_hook
from reactstep.client.cli.view_command import add_view_command
from reactstep.client.cli.workspace_commands import add_workspace_commands
from reactstep.client.settings import ClientSettings, ConfigError
from reactstep.client.traces.format import ReplayMismatch

DESCRIPTION = (
    "reactstep's command line: sync a folder, ask the agent, serve MCP, be an editor's agent over ACP "
    "(serve needs the server package)."
)
SERVER_COMMANDS = {"serve": "run the HTTP service", "hash-key": "make a service API key"}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in SERVER_COMMANDS and server_hook("commands") is None:
        print(f"error: {argv[0]} needs the server package: {INSTALL_SERVER}", file=sys.stderr)
        return USAGE  # whatever its options: they are the server package's to read
    args = _parser().parse_args(argv)
    try:
        if args.command not in SERVER_COMMANDS:  # the server's commands read their own settings
            args.settings = ClientSettings.from_env()
        code: int = args.run(args)
        sys.stdout.flush()  # here, so a reader that went away is seen here
    except (LLMNotConfigured, ConfigError) as exc:  # a setting to make, or one that is invalid
        print(*(f"error: {line}" for line in str(exc).splitlines()), sep="\n", file=sys.stderr)
        return USAGE
    except BrokenPipeError:  # `reactstep ... | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush writes nowhere
        return SIGPIPE
    except (ClientError, ReplayMismatch, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return FAILED
    except KeyboardInterrupt:  # Ctrl-C: what was under way has been closed on the way out
        if args.command in SERVER_COMMANDS:
            raise  # serve shuts down gracefully, then ends by SIGINT as uvicorn re-raises it
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
    return code


class _VersionAction(argparse.Action):
    """--version: the server package's line when it is installed, else the client distribution's."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(version_line())
        parser.exit()


def version_line() -> str:
    """reactstep <version> (API ..., commit ...) with the server package; reactstep-client <version>."""
    if (server_line := server_hook("version_line")) is not None:
        line: str = server_line()
        return line
    try:
        return f"reactstep-client {version('reactstep-client')}"
    except PackageNotFoundError:
        return "reactstep-client unknown"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reactstep",
        description=DESCRIPTION,
        epilog=help_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if (add_server_commands := server_hook("commands")) is not None:
        add_server_commands(commands)
    else:
        for name, help_text in SERVER_COMMANDS.items():
            commands.add_parser(name, help=f"{help_text} (needs the server package)")  # main says so
    add_workspace_commands(commands)
    add_agent_commands(commands)
    add_mcp_command(commands)
    add_acp_command(commands)
    add_view_command(commands)
    return parser
