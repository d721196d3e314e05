"""`reactstep mcp --project P`: the project's MCP tools over stdio, for an IDE agent on this machine.

    a server to use     (--server, REACTSTEP_SERVER, or a `reactstep serve` running on this data dir)
                        a relay: each JSON-RPC message read from stdin is POSTed to the server's
                        /mcp/{project} (streamable HTTP, stateless) with REACTSTEP_CLIENT_API_KEY, up
                        to 8 at once, and what it answers (one JSON body or an SSE stream) is written to
                        stdout as it comes; the server lists the tools, runs them, and holds the
                        resources and the prompt
    none                the tools run in this process on the local data dir (REACTSTEP_DATA_DIR), by the
                        server package (entry point local_mcp); without it, an error naming what to pass
stdout carries the protocol alone: anything else printed goes to stderr. The project is checked before
serving (a refused key or project: exit 1).
"""

import argparse
import json
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any

import httpx
from httpx_sse import EventSource

from reactstep.client.api.errors import ClientError, api_error
from reactstep.client.cli.servers import found_server, required_hook, say_in_process
from reactstep.client.settings import ClientSettings

RELAY_TIMEOUT_S = 300.0  # a tool call may index or search a large project
RELAY_CALLS = 8  # messages relayed at once; more wait for one of these to be answered
INTERNAL_ERROR = -32603  # JSON-RPC: the relay could not get an answer


def add_mcp_command(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """The `mcp` subcommand."""
    command = commands.add_parser("mcp", help="serve the project's tools to an IDE agent over MCP (stdio)")
    command.add_argument("--project", required=True, help="project id (the agent cannot change it)")
    command.add_argument(
        "--server",
        help="a running service to bridge to (default: REACTSTEP_SERVER, else the one running on this "
        "data dir, else the tools run here, on the local store)",
    )
    command.set_defaults(run=run_mcp)


def run_mcp(args: argparse.Namespace) -> int:
    """Serve until the IDE closes stdin; exit 1 before serving when the project cannot be used."""
    settings: ClientSettings = args.settings
    found = found_server(args.server, settings)
    if found.url is not None:
        print(found.why, file=sys.stderr)
        relay = McpRelay(found.url.rstrip("/"), args.project, settings.api_key)
        relay.check_project()
        relay.run(sys.stdin.buffer, protocol_output())
        return 0
    local_mcp = required_hook("local_mcp", "`reactstep mcp` without --server or REACTSTEP_SERVER")
    say_in_process(settings.data_dir, found.why)
    code: int = local_mcp(args.project, protocol_output())
    return code


class McpRelay:
    """stdio to the server's /mcp/{project}: one POST per message, up to RELAY_CALLS at once, so a long
    call (an index, a search of a large project) does not hold back the messages read after it; each
    answer is written whole when it comes (JSON-RPC matches answers to requests by id)."""

    def __init__(self, server_url: str, project_id: str, key: str | None) -> None:
        self._server_url = server_url
        self._project_id = project_id
        self._headers = {"authorization": f"Bearer {key}"} if key else {}
        self._protocol_version: str | None = None
        self._writing = threading.Lock()

    def check_project(self) -> None:
        """ClientError when the key or the project is refused (said before serving)."""
        try:
            project = httpx.get(
                f"{self._server_url}/api/projects/{self._project_id}", headers=self._headers, timeout=30
            )
            if project.status_code != 200:
                raise api_error(project.status_code, project.json())
        except (httpx.HTTPError, ValueError) as exc:
            raise ClientError(f"cannot use {self._server_url}: {exc}") from exc

    def run(self, source: IO[bytes], output: IO[bytes]) -> None:
        """Relay until `source` ends and every call read has been answered."""
        with (
            httpx.Client(headers=self._headers, timeout=RELAY_TIMEOUT_S) as http,
            ThreadPoolExecutor(max_workers=RELAY_CALLS, thread_name_prefix="mcp-relay") as calls,
        ):
            for line in source:
                if line.strip():
                    calls.submit(self._answer, http, line, output)

    def _answer(self, http: httpx.Client, line: bytes, output: IO[bytes]) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            answers = [_error(None, "the relay read a line that is not JSON")]
        else:
            request_id = message.get("id") if isinstance(message, dict) else None
            try:
                answers = self._relay(http, line, request_id)
            except Exception as exc:  # on a thread of the pool: said to the IDE, which waits on the id
                answers = [_error(request_id, f"the relay failed ({type(exc).__name__})")]
        with self._writing:
            for answer in answers:
                output.write(json.dumps(answer, separators=(",", ":")).encode() + b"\n")
            output.flush()

    def _relay(self, http: httpx.Client, line: bytes, request_id: Any) -> list[dict[str, Any]]:
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        if self._protocol_version:
            headers["mcp-protocol-version"] = self._protocol_version
        url = f"{self._server_url}/mcp/{self._project_id}"
        try:
            with http.stream("POST", url, content=line, headers=headers) as response:
                answers = _answers(response)
        except httpx.HTTPError as exc:
            problem = f"cannot reach {self._server_url}: {exc}"
            return [_error(request_id, problem)] if request_id is not None else []
        except ValueError as exc:  # not JSON, or the service's own error body (401, 403, 413, ...)
            return [_error(request_id, str(exc))] if request_id is not None else []
        for answer in answers:
            if answer.get("id") == request_id and "protocolVersion" in (answer.get("result") or {}):
                self._protocol_version = str(answer["result"]["protocolVersion"])
        if not answers and request_id is not None and response.status_code != 202:
            return [_error(request_id, f"the server answered {response.status_code}")]
        return answers


def _answers(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of one answer: its JSON body, or each event of its SSE stream."""
    if response.status_code == 202:
        return []
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return [json.loads(event.data) for event in EventSource(response).iter_sse() if event.data]
    body = json.loads(response.read() or b"null")
    if response.status_code >= 400 and isinstance(body, dict) and "error" in body and "jsonrpc" not in body:
        raise ValueError(str(api_error(response.status_code, body)))  # the service's own error body
    if isinstance(body, list):
        return [entry for entry in body if isinstance(entry, dict)]
    return [body] if isinstance(body, dict) else []


def _error(request_id: Any, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": INTERNAL_ERROR, "message": message}}


def protocol_output() -> IO[bytes]:
    """This process's stdout for the protocol; file descriptor 1 then points at stderr."""
    sys.stdout.flush()
    output = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return output
