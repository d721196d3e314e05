"""An editor as `reactstep acp` meets one: the ACP SDK's client side over the agent's stdio, with buffers
(unsaved text it serves on fs/read_text_file), files it writes on fs/write_text_file, and the person's
answers to permission questions, given in order."""

import asyncio
import os
import sys
from collections import deque
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp import (
    CreateTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
    spawn_agent_process,
)
from acp.client.connection import ClientSideConnection
from acp.schema import AllowedOutcome, ClientCapabilities, DeniedOutcome, FileSystemCapabilities

REACTSTEP = str(Path(sys.executable).parent / "reactstep")
OFFERS = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
WITH_TERMINALS = ClientCapabilities(
    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
)


class Editor:
    """The editor's side: what it was sent, and what the person answers."""

    def __init__(self, answers: Iterable[str] = ()) -> None:
        self.updates: list[dict[str, Any]] = []  # each session/update's `update`, as JSON
        self.questions: list[dict[str, Any]] = []  # each session/request_permission, as JSON
        self.buffers: dict[str, str] = {}  # absolute path -> unsaved text
        self.written: list[tuple[str, str]] = []
        self.answers = deque(answers)
        self.terminals: dict[str, asyncio.subprocess.Process] = {}
        self.commands: list[tuple[str, list[str], str | None]] = []

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **_: Any
    ) -> RequestPermissionResponse:
        asked = {"tool_call": tool_call.model_dump(mode="json", by_alias=True, exclude_none=True)}
        self.questions.append(asked | {"options": [option.option_id for option in options]})
        if not self.answers:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answers.popleft())
        )

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> ReadTextFileResponse:
        text = self.buffers.get(path)
        return ReadTextFileResponse(content=Path(path).read_text() if text is None else text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **_: Any
    ) -> WriteTextFileResponse:
        self.written.append((path, content))
        Path(path).write_text(content)
        return WriteTextFileResponse()

    async def create_terminal(
        self, session_id: str, command: str, args: list[str] | None = None, cwd: str | None = None, **_: Any
    ) -> CreateTerminalResponse:
        self.commands.append((command, list(args or []), cwd))
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = process
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **_: Any
    ) -> WaitForTerminalExitResponse:
        code = await self.terminals[terminal_id].wait()
        return WaitForTerminalExitResponse(exit_code=code)

    async def terminal_output(self, session_id: str, terminal_id: str, **_: Any) -> TerminalOutputResponse:
        process = self.terminals[terminal_id]
        assert process.stdout is not None
        output = (await process.stdout.read()).decode()
        return TerminalOutputResponse(output=output, truncated=False)

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> ReleaseTerminalResponse:
        return ReleaseTerminalResponse()

    def kinds(self) -> list[str]:
        """The sessionUpdate of each update, in order, a run of thought chunks as one."""
        kinds = [update["sessionUpdate"] for update in self.updates]
        return [
            kind
            for i, kind in enumerate(kinds)
            if not (kind == "agent_thought_chunk" and kinds[i - 1 : i] == [kind])
        ]

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [update for update in self.updates if update["sessionUpdate"] == kind]


@asynccontextmanager
async def started(
    editor: Editor, server_url: str, offers: ClientCapabilities = OFFERS, options: tuple[str, ...] = ()
) -> AsyncIterator[ClientSideConnection]:
    """`reactstep acp --server URL [options]` started as an editor starts it, and initialized."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    command = (REACTSTEP, "acp", "--server", server_url, *options)
    async with spawn_agent_process(editor, *command, env=env) as (conn, _):
        await conn.initialize(protocol_version=1, client_capabilities=offers)
        yield conn
