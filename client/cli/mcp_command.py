"""`reactstep mcp --project P`: the project's MCP tools over stdio, for an IDE agent on this machine.

    a server to use     (--server, REACTSTEP_SERVER, or a `reactstep serve` running on this data dir)
                        a relay: each JSON-RPC message read from stdin is POSTed to the server's
                        /mcp/{project} (streamable HTTP, stateless) with REACTSTEP_CLIENT_API_KEY, up
                        to 8 at once, and what it answers (one JSON body or an SSE stream) is written to
                        stdout as it comes; the server lists the tools, runs them, and holds the
                        resources and the prompt. A 2025 IDE that declared elicitation is spoken for
                        in 2026-07-28, so a write asks its person (mcp_eras.py)
    none                the tools run in this process on the local data dir (REACTSTEP_DATA_DIR), by the
                        server package (entry point local_mcp); without it, an error naming what to pass
stdout carries the protocol alone: anything else printed goes to stderr. The project is checked before
serving (a refused key or project: exit 1).
"""

import argparse
import itertools
import json
import os
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, Any

import httpx
from httpx_sse import EventSource

from reactstep.client.api.errors import ClientError, api_error
from reactstep.client.cli.mcp_eras import (
    INPUT_ROUNDS,
    MODERN,
    as_2025,
    declares_elicitation,
    input_requests,
    modern_headers,
    modern_version,
    request_state,
    retried,
    upgraded,
)
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
    answer is written whole when it comes (JSON-RPC matches answers to requests by id). How a message
    goes up depends on the revision the IDE speaks (mcp_eras.py)."""

    def __init__(self, server_url: str, project_id: str, key: str | None) -> None:
        self._server_url = server_url
        self._project_id = project_id
        self._headers = {"authorization": f"Bearer {key}"} if key else {}
        self._protocol_version: str | None = None
        self._asks = False  # a 2025 IDE that declared elicitation: the relay asks it for the server
        self._writing = threading.Lock()
        self._questions: dict[str, Future[dict[str, Any]]] = {}
        self._numbers = itertools.count(1)
        self._output: IO[bytes] | None = None

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
        self._output = output
        with (
            httpx.Client(headers=self._headers, timeout=RELAY_TIMEOUT_S) as http,
            ThreadPoolExecutor(max_workers=RELAY_CALLS, thread_name_prefix="mcp-relay") as calls,
        ):
            for line in source:
                if not line.strip():
                    continue
                try:
                    message = json.loads(line)
                except ValueError:
                    message = None
                if not self._is_reply(message):
                    calls.submit(self._answer, http, line, message)

    def _is_reply(self, message: Any) -> bool:
        """Whether the IDE's message answers a question the relay asked it (and hand it over)."""
        if not isinstance(message, dict) or "method" in message:
            return False
        waiting = self._questions.pop(str(message.get("id")), None)
        if waiting is not None:
            waiting.set_result(message)
        return waiting is not None

    def _answer(self, http: httpx.Client, line: bytes, message: Any) -> None:
        if message is None:
            self._write([_error(None, "the relay read a line that is not JSON")])
            return
        request_id = message.get("id") if isinstance(message, dict) else None
        try:
            self._write(self._relay(http, line, message, request_id))
        except Exception as exc:  # on a thread of the pool: said to the IDE, which waits on the id
            self._write([_error(request_id, f"the relay failed ({type(exc).__name__})")])

    def _write(self, messages: list[dict[str, Any]]) -> None:
        assert self._output is not None
        with self._writing:
            for message in messages:
                self._output.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            self._output.flush()

    def _relay(self, http: httpx.Client, line: bytes, message: Any, request_id: Any) -> list[dict[str, Any]]:
        if not isinstance(message, dict):
            return self._post(http, line, {}, request_id)
        version = modern_version(message)
        if version is not None:
            return self._post(http, line, modern_headers(message, version), request_id)
        method = message.get("method")
        if method == "initialize":
            self._asks = declares_elicitation(message)
        elif self._asks and request_id is not None and method not in ("ping", None):
            return self._relay_asking(http, message, request_id)
        headers = {"mcp-protocol-version": self._protocol_version} if self._protocol_version else {}
        answers = self._post(http, line, headers, request_id)
        for answer in answers:
            if answer.get("id") == request_id and "protocolVersion" in (answer.get("result") or {}):
                self._protocol_version = str(answer["result"]["protocolVersion"])
        return answers

    def _relay_asking(
        self, http: httpx.Client, message: dict[str, Any], request_id: Any
    ) -> list[dict[str, Any]]:
        """A 2025 IDE's request as 2026-07-28, its questions asked of the IDE, its result as 2025."""
        sent = upgraded(message)
        for _ in range(INPUT_ROUNDS):
            answers = self._post(http, json.dumps(sent).encode(), modern_headers(sent, MODERN), request_id)
            answer = next((each for each in answers if each.get("id") == request_id), None)
            requests = input_requests(answer) if answer is not None else None
            if answer is None or requests is None:
                return [as_2025(each) for each in answers]
            replies = {key: self._ask(request) for key, request in requests.items()}
            sent = retried(upgraded(message), replies, request_state(answer))
        return [_error(request_id, f"the server asked for input more than {INPUT_ROUNDS} times")]

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """The IDE's answer to one of the server's input requests (a cancel when there is none)."""
        question_id = f"reactstep-relay-{next(self._numbers)}"
        waiting: Future[dict[str, Any]] = Future()
        self._questions[question_id] = waiting
        self._write(
            [
                {
                    "jsonrpc": "2.0",
                    "id": question_id,
                    "method": request.get("method"),
                    "params": request.get("params"),
                }
            ]
        )
        try:
            reply = waiting.result(timeout=RELAY_TIMEOUT_S)
        except TimeoutError:
            self._questions.pop(question_id, None)
            return {"action": "cancel"}
        result = reply.get("result")
        return result if isinstance(result, dict) else {"action": "cancel"}

    def _post(
        self, http: httpx.Client, content: bytes, extra: dict[str, str], request_id: Any
    ) -> list[dict[str, Any]]:
        """One message POSTed; the JSON-RPC messages answering it, or an error for the IDE."""
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            **extra,
        }
        url = f"{self._server_url}/mcp/{self._project_id}"
        try:
            with http.stream("POST", url, content=content, headers=headers) as response:
                answers = _answers(response)
        except httpx.HTTPError as exc:
            problem = f"cannot reach {self._server_url}: {exc}"
            return [_error(request_id, problem)] if request_id is not None else []
        except ValueError as exc:  # not JSON, or the service's own error body (401, 403, 413, ...)
            return [_error(request_id, str(exc))] if request_id is not None else []
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
