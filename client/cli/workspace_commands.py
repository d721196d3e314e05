"""The workspace commands: sync (and its aliases upload and index) and pull, over the project routes."""

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from reactstep.client.cli.exit_codes import OK, USAGE
from reactstep.client.cli.servers import server_for
from reactstep.client.settings import ClientSettings

if TYPE_CHECKING:
    from reactstep.client.library import Client

LOCAL = "in-process"  # the server a folder's sync state names for this data dir's (in this process or noted)
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def add_workspace_commands(commands: Commands) -> None:
    """The sync, upload, index and pull commands."""
    where = "server URL (default: the server running on this data dir, else one in this process)"
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
            "--keep-both",
            action="store_true",
            help="on such conflicts keep the server's copy here as name.conflict-<version>.ext, then "
            "overwrite it with this folder's",
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


def _sync(args: argparse.Namespace) -> int:
    from reactstep.client.cli.progress import ProgressBar
    from reactstep.client.workspace.sync import SyncOptions, sync_folder

    if not args.path.is_dir():
        print(f"error: {args.path} is not a directory", file=sys.stderr)
        return USAGE
    settings: ClientSettings = args.settings
    options = SyncOptions(
        force=args.force,
        keep_both=args.keep_both,
        apply_deletes=not args.keep_deleted,
        index=args.index,
        max_file_bytes=settings.upload_max_file_bytes,
    )
    uploading, indexing = ProgressBar("uploading"), ProgressBar("indexing")
    with ExitStack() as stack:
        server, client = _client(stack, args)
        stack.callback(indexing.finish)
        stack.callback(uploading.finish)
        report = client.do(sync_folder(args.project, args.path, server, options, uploading, indexing))
    print(report.summary())
    if report.index is not None:
        print(index_summary(report.index))
    return OK


def index_summary(run: dict[str, Any]) -> str:
    """The one line `reactstep index` prints of an index run's answer (IndexResponse)."""
    files = run["files"]
    what = f"re-indexed {files} changed files" if run.get("incremental") else f"indexed {files} files"
    noise: dict[str, int] = run.get("noise") or {}
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(noise.items()))
    left_out = f", {sum(noise.values())} left out of search as noise ({kinds})" if noise else ""
    return (
        f"{what}: {run['chunks']} chunks, {run['embedded']} embedded, {run['reused']} reused, "
        f"{run['removed']} removed, {run['skipped']} skipped{left_out}; "
        f"{run['parsed']} parsed for {run['symbols']} symbols in {run['seconds']:.1f}s"
    )


def _pull(args: argparse.Namespace) -> int:
    from reactstep.client.cli.progress import ProgressBar
    from reactstep.client.workspace.pull import pull_folder

    if not args.path.is_dir():
        print(f"error: {args.path} is not a directory", file=sys.stderr)
        return USAGE
    bar = ProgressBar("pulling")
    with ExitStack() as stack:
        server, client = _client(stack, args)
        stack.callback(bar.finish)
        report = client.do(pull_folder(args.project, args.path, server, args.force, bar))
    print(report.summary())
    return OK


def _client(stack: ExitStack, args: argparse.Namespace) -> "tuple[str, Client]":
    """The name the folder's sync state gives the server (its URL, or LOCAL), and a client of it."""
    from reactstep.client.library import Client

    settings: ClientSettings = args.settings
    server = server_for(stack, args.server, settings)
    client = stack.enter_context(Client(server.url, settings.api_key))
    return LOCAL if server.local else server.url, client
