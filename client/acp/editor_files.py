"""The editor's buffers and the server's project kept in step around a tool call.

Before a read or an edit of a file the project holds (fs/read_text_file offered): the editor's text of
it, unsaved changes included, is read; when it differs from the server's copy it is uploaded (If-Match
the copy's ETag), so the server's tool reads what the person sees. A file the project does not hold
(ignored by .gitignore, or never synced) is not sent.
After the server accepted an approved write: the file's new text goes to the editor with
fs/write_text_file when offered (the buffer and the server agree), else it is pulled into the folder as
`reactstep pull` would (never over an edit made there).
"""

from pathlib import Path
from typing import Any

from acp import RequestError

from reactstep.client.acp.tool_view import kind_of, path_of
from reactstep.client.api.errors import ClientError
from reactstep.client.async_library import AsyncClient
from reactstep.client.workspace.pull import pull_folder

SYNCED_KINDS = ("read", "edit")


class EditorFiles:
    """One session's view of the editor's files: what it offers (fs.readTextFile, fs.writeTextFile)."""

    def __init__(
        self,
        editor: Any,
        session_id: str,
        offers: tuple[bool, bool],
        server: AsyncClient,
        project: tuple[str, Path, str],
    ) -> None:
        self._editor = editor
        self._session_id = session_id
        self.reads, self.writes = offers
        self._server = server
        self._project_id, self.root, self._server_name = project

    async def server_text(self, path: str) -> str | None:
        """The server's copy of a project file as text; None when it holds none (or no text)."""
        try:
            stored = await self._server.projects.download(self._project_id, path)
        except ClientError:
            return None
        if stored is None:
            return None
        try:
            return stored[0].decode()
        except UnicodeDecodeError:
            return None

    async def before_call(self, tool_name: str, tool_args: dict[str, Any]) -> bool:
        """Send the editor's text of the file a read or edit names, when it differs; whether it was sent."""
        path = path_of(tool_args)
        if not self.reads or path is None or kind_of(tool_name) not in SYNCED_KINDS:
            return False
        local = self._inside(path)
        if local is None:
            return False
        try:
            stored = await self._server.projects.download(self._project_id, path)
            if stored is None:
                return False
            shown = await self._editor.read_text_file(session_id=self._session_id, path=str(local))
            data = shown.content.encode()
            if data == stored[0]:
                return False
            await self._server.projects.upload(self._project_id, path, data, if_match=stored[1])
        except (ClientError, RequestError):  # the tool reads the server's copy, as without an editor
            return False
        return True

    async def after_write(self, path: str) -> str:
        """Bring an accepted write into the editor (or the folder); what became of it, in a few words."""
        local = self._inside(path)
        if local is None:
            return "the change is on the server only"
        if not self.writes:
            try:
                report = await self._server.do(
                    pull_folder(self._project_id, self.root, self._server_name, False, None)
                )
            except ClientError as exc:
                return f"the change is on the server only: {exc}"
            return f"pulled into the folder: {len(report.written)} file(s)"
        text = await self.server_text(path)
        if text is None:
            return "the change is on the server only (no text to show)"
        await self._editor.write_text_file(session_id=self._session_id, path=str(local), content=text)
        return "written into the editor's buffer"

    def _inside(self, path: str) -> Path | None:
        """The file in the session's folder, or None for a path that leaves it."""
        local = (self.root / path).resolve()
        return local if local.is_relative_to(self.root.resolve()) else None
