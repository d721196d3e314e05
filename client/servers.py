"""Which server a command talks to: the one --server names, else a `reactstep serve` running on this
data dir (service/http/running.py), else one started in this process for the command's duration."""

import secrets
import sys
from contextlib import ExitStack

from pydantic import SecretStr

from reactstep.service.settings import Settings


def server_for(stack: ExitStack, named: str | None, settings: Settings) -> str:
    """The base URL to send the command's requests to."""
    return named_or_running(named, settings) or in_process_server(stack, settings)


def named_or_running(named: str | None, settings: Settings) -> str | None:
    """The server --server names, else one running on this data dir, else None; said on stderr."""
    from reactstep.service.http.running import running_server, serving_owner

    if named:
        print(f"using the server at {named} (--server)", file=sys.stderr)
        return named
    if (running := running_server(settings.data_dir)) is not None:
        print(f"using the server running on {settings.data_dir} at {running}", file=sys.stderr)
        return running
    owner = serving_owner(settings.data_dir)
    why = (
        f"the server of its note (pid {owner[1]}, {owner[0]}) does not answer"
        if owner
        else "no `reactstep serve` runs on it"
    )
    print(f"running in this process on {settings.data_dir} (no --server, and {why})", file=sys.stderr)
    return None


def in_process_server(stack: ExitStack, settings: Settings) -> str:
    """A server on a loopback port for as long as the stack is open."""
    from reactstep.service.http.app import create_app
    from reactstep.service.http.serving import BackgroundServer

    if settings.approval_secret is None:
        # Its approval tokens live no longer than this command, so a random key is the right one
        # (and the server-only warning about a missing shared secret does not concern the user here).
        settings = settings.model_copy(update={"approval_secret": SecretStr(secrets.token_hex(32))})
    server = stack.enter_context(BackgroundServer(create_app(settings)))
    return server.url


def client_key() -> str | None:
    """The service key the client commands send (REACTSTEP_CLIENT_API_KEY)."""
    key = Settings().client_api_key
    return key.get_secret_value() if key else None
