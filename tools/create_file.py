"""create_file: a new file with the given content, written only after the user approves the diff."""

from pydantic import BaseModel, ConfigDict, Field

from reactstep.tools.errors import ToolError
from reactstep.tools.registry import Observation, ToolContext, ToolSpec
from reactstep.tools.write_flow import Change, run_write


class CreateFileArgs(BaseModel):
    """Arguments of create_file."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Path of the new file, relative to the project root, e.g. 'src/slug.py'.")
    content: str = Field(description="The whole content of the new file.")
    description: str = Field("", max_length=1000, description="Why the file is needed, for the user.")


def create_file(args: CreateFileArgs, context: ToolContext) -> Observation:
    """Preview the new file, or create it when the call carries the user's approval."""

    def plan(path: str, current: str | None) -> Change:
        if current is not None:
            raise ToolError(f"{path} already exists; change it with edit_file, replace_in_file or edit_lines")
        return Change(args.content)

    return run_write(SPEC.name, args, args.path, plan, context)


SPEC = ToolSpec(
    name="create_file",
    description=(
        "Creates a new file with the given content. The user sees the diff and must approve it "
        "before anything is written; the observation says whether it was written."
    ),
    category="writing",
    args_model=CreateFileArgs,
    run=create_file,
    example='create_file(path="docs/notes.md", content="# Notes\\n")',
    aliases={
        "file_path": "path",
        "filepath": "path",
        "file": "path",
        "filename": "path",
        "file_text": "content",
        "text": "content",
    },
    read_only=False,
    requires_approval=True,
)
