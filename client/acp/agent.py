"""The ACP agent: the protocol's methods over a reactstep server, one AsyncClient for all sessions.

    initialize        protocol version 1; loads sessions; text, links and embedded context in prompts;
                      the key as an env_var auth method
    authenticate      the key (REACTSTEP_CLIENT_API_KEY) checked against the server
    session/new       cwd synced into its project (the rules of `reactstep sync`), a new session
    session/load      the session recorded under cwd shown again and taken up (session_load.py)
    session/prompt    one Turn (turn.py), run as a task session/cancel can cancel
    session/cancel    that task cancelled: its stream closed, the prompt answers `cancelled`
Errors of the client's tree become JSON-RPC errors with the client's message (a refused key:
auth_required); the SDK answers a method it does not know with method_not_found.
"""

import asyncio
import sys
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any, cast

from acp import PROTOCOL_VERSION, Agent, RequestError, run_agent
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthEnvVar,
    ClientCapabilities,
    EnvVarAuthMethod,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
)

from reactstep.client.acp.editor_files import EditorFiles
from reactstep.client.acp.session import Session, project_for
from reactstep.client.acp.session_load import recorded_conversation, recorded_updates
from reactstep.client.acp.turn import Turn, TurnOptions
from reactstep.client.api import operations
from reactstep.client.api.errors import ClientError, NotFound, Unauthorized
from reactstep.client.async_library import AsyncClient
from reactstep.client.workspace.sync import SyncOptions, sync_folder

KEY_METHOD = EnvVarAuthMethod(
    type="env_var",
    id="reactstep-key",
    name="reactstep service key",
    description="The key of the reactstep server, when it asks for one",
    vars=[AuthEnvVar(name="REACTSTEP_CLIENT_API_KEY", label="Service key", secret=True)],
)
INTERNAL_ERROR = -32603
MESSAGE_BYTES = 50 * 1024 * 1024  # the longest line read from the editor (a prompt with files in it)
PROBE_PROJECT = "reactstep-acp-key-check"


@dataclass(frozen=True)
class AgentOptions:
    """What `reactstep acp` was started with."""

    server_name: str  # the server as the folder's sync state names it (its URL, or "in-process")
    project: str | None = None  # one project for every session; default: one per folder (project_for)
    index: bool = False  # index the project after each session's sync (code_search needs it)
    max_file_bytes: int = 1_000_000
    turns: TurnOptions = field(default_factory=TurnOptions)


async def serve_editor(url: str, key: str | None, options: AgentOptions, protocol: IO[bytes]) -> None:
    """Serve the editor on stdin and `protocol` (this process's stdout) until stdin ends."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MESSAGE_BYTES)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, flow = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, protocol)
    writer = asyncio.StreamWriter(transport, flow, None, loop)
    async with AsyncClient(url, key) as server:
        # the SDK routes the methods an agent has and answers the others with method_not_found
        await run_agent(cast(Agent, ReactstepAgent(server, options)), writer, reader)


class ReactstepAgent:
    """reactstep as an ACP agent (the SDK's Agent protocol)."""

    def __init__(self, server: AsyncClient, options: AgentOptions) -> None:
        self._server = server
        self._options = options
        self._editor: Any = None
        self._offers = ClientCapabilities()
        self._turns = options.turns
        self._sessions: dict[str, Session] = {}

    def on_connect(self, conn: Any) -> None:
        """The editor's side of the connection (session updates, permission, fs, terminals)."""
        self._editor = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: ClientCapabilities | None = None, **_: Any
    ) -> InitializeResponse:
        """The version and what this agent can do."""
        self._offers = client_capabilities or ClientCapabilities()
        self._turns = replace(self._options.turns, terminal=bool(self._offers.terminal))
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
            ),
            auth_methods=[KEY_METHOD],
            agent_info=Implementation(name="reactstep", title="reactstep", version=_version()),
        )

    async def authenticate(self, method_id: str, **_: Any) -> AuthenticateResponse:
        """Check the key this agent holds against the server."""
        if method_id != KEY_METHOD.id:
            raise RequestError.invalid_params({"methodId": f"this agent knows only {KEY_METHOD.id!r}"})
        try:
            await self._server.do(operations.describe_project(PROBE_PROJECT))
        except NotFound:
            pass  # the key was taken: only the project is missing
        except ClientError as exc:
            raise _request_error(exc) from None
        return AuthenticateResponse()

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        """The folder synced into its project, and a session on it."""
        session = await self._open(str(uuid.uuid4()), Path(cwd))
        unused = [server.name for server in mcp_servers or []]
        if unused:
            print(
                f"reactstep acp: MCP servers not used (reactstep brings its own tools): {', '.join(unused)}",
                file=sys.stderr,
            )
        meta = {"reactstep": {"project": session.project_id, "mcpServersUnused": unused}}
        return NewSessionResponse(session_id=session.session_id, field_meta=meta)

    async def load_session(self, cwd: str, session_id: str, **_: Any) -> LoadSessionResponse:
        """The recorded session shown again, then continued."""
        root = Path(cwd)
        conversation = recorded_conversation(root, session_id)
        session = await self._open(session_id, root, conversation.get("project_id"))
        session.history = list(conversation.get("history", []))
        session.turns = int(conversation.get("turns", 0))
        for update in recorded_updates(root, session_id, session.turns, self._options.turns.window):
            await self._editor.session_update(session_id, update)
        return LoadSessionResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        """Run the loop for the prompt until it answers, stops, or is cancelled."""
        session = self._session(session_id)
        if session.running is not None:
            raise RequestError.invalid_request({"message": "a prompt is already running in this session"})
        turn = Turn(self._editor, self._server, session, self._turns)
        session.cancelled = False
        session.running = asyncio.create_task(turn.run(_query_of(prompt)))
        try:
            stop_reason = await session.running
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not session.cancelled or (current is not None and current.cancelling()):
                raise
            return PromptResponse(stop_reason="cancelled")
        except ClientError as exc:
            raise _request_error(exc) from None
        finally:
            session.running = None
        return PromptResponse(stop_reason=stop_reason)

    async def cancel(self, session_id: str, **_: Any) -> None:
        """Stop the session's running prompt (its model call with it)."""
        session = self._sessions.get(session_id)
        if session is not None and session.running is not None:
            session.cancelled = True
            session.running.cancel()

    def _session(self, session_id: str) -> Session:
        if (session := self._sessions.get(session_id)) is None:
            raise RequestError.invalid_params({"sessionId": f"no session {session_id!r} in this agent"})
        return session

    async def _open(self, session_id: str, root: Path, project_id: str | None = None) -> Session:
        if not root.is_absolute() or not root.is_dir():
            raise RequestError.invalid_params({"cwd": f"{root} is not an absolute path of a folder"})
        project_id = project_id or self._options.project or project_for(root)
        options = SyncOptions(index=self._options.index, max_file_bytes=self._options.max_file_bytes)
        try:
            await self._server.do(sync_folder(project_id, root, self._options.server_name, options))
        except ClientError as exc:
            raise _request_error(exc) from None
        fs = self._offers.fs
        offers = (bool(fs and fs.read_text_file), bool(fs and fs.write_text_file))
        files = EditorFiles(
            self._editor, session_id, offers, self._server, (project_id, root, self._options.server_name)
        )
        session = Session(session_id, project_id, files)
        self._sessions[session_id] = session
        return session


def _query_of(prompt: list[Any]) -> str:
    """The prompt's blocks as the question: text as it is, an embedded file with its name, a link by name."""
    parts = []
    for block in prompt:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource" and hasattr(block.resource, "text"):
            parts.append(f"\n{block.resource.uri}:\n```\n{block.resource.text}\n```")
        elif kind == "resource_link":
            parts.append(block.uri)
    return "\n".join(parts).strip() or "(empty prompt)"


def _request_error(exc: ClientError) -> RequestError:
    if isinstance(exc, Unauthorized):
        return RequestError.auth_required({"message": str(exc), "authMethods": [KEY_METHOD.id]})
    return RequestError(INTERNAL_ERROR, str(exc))


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    for distribution in ("reactstep", "reactstep-client"):
        try:
            return version(distribution)
        except PackageNotFoundError:
            continue
    return "unknown"
