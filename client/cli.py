"""The `reactstep` command: serve, sync, index, pull, ask, replay, mcp and hash-key."""

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from pydantic import ValidationError
from pydantic_settings import SettingsError

from reactstep.client.agent_commands import LLMNotConfigured, add_agent_commands
from reactstep.client.loop import ClientError
from reactstep.client.mcp_command import add_mcp_command
from reactstep.client.trace import ReplayMismatch
from reactstep.client.workspace_commands import add_workspace_commands
from reactstep.service.errors import ServiceError
from reactstep.service.settings import Settings
from reactstep.service.settings_errors import settings_problems
from reactstep.service.version import api_version, commit, package_version

SIGPIPE_EXIT = 141  # what a shell reports for a command ended by SIGPIPE


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    args = _parser().parse_args(argv)
    try:
        code: int = args.run(args)
        sys.stdout.flush()  # here, so a reader that went away is seen here
    except LLMNotConfigured as exc:  # a setting to make, like an invalid one
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `reactstep ... | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush writes nowhere
        return SIGPIPE_EXIT
    except (ClientError, ReplayMismatch, ServiceError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (ValidationError, SettingsError) as exc:
        problems = settings_problems(exc)
        if problems is None:
            raise
        for line in problems:
            print(f"error: {line}", file=sys.stderr)
        return 2
    return code


def _version_line() -> str:
    built = commit()
    return f"reactstep {package_version()} (API {api_version()}{f', commit {built[:12]}' if built else ''})"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reactstep", description=__doc__)
    parser.add_argument("--version", action="version", version=_version_line())
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", help="address to bind (default REACTSTEP_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default REACTSTEP_PORT or 8000; 0: a free one)")
    serve.set_defaults(run=_serve)

    add_workspace_commands(commands)
    add_agent_commands(commands)
    add_mcp_command(commands)

    hash_key = commands.add_parser("hash-key", help="make a service API key and its REACTSTEP_API_KEYS entry")
    hash_key.add_argument("--projects", default="*", help="comma-separated project globs (default: *)")
    hash_key.add_argument("--stdin", action="store_true", help="hash a key read from stdin, not a new one")
    hash_key.set_defaults(run=_hash_key)
    return parser


def _serve(args: argparse.Namespace) -> int:
    from reactstep.service.http.app import create_app
    from reactstep.service.http.auth import DEV_MODE_WARNING, serving_refusal
    from reactstep.service.http.running import announced, serving_owner
    from reactstep.service.http.serving import listening_socket, serve_forever
    from reactstep.service.logs import configure_logging
    from reactstep.service.runtime import check_embedding_model

    settings = Settings()
    check_embedding_model(settings)  # a local model this build lacks: one line and exit 2, like a bad setting
    host = args.host or settings.host
    port = settings.port if args.port is None else args.port  # 0: a free port, said below
    if (refusal := serving_refusal(settings, host)) is not None:
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    if (owner := serving_owner(settings.data_dir)) is not None:  # its store and its note stay its own
        print(
            f"error: a reactstep server (pid {owner[1]}) already serves {settings.data_dir} at {owner[0]}; "
            "commands on this data dir use it (stop it to start another)",
            file=sys.stderr,
        )
        return 2
    try:
        listening = listening_socket(host, port)
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        print(f"error: cannot listen on {host}:{port}: {reason}", file=sys.stderr)
        return 1
    port = listening.getsockname()[1]
    configure_logging(settings.log_level, settings.log_format)  # once, before anything logs
    if not settings.api_keys:
        logging.getLogger("reactstep").warning(DEV_MODE_WARNING)
    print(f"reactstep serving on http://{host}:{port} (storage: {settings.storage_backend})", flush=True)
    with listening, announced(settings.data_dir, host, port):  # the note only once the port is ours
        serve_forever(create_app(settings), listening, settings.log_level)
    return 0


def _hash_key(args: argparse.Namespace) -> int:
    from reactstep.service.http.auth import key_entry, new_key

    key = sys.stdin.readline().strip() if args.stdin else new_key()
    try:
        entry = key_entry(key, args.projects)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not args.stdin:
        print(f"key:   {key}  (give it to the client; it is not stored)")
    print(f"entry: {entry}")
    return 0
