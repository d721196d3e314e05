"""Which server a command talks to, and what the server package adds to the command line.

Every command picks its server with server_for (mcp with found_server, as it runs its tools here when
there is none), in this order:

    --server URL             that one
    REACTSTEP_SERVER         else that one
    <data_dir>/server.json   else the `reactstep serve` whose note is on this data dir, when its process
                             lives (its name and form: contract/server_note.py); it listens
                             before it writes the note and may build its app for a while after, so it
                             is waited for (NOTE_WAIT_S), and one that never answers /healthz is an
                             error: nothing else may open that data dir
    in process               else one started in this process for the command's duration, when the server
                             package is installed (entry point `in_process_server` of the group below)
    none of them             ClientError: what to pass or install

The server package declares its parts in the entry-point group `reactstep.server` (commands,
in_process_server, llm_problem, local_mcp, version_line; service/commands.py); a client-only install
has none, and the CLI says what to install when a command needs one.
"""

import sys
import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Literal

import httpx

from reactstep.client.api.errors import ClientError
from reactstep.client.settings import ClientSettings, ConfigError
from reactstep.contract.server_note import serving_owner

HOOKS = "reactstep.server"
# A served data dir's note is written once the port listens, before the app is built (seconds on a busy
# machine): its server is waited for this long, asked at most ATTEMPT_MAX_S at a time.
NOTE_WAIT_S = 60.0
ATTEMPT_MIN_S, ATTEMPT_MAX_S = 0.5, 5.0
WAIT_INTERVAL_S = 0.2
INSTALL_SERVER = "pip install reactstep"


class ServerPackageMissing(ClientError):
    """The command needs a part of the server package, which is not installed."""


class ServedElsewhere(ClientError):
    """A server in this process was asked for on a data dir a live server serves."""


class ServerNotAnswering(ClientError):
    """A live process's note says it serves this data dir, but it does not answer."""


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


Origin = Literal["named", "noted", "in process"]  # --server or REACTSTEP_SERVER; the data dir's note; here


@dataclass(frozen=True)
class Found:
    """The server a command would use (None: none yet) and the reason, said on stderr."""

    url: str | None
    why: str
    origin: Origin = "named"


@dataclass(frozen=True)
class Server:
    """The server a command talks to."""

    url: str
    origin: Origin

    @property
    def local(self) -> bool:
        """This data dir's server (its note's, or one in this process), not one named by URL."""
        return self.origin != "named"


def server_for(
    stack: ExitStack,
    named: str | None,
    settings: ClientSettings,
    overrides: Mapping[str, Any] | None = None,
    before_start: Callable[[], None] | None = None,
) -> Server:
    """The server to send the command's requests to, said on stderr; `overrides`: settings of a server
    started in this process, `before_start`: what must hold before one is (it raises when not)."""
    found = found_server(named, settings)
    if found.url is not None:
        print(found.why, file=sys.stderr)
        return Server(found.url, found.origin)
    if before_start is not None:
        before_start()
    return Server(in_process_server(stack, settings, overrides or {}, found.why), "in process")


def found_server(named: str | None, settings: ClientSettings) -> Found:
    """The server --server or REACTSTEP_SERVER names, else the live one of this data dir's note; else
    Found(None, why none is)."""
    if named:
        return Found(named, f"using the server at {named} (--server)")
    if settings.server:
        return Found(settings.server, f"using the server at {settings.server} (REACTSTEP_SERVER)")
    return noted_server(settings.data_dir)


def in_process_server(
    stack: ExitStack, settings: ClientSettings, overrides: Mapping[str, Any], why: str | None = None
) -> str:
    """A server of this process on a loopback port for as long as the stack is open; `why`: why no
    other is used (by default: the data dir's note, checked now; ServedElsewhere when a live server
    serves the data dir, whose store a second server would open)."""
    if why is None:
        noted = noted_server(settings.data_dir)
        if noted.url is not None:
            raise ServedElsewhere(
                f"{settings.data_dir} is served by the server at {noted.url}: use it (--server or "
                "REACTSTEP_SERVER), or stop it, or set REACTSTEP_DATA_DIR to another data dir"
            )
        why = noted.why
    purpose = f"no server to use: pass --server URL or set REACTSTEP_SERVER ({why}); a server in this process"
    start = required_hook("in_process_server", purpose)
    try:
        url: str = start(stack, overrides)
    except ValueError as exc:  # the server's settings, judged on its side: one line each
        raise ConfigError(str(exc)) from None
    say_in_process(settings.data_dir, why)
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


def say_in_process(data_dir: Path, why: str) -> None:
    """Say on stderr that the command runs in this process, and why."""
    print(f"running in this process on {data_dir} (no --server, and {why})", file=sys.stderr)


def noted_server(data_dir: Path, wait_s: float = NOTE_WAIT_S) -> Found:
    """The live server of the data dir's note, once it answers /healthz; Found(None, why) when no live
    process left a note or nothing listens at its URL (a note outliving its server, its pid reused);
    ServerNotAnswering when its process listens there but does not answer within wait_s."""
    if (owner := serving_owner(data_dir)) is None:
        return Found(None, "no `reactstep serve` runs on it")
    url, pid = owner
    deadline = time.monotonic() + wait_s
    said_waiting = False
    # trust_env=False: the note names this machine, never a proxy's business (HTTP_PROXY would take it)
    with httpx.Client(trust_env=False, follow_redirects=False) as http:
        while True:
            try:
                status = http.get(f"{url}/healthz", timeout=_attempt_s(deadline)).status_code
            except httpx.ConnectError:
                return Found(None, f"nothing listens at {url}, where the note of pid {pid} says it serves")
            except httpx.HTTPError as exc:
                problem = f"{type(exc).__name__}"
            else:
                if status == 200:
                    return Found(url, f"using the server running on {data_dir} at {url}", "noted")
                problem = f"it answered {status}"
            if time.monotonic() >= deadline:
                raise ServerNotAnswering(
                    f"the server of {data_dir} (pid {pid}, {url}) did not answer /healthz within "
                    f"{wait_s:g} s ({problem}); a server in this process cannot open that data dir while it "
                    "runs: wait for it, stop it, or pass --server URL"
                )
            if not said_waiting:
                print(f"waiting for the server at {url} (pid {pid}) to answer", file=sys.stderr)
                said_waiting = True
            time.sleep(WAIT_INTERVAL_S)


def _attempt_s(deadline: float) -> float:
    return max(ATTEMPT_MIN_S, min(ATTEMPT_MAX_S, deadline - time.monotonic()))
