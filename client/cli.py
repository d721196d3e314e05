"""The `reactstep` command: serve, upload, ask (the reference client), replay and mcp."""

import argparse
import os
import sys
import uuid
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from pydantic_settings import SettingsError

from reactstep.client.console import StepPrinter
from reactstep.client.loop import AgentClient, ClientError, LocalSide, Question, ToolRunner, run_loop
from reactstep.client.mcp_command import add_mcp_command
from reactstep.client.trace import ReplayMismatch, TraceRecorder, load_trace, recorded_replies, replay
from reactstep.service.errors import ServiceError
from reactstep.service.settings import Settings
from reactstep.service.settings_errors import settings_problems
from reactstep.service.version import api_version, commit, package_version

if TYPE_CHECKING:
    from reactstep.client.project_api import ProjectApi

TOOL_CALLING = ("text", "native", "auto")
SIGPIPE_EXIT = 141  # what a shell reports for a command ended by SIGPIPE
IN_PROCESS = "in-process"  # the server a folder's sync state names when no --server was given


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    args = _parser().parse_args(argv)
    try:
        code: int = args.run(args)
        sys.stdout.flush()  # here, so a reader that went away is seen here
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
    serve.add_argument("--port", type=int, help="port (default REACTSTEP_PORT or 8000)")
    serve.set_defaults(run=_serve)

    _add_workspace_commands(commands)
    _add_ask_and_replay(commands)
    add_mcp_command(commands)

    hash_key = commands.add_parser("hash-key", help="make a service API key and its REACTSTEP_API_KEYS entry")
    hash_key.add_argument("--projects", default="*", help="comma-separated project globs (default: *)")
    hash_key.add_argument("--stdin", action="store_true", help="hash a key read from stdin, not a new one")
    hash_key.set_defaults(run=_hash_key)
    return parser


def _add_workspace_commands(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    where = "server URL (default: an in-process server on this machine's store)"
    for name, help_text in (
        ("sync", "make the project hold exactly this folder's files (only changed files travel)"),
        ("upload", "the same as sync"),
        ("index", "sync the folder, then bring the project's search index in line"),
    ):
        command = commands.add_parser(name, help=help_text)
        command.add_argument("path", type=Path)
        command.add_argument("--project", required=True, help="project id")
        command.add_argument("--server", help=where)
        command.add_argument(
            "--force",
            action="store_true",
            help="overwrite files a tool changed on the server since the last sync (by default: refused)",
        )
        command.add_argument(
            "--keep-deleted", action="store_true", help="leave the server's files this folder lacks"
        )
        if name != "index":
            command.add_argument("--index", action="store_true", help="index the project afterwards")
        command.set_defaults(run=_sync, index=name == "index")

    pull = commands.add_parser("pull", help="write the changes tools made on the server into the folder")
    pull.add_argument("path", type=Path)
    pull.add_argument("--project", required=True, help="project id")
    pull.add_argument("--server", help=where)
    pull.add_argument("--force", action="store_true", help="overwrite files edited here as well")
    pull.set_defaults(run=_pull)


def _add_ask_and_replay(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    ask = commands.add_parser("ask", help="answer a question with the ReAct loop")
    ask.add_argument("question")
    ask.add_argument("--project", required=True, help="project id")
    ask.add_argument("--server", help="server URL (default: an in-process server)")
    ask.add_argument("--record", type=Path, help="write the trace to this JSON-lines file")
    ask.add_argument("--max-iterations", type=int, default=10)
    ask.add_argument("--model", help="litellm model name for this question")
    ask.add_argument("--tool-calling", choices=TOOL_CALLING, help="text, native or auto (default: server's)")
    ask.add_argument("--stream", action="store_true", help="show each thought as the model writes it")
    _add_shell_options(ask, "let the model run shell commands here, in --cwd (bash, bash_output, kill_bash)")
    ask.add_argument(
        "--approve-all",
        action="store_true",
        help="apply every change a write tool proposes without asking (by default each diff is shown "
        "and you are asked; without a terminal on stdin, changes are refused)",
    )
    ask.set_defaults(run=_ask)

    replay_cmd = commands.add_parser("replay", help="re-run a recorded trace and compare")
    replay_cmd.add_argument("trace", type=Path)
    replay_cmd.add_argument("--server", help="server URL (default: an in-process server)")
    replay_cmd.add_argument("--tool-calling", choices=TOOL_CALLING, help="replay in this mode (either works)")
    replay_cmd.add_argument("--stream", action="store_true", help="replay with streamed steps")
    replay_cmd.add_argument(
        "--ignore-version",
        action="store_true",
        help="replay even when the project's files differ from those the trace started from",
    )
    _add_shell_options(
        replay_cmd, "run the trace's shell commands again, here in --cwd (needed when it has some)"
    )
    replay_cmd.set_defaults(run=_replay)


def _add_shell_options(command: argparse.ArgumentParser, allow_help: str) -> None:
    command.add_argument("--allow-shell", action="store_true", help=allow_help)
    command.add_argument("--cwd", type=Path, help="where shell commands run (default: the current directory)")


def _serve(args: argparse.Namespace) -> int:
    from reactstep.service.http.app import create_app
    from reactstep.service.http.auth import DEV_MODE_WARNING, serving_refusal
    from reactstep.service.http.serving import serve_forever

    settings = Settings()
    host, port = args.host or settings.host, args.port or settings.port
    if (refusal := serving_refusal(settings, host)) is not None:
        print(f"error: {refusal}", file=sys.stderr)
        return 2
    if not settings.api_keys:
        print(f"warning: {DEV_MODE_WARNING}", file=sys.stderr)
    print(f"reactstep serving on http://{host}:{port} (storage: {settings.storage_backend})")
    serve_forever(create_app(settings), host, port)
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


def _sync(args: argparse.Namespace) -> int:
    from reactstep.client.progress import ProgressBar
    from reactstep.client.sync import SyncOptions, sync_folder

    if not args.path.is_dir():
        print(f"error: {args.path} is not a directory", file=sys.stderr)
        return 2
    settings = Settings()
    options = SyncOptions(
        force=args.force,
        apply_deletes=not args.keep_deleted,
        index=args.index,
        max_file_bytes=settings.upload_max_file_bytes,
    )
    uploading, indexing = ProgressBar("uploading"), ProgressBar("indexing")
    with ExitStack() as stack:
        api = stack.enter_context(_project_api(stack, args, settings))
        stack.callback(indexing.finish)
        stack.callback(uploading.finish)
        report = sync_folder(api, args.path, args.server or IN_PROCESS, options, uploading, indexing)
    print(report.summary())
    if report.index is not None:
        from reactstep.service.workspace.indexing import IndexResponse

        print(IndexResponse.model_validate(report.index).summary())
    return 0


def _pull(args: argparse.Namespace) -> int:
    from reactstep.client.progress import ProgressBar
    from reactstep.client.pull import pull_folder

    if not args.path.is_dir():
        print(f"error: {args.path} is not a directory", file=sys.stderr)
        return 2
    bar = ProgressBar("pulling")
    with ExitStack() as stack:
        api = stack.enter_context(_project_api(stack, args, Settings()))
        stack.callback(bar.finish)
        report = pull_folder(api, args.path, args.server or IN_PROCESS, args.force, bar)
    print(report.summary())
    return 0


def _project_api(stack: ExitStack, args: argparse.Namespace, settings: Settings) -> "ProjectApi":
    from reactstep.client.project_api import ProjectApi

    server_url = args.server or _in_process_server(stack, settings)
    return ProjectApi(server_url, args.project, _client_key())


def _ask(args: argparse.Namespace) -> int:
    from reactstep.client.approvals import terminal_approver

    llm_config = {"model": args.model, "tool_calling": args.tool_calling}
    question = Question(
        project_id=args.project,
        session_id=str(uuid.uuid4()),
        user_query=args.question,
        max_iterations=args.max_iterations,
        llm_config={key: value for key, value in llm_config.items() if value},
        stream=args.stream,
        client_tools=_shell_declarations(args.allow_shell),
    )
    with ExitStack() as stack:
        local = LocalSide(
            run_tool=_local_shell(stack, args.cwd or Path.cwd()) if args.allow_shell else None,
            approve=terminal_approver(args.approve_all, sys.stdin, sys.stdout),
        )
        server_url = args.server or _in_process_server(stack, Settings())
        listener = StepPrinter()
        if args.record:
            version = _project_version(stack, server_url, args.project)
            recorder = TraceRecorder(stack.enter_context(args.record.open("w")), question, version)
            listener = StepPrinter(recorder)
        outcome = run_loop(
            AgentClient(server_url, _client_key()), question, listener, listener.show_thought, local
        )
    print(f"\n{outcome.status} after {outcome.steps} steps")
    return 0 if outcome.status == "final_answer" else 3


def _replay(args: argparse.Namespace) -> int:
    from reactstep.client.scripted_llm import ScriptedLLMServer

    records = load_trace(args.trace)
    if records[0].get("client_tools") and not args.allow_shell:
        names = ", ".join(tool["name"] for tool in records[0]["client_tools"])
        raise ReplayMismatch(f"the trace runs client tools ({names}) on this machine; pass --allow-shell")
    with ExitStack() as stack:
        run_tool = _local_shell(stack, args.cwd or Path.cwd()) if args.allow_shell else None
        llm = stack.enter_context(ScriptedLLMServer(recorded_replies(records)))
        settings = Settings(llm_api_base_allowlist=[llm.base_url])
        server_url = args.server or _in_process_server(stack, settings)
        if not args.ignore_version:
            _check_pinned_version(stack, server_url, records[0])
        outcome = replay(records, server_url, llm, args.tool_calling, args.stream, run_tool, _client_key())
    print(f"replay matched: {outcome.status} after {outcome.steps} steps")
    return 0


def _project_version(stack: ExitStack, server_url: str, project_id: str) -> int:
    from reactstep.client.project_api import ProjectApi
    from reactstep.client.trace_version import project_version

    api = stack.enter_context(ProjectApi(server_url, project_id, _client_key()))
    return project_version(api)


def _check_pinned_version(stack: ExitStack, server_url: str, session: dict[str, Any]) -> None:
    from reactstep.client.project_api import ProjectApi
    from reactstep.client.trace_version import check_pinned_version

    api = stack.enter_context(ProjectApi(server_url, session["project_id"], _client_key()))
    note = check_pinned_version(api, session)
    if note is not None:
        print(note, file=sys.stderr)


def _shell_declarations(allow_shell: bool) -> list[dict[str, Any]]:
    from reactstep.client.shell_tools import shell_tool_declarations

    return shell_tool_declarations() if allow_shell else []


def _local_shell(stack: ExitStack, cwd: Path) -> ToolRunner:
    """The shell tools, run in cwd; their background commands stop when the stack closes or on SIGTERM."""
    from reactstep.client.processes import exit_on_termination_signals
    from reactstep.client.shell_tools import LocalShell

    if not cwd.is_dir():
        raise ClientError(f"--cwd {cwd} is not a directory")
    stack.enter_context(exit_on_termination_signals())
    return stack.enter_context(LocalShell(cwd.resolve())).run


def _in_process_server(stack: ExitStack, settings: Settings) -> str:
    from reactstep.service.http.app import create_app
    from reactstep.service.http.serving import BackgroundServer

    server = stack.enter_context(BackgroundServer(create_app(settings)))
    return server.url


def _client_key() -> str | None:
    """The service key the client commands send (REACTSTEP_CLIENT_API_KEY)."""
    key = Settings().client_api_key
    return key.get_secret_value() if key else None
