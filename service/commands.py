"""What the server package adds to the `reactstep` command, through the entry points of the group
`reactstep.server` that the top-level pyproject declares (a client-only install has none of them):

    commands            `serve` and `hash-key`
    in_process_server   a server on a loopback port for a command that found none running: its URL
    llm_problem         why the in-process server could not call the model, before `ask` starts it
    local_mcp           `reactstep mcp` with no server to bridge to: the tools run in this process
    version_line        what `reactstep --version` prints: package, API and commit

The server's settings are read and judged here: an invalid one is an InvalidSettings whose message is
one line per setting (the client prints them, exit 2).
"""

import argparse
import logging
import os
import secrets
import signal
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import IO, Any, TypeAlias

from pydantic import SecretStr, ValidationError
from pydantic_settings import SettingsError

from reactstep.contract.errors import ServiceError
from reactstep.service.setting_problems import settings_problems
from reactstep.service.settings import Settings

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class InvalidSettings(ValueError):
    """The server's settings cannot be used: one line per problem."""


def add_commands(commands: Commands) -> None:
    """The `serve` and `hash-key` subcommands."""
    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", help="address to bind (default REACTSTEP_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default REACTSTEP_PORT or 8000; 0: a free one)")
    serve.set_defaults(run=_reporting_settings(_serve))

    hash_key = commands.add_parser("hash-key", help="make a service API key and its REACTSTEP_API_KEYS entry")
    hash_key.add_argument("--projects", default="*", help="comma-separated project globs (default: *)")
    hash_key.add_argument("--stdin", action="store_true", help="hash a key read from stdin, not a new one")
    hash_key.add_argument("--tokens-per-day", type=int, help="the key's limit of tokens per UTC day")
    hash_key.add_argument("--usd-per-day", type=float, help="the key's limit of US dollars per UTC day")
    hash_key.add_argument(
        "--requests-per-minute", type=int, help="the key's limit of react_step calls per minute"
    )
    hash_key.set_defaults(run=_hash_key)


def version_line() -> str:
    """reactstep <version> (API <version>[, commit <12 hex>])."""
    from reactstep.service.version import api_version, commit, package_version

    built = commit()
    return f"reactstep {package_version()} (API {api_version()}{f', commit {built[:12]}' if built else ''})"


def in_process_server(stack: ExitStack, overrides: Mapping[str, Any]) -> str:
    """A server of this process on a loopback port while the stack is open; its URL."""
    from reactstep.service.http.app import create_app
    from reactstep.service.http.serving import BackgroundServer

    with judged_settings():
        settings = Settings(**overrides)
        if settings.approval_secret is None:
            # Its approval tokens live no longer than this command, so a random key is the right one
            # (and the server-only warning about a missing shared secret does not concern the user here).
            settings = settings.model_copy(update={"approval_secret": SecretStr(secrets.token_hex(32))})
        app = create_app(settings)
    server = stack.enter_context(BackgroundServer(app))
    _say_errors()
    return server.url


def _say_errors() -> None:
    """In a command's process whose logging nothing configured: the server's errors (something broke in
    it) as lines that name what happened; not its warnings, meant for operators (`llm gave up` after each
    retried step), as the command's own answer says what failed (Python's last resort printed them bare)."""
    from reactstep.service.logs.lines import CommandFormatter

    own = logging.getLogger("reactstep")
    if logging.getLogger().handlers or own.handlers:  # an application (or pytest) decides where lines go
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.ERROR)
    handler.setFormatter(CommandFormatter())
    own.addHandler(handler)


def llm_problem(model: str | None) -> str | None:
    """Why the in-process server could not call `model` (its default when None), or None."""
    from reactstep.service.llm.configured import llm_problem as problem

    with judged_settings():
        settings = Settings()
    return problem(settings, model)


def local_mcp(project_id: str, output: IO[bytes]) -> int:
    """The MCP tools over stdio, run in this process on the local data dir; exit 1 before serving
    when the project cannot be used, 2 on an invalid setting."""
    from reactstep.service.mcp.local import local_caller, local_tools
    from reactstep.service.mcp.server import build_server
    from reactstep.service.mcp.transports import run_stdio
    from reactstep.service.runtime import build_runtime
    from reactstep.service.workspace.projects import require_project

    try:
        with judged_settings():
            runtime = build_runtime(Settings())
    except InvalidSettings as exc:
        print(*(f"error: {line}" for line in str(exc).splitlines()), sep="\n", file=sys.stderr)
        return 2
    try:
        require_project(project_id, runtime)
        run_stdio(build_server(local_tools(runtime), local_caller(runtime), project_id), output)
    except ServiceError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    finally:
        runtime.vectors.close()
    return 0


@contextmanager
def judged_settings() -> Iterator[None]:
    """An invalid setting met in the block becomes InvalidSettings; other errors pass."""
    try:
        yield
    except (ValidationError, SettingsError) as exc:
        problems = settings_problems(exc)
        if problems is None:
            raise
        raise InvalidSettings("\n".join(problems)) from None


def _reporting_settings(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def reporting(args: argparse.Namespace) -> int:
        try:
            with judged_settings():
                return run(args)
        except InvalidSettings as exc:
            print(*(f"error: {line}" for line in str(exc).splitlines()), sep="\n", file=sys.stderr)
            return 2
        except ServiceError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 1

    return reporting


def _serve(args: argparse.Namespace) -> int:
    from reactstep.contract.server_note import serving_owner
    from reactstep.service.http.app import create_app
    from reactstep.service.http.auth import DEV_MODE_WARNING, serving_refusal
    from reactstep.service.http.running import announced
    from reactstep.service.http.serving import listening_socket, serve_forever
    from reactstep.service.logs.writing import configure_logging
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
    try:
        with listening, announced(settings.data_dir, host, port):  # the note only once the port is ours
            serve_forever(create_app(settings), listening, settings.log_level)
    except KeyboardInterrupt:  # uvicorn shuts down on Ctrl-C, then raises it again: all is done
        end_by_sigint()
    return 0


def end_by_sigint() -> None:
    """End as a process that Ctrl-C killed (its parent sees SIGINT), without a Python traceback."""
    sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)


def _hash_key(args: argparse.Namespace) -> int:
    from reactstep.service.budgets.limits import KeyLimits
    from reactstep.service.http.auth import key_entry, new_key

    key = sys.stdin.readline().strip() if args.stdin else new_key()
    limits = KeyLimits("", args.tokens_per_day, args.usd_per_day, args.requests_per_minute).text()
    try:
        entry = key_entry(key, args.projects, limits)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not args.stdin:
        print(f"key:   {key}  (give it to the client; it is not stored)")
    print(f"entry: {entry}")
    return 0
