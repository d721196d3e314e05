"""One session/prompt: the loop of Client.run (runs.py) with the editor as its local side.

    query ─► run(...) streamed, its trace under the session's records, the conversation so far before it
        thought deltas, each call   ─► TurnView's session updates (turn_view.py)
        a proposed read or edit      ─► the editor's text of the file sent first (editor_files.py)
        a write's approval           ─► session/request_permission (permissions.py); yes: the loop
                                        repeats the call with the token, the server writes, and the
                                        file goes to the editor's buffer (or the folder)
        bash (terminal/* offered)    ─► asked, then run in the editor's terminal (terminal.py)
    ─► the stop reason; the turn kept in the session's conversation
Cancelling the task that runs it closes the step's event stream: the server stops the model's call.
"""

from dataclasses import dataclass, field
from typing import Any

from acp import update_tool_call
from acp.schema import ToolCallUpdate

from reactstep.client.acp.permissions import ask_person
from reactstep.client.acp.session import Session
from reactstep.client.acp.terminal import run_in_terminal, terminal_tool_declarations
from reactstep.client.acp.tool_view import kind_of, path_of, text_content, title_of
from reactstep.client.acp.turn_view import TurnView, stop_reason_of
from reactstep.client.agent.loop import ApprovalRequest
from reactstep.client.async_library import AsyncClient
from reactstep.client.runs import run

SHELL_REJECTED = "The user rejected this command; nothing ran."


@dataclass(frozen=True)
class TurnOptions:
    """How every prompt of this agent runs."""

    max_steps: int = 10
    llm: dict[str, Any] = field(default_factory=dict)  # the llm_config of each step (model, ...)
    window: int = 32_768  # the context size the usage meter shows until the server tells its own
    terminal: bool = False  # the editor offers terminal/* (initialize): bash is declared and runs there


class Turn:
    """The editor's side of one run of the loop."""

    def __init__(self, editor: Any, server: AsyncClient, session: Session, options: TurnOptions) -> None:
        self._editor = editor
        self._server = server
        self._session = session
        self._options = options
        self._view = TurnView(session.root, session.turns + 1, options.window)
        self._last_status: str | None = None  # the last step that called the model

    async def run(self, query: str) -> str:
        """Run the loop for the query; its ACP stop reason."""
        session, options = self._session, self._options
        tools = terminal_tool_declarations() if options.terminal else []
        result = await self._server.do(
            run(
                query,
                project=session.project_id,
                session_id=session.session_id,
                history=session.earlier(options.max_steps),
                stream=True,
                on_thought=self._thought,
                on_step=self._heard,
                approve=self._approve,
                tools=tools,
                on_action=self._run_tool if tools else None,
                trace=session.next_trace(),
                max_steps=options.max_steps,
                llm=options.llm,
            )
        )
        session.finish_turn(query, result)
        return stop_reason_of(result.status, self._last_status)

    async def _send(self, update: Any) -> None:
        await self._editor.session_update(self._session.session_id, update)

    async def _thought(self, delta: str) -> None:
        await self._send(self._view.thought(delta))

    async def _heard(self, kind: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        before = None
        approval = response.get("approval") or {}
        if kind == "execute_action" and approval.get("required"):
            before = await self._session.files.server_text(path_of(request.get("tool_args") or {}) or "")
        for update in self._view.updates(kind, request, response, before):
            await self._send(update)
        if kind == "react_step":
            if response.get("status") != "max_iterations_reached":  # that one only says the budget is spent
                self._last_status = response.get("status")
            action = response.get("action_details") or {}
            if response.get("status") == "action_proposed" and action.get("executor", "server") == "server":
                await self._session.files.before_call(action["tool_name"], action.get("tool_args") or {})
        elif kind == "execute_action" and "approval_token" in request and not response.get("is_error"):
            await self._written(request, response)

    async def _written(self, request: dict[str, Any], response: dict[str, Any]) -> None:
        """An approved write the server made: into the editor, and said so in the call's content."""
        path = path_of(request.get("tool_args") or {})
        if path is None:
            return
        where = await self._session.files.after_write(path)
        content = text_content(f"{response.get('observation', '')}\n({where})")
        await self._send(update_tool_call(self._view.call_id, content=content))

    async def _approve(self, call: ApprovalRequest) -> bool:
        return await self._ask(call.tool_name, call.tool_args)

    async def _run_tool(self, tool_name: str, tool_args: dict[str, Any]) -> dict[str, Any]:
        if not await self._ask(tool_name, tool_args):
            return {"observation": SHELL_REJECTED, "is_error": False}
        session = self._session
        return await run_in_terminal(
            self._editor, session.session_id, session.root, self._view.call_id, tool_args
        )

    async def _ask(self, tool_name: str, tool_args: dict[str, Any]) -> bool:
        call = ToolCallUpdate(
            tool_call_id=self._view.call_id,
            title=title_of(tool_name, tool_args),
            kind=kind_of(tool_name),
            status="pending",
        )
        session = self._session
        return await ask_person(self._editor, session.session_id, session.remembered, tool_name, call)
