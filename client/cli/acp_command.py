"""`reactstep acp`: reactstep as an Agent Client Protocol agent, started by an editor, over stdio.

The server is the one every command finds (servers.py: --server, REACTSTEP_SERVER, this data dir's
`reactstep serve`, else one in this process with the server package); the agent (client/acp/) is its
thin client. stdout carries the protocol alone: anything else printed goes to stderr. It needs the
client's acp extra (the protocol's SDK): without it, exit 2 naming the install.
"""

import argparse
import asyncio
import sys
from contextlib import ExitStack
from typing import TypeAlias

from reactstep.client.cli.exit_codes import OK, USAGE
from reactstep.client.cli.mcp_command import protocol_output
from reactstep.client.cli.servers import server_for
from reactstep.client.cli.workspace_commands import LOCAL
from reactstep.client.settings import ClientSettings

INSTALL_ACP = 'pip install "reactstep-client[acp]"'
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def add_acp_command(commands: Commands) -> None:
    """The `acp` subcommand."""
    command = commands.add_parser("acp", help="run as an editor's coding agent over ACP (stdio)")
    command.add_argument(
        "--server", help="server URL (default: the server running on this data dir, else one in this process)"
    )
    command.add_argument(
        "--project", help="project id for every session (default: one per folder, named after it)"
    )
    command.add_argument("--model", help="litellm model name for the steps (default: the server's)")
    command.add_argument("--max-iterations", type=int, default=10, help="steps per prompt at most")
    command.add_argument(
        "--index", action="store_true", help="index the project after each session's sync (for code_search)"
    )
    command.add_argument(
        "--context-window",
        type=int,
        default=32_768,
        help="the context size the editor's usage meter shows until the server reports its own",
    )
    command.set_defaults(run=run_acp)


def run_acp(args: argparse.Namespace) -> int:
    """Serve the editor until it closes stdin."""
    try:
        from reactstep.client.acp.agent import AgentOptions, serve_editor
        from reactstep.client.acp.turn import TurnOptions
    except ImportError:
        print(f"error: reactstep acp needs the acp extra: {INSTALL_ACP}", file=sys.stderr)
        return USAGE
    settings: ClientSettings = args.settings
    protocol = protocol_output()
    with ExitStack() as stack:
        server = server_for(stack, args.server, settings)
        turns = TurnOptions(
            max_steps=args.max_iterations,
            llm={"model": args.model} if args.model else {},
            window=args.context_window,
        )
        options = AgentOptions(
            server_name=LOCAL if server.local else server.url,
            project=args.project,
            index=args.index,
            max_file_bytes=settings.upload_max_file_bytes,
            turns=turns,
        )
        asyncio.run(serve_editor(server.url, settings.api_key, options, protocol))
    return OK
