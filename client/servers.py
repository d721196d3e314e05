"""Which server a command talks to, and what the server package adds to the command line.

    --server URL             that one
    REACTSTEP_SERVER         else that one
    <data_dir>/server.json   else the `reactstep serve` whose note is on this data dir, when its process
                             lives and answers /healthz (the server writes the note: service/http/running.py)
    in process               else one started in this process for the command's duration, when the server
                             package is installed (entry point `in_process_server` of the group below)
    none of them             ClientError: what to pass or install

The server package declares its parts in the entry-point group `reactstep.server` (commands,
in_process_server, llm_problem, local_mcp, version_line; service/commands.py); a client-only install
has none, and the CLI says what to install when a command needs one.
"""

import json
import os
import sys
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import httpx

from reactstep.client.config import ClientConfig, ConfigError
from reactstep.client.errors import ClientError

HOOKS = "reactstep.server"
NOTE = "server.json"  # the note's name and body ({"url", "pid"}) are service/http/running.py's
HEALTH_TIMEOUT_S = 5.0  # a live server on a busy machine; a note whose process is gone costs nothing
INSTALL_SERVER = "pip install reactstep"


class ServerPackageMissing(ClientError):
    """The command needs a part of the server package, which is not installed."""


@cache
def server_hook(name: str) -> Callable[..., Any] | None:
    """The server package's entry point `name`, loaded; None in a client-only install."""
    found = entry_points(group=HOOKS, name=name)
    for entry in found:
        hook: Callable[..., Any] = entry.load()
        return hook
    return None


def required_hook(name: str, purpose: str) -> Callable[..., Any]:
    """server_hook(name), or ServerPackageMissing saying what `purpose` needs."""
    hook = server_hook(name)
    if hook is None:
        raise ServerPackageMissing(f"{purpose} needs the server package: {INSTALL_SERVER}")
    return hook


def server_for(
    stack: ExitStack, named: str | None, config: ClientConfig, overrides: Mapping[str, Any] | None = None
) -> str:
    """The base URL to send the command's requests to; `overrides`: settings of an in-process server."""
    return named_or_running(named, config) or in_process_server(stack, config, overrides or {})


def named_or_running(named: str | None, config: ClientConfig) -> str | None:
    """The server --server or REACTSTEP_SERVER names, else one running on this data dir, else None;
    said on stderr."""
    if named:
        print(f"using the server at {named} (--server)", file=sys.stderr)
        return named
    if config.server:
        print(f"using the server at {config.server} (REACTSTEP_SERVER)", file=sys.stderr)
        return config.server
    if (running := running_server(config.data_dir)) is not None:
        print(f"using the server running on {config.data_dir} at {running}", file=sys.stderr)
        return running
    return None


def in_process_server(stack: ExitStack, config: ClientConfig, overrides: Mapping[str, Any]) -> str:
    """A server of this process on a loopback port for as long as the stack is open."""
    purpose = (
        "no server to use: pass --server URL or set REACTSTEP_SERVER "
        f"({config.data_dir}: {not_running(config.data_dir)}); a server in this process"
    )
    start = required_hook("in_process_server", purpose)
    try:
        url: str = start(stack, overrides)
    except ValueError as exc:  # the server's settings, judged on its side: one line each
        raise ConfigError(str(exc)) from None
    say_in_process(config.data_dir)
    return url


def in_process_llm_problem(model: str | None) -> str | None:
    """Why a server in this process could not call `model` (its default when None), or None; None too
    without the server package (starting one says what to install)."""
    check = server_hook("llm_problem")
    if check is None:
        return None
    try:
        problem: str | None = check(model)
    except ValueError as exc:  # the server's settings, judged on its side
        raise ConfigError(str(exc)) from None
    return problem


def say_in_process(data_dir: Path) -> None:
    """Say on stderr that the command runs in this process, and why."""
    print(
        f"running in this process on {data_dir} (no --server, and {not_running(data_dir)})", file=sys.stderr
    )


def not_running(data_dir: Path) -> str:
    """Why no running server on data_dir is used."""
    owner = serving_owner(data_dir)
    if owner is None:
        return "no `reactstep serve` runs on it"
    return f"the server of its note (pid {owner[1]}, {owner[0]}) does not answer"


def serving_owner(data_dir: Path) -> tuple[str, int] | None:
    """(url, pid) of the data dir's note when another live process left it, answering or not; else None."""
    try:
        found = json.loads((data_dir / NOTE).read_text())
        url, pid = str(found["url"]), int(found["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if pid == os.getpid() or not _alive(pid):
        return None
    return url, pid


def running_server(data_dir: Path) -> str | None:
    """The URL of a live server serving this data dir, or None."""
    if (owner := serving_owner(data_dir)) is None:
        return None
    url = owner[0]
    try:
        answered = httpx.get(f"{url}/healthz", timeout=HEALTH_TIMEOUT_S, follow_redirects=False)
    except httpx.HTTPError:
        return None
    return url if answered.status_code == 200 else None


def client_key() -> str | None:
    """The service key the client commands send (REACTSTEP_CLIENT_API_KEY)."""
    return ClientConfig.from_env().api_key


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, under another user
        return True
    return True
