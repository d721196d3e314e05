"""edit_file: replace a file's whole content, written only after the user approves the diff."""

from pydantic import BaseModel, ConfigDict, Field

from reactstep.tools.errors import ToolError
from reactstep.tools.registry import Observation, ToolContext, ToolSpec
from reactstep.tools.write_flow import Change, run_write


class EditFileArgs(BaseModel):
    """Arguments of edit_file."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Path of an existing file, relative to the project root.")
    content: str = Field(description="The complete new content of the whole file, not only the changed part.")
    description: str = Field("", max_length=1000, description="What the change does and why, for the user.")


def edit_file(args: EditFileArgs, context: ToolContext) -> Observation:
    """Preview the file's new content, or write it when the call carries the user's approval."""

    def plan(path: str, current: str | None) -> Change:
        if current is None:
            raise ToolError(f"file not found: {path}; use create_file to make a new file")
        return Change(args.content)

    return run_write(SPEC.name, args, args.path, plan, context)


SPEC = ToolSpec(
    name="edit_file",
    description=(
        "Replaces the whole content of an existing file. Give the complete new file; for small "
        "changes prefer replace_in_file or edit_lines. The user sees the diff and must approve it "
        "before anything is written."
    ),
    category="writing",
    args_model=EditFileArgs,
    run=edit_file,
    example='edit_file(path="README.md", content="# Demo\\n\\nA small demo project.\\n")',
    aliases={
        "file_path": "path",
        "filepath": "path",
        "file": "path",
        "filename": "path",
        "new_content": "content",
        "file_text": "content",
        "text": "content",
    },
    read_only=False,
    requires_approval=True,
)
