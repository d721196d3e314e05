"""find_files: the project's file paths that match glob patterns, sorted.

pattern(s), `!negations` ─► globs.compile_globs (gitignore rules, matched with RE2)
exclude ─► a second glob set; a path it matches is dropped
─► sorted paths, cut at max_results with "...and N more"
"""

from pydantic import BaseModel, ConfigDict, Field

from reactstep.tools.errors import ToolError
from reactstep.tools.folders import files_in_folder
from reactstep.tools.matching.globs import as_list, compile_globs
from reactstep.tools.registry import ToolContext, ToolSpec

MAX_RESULTS = 500


class FindFilesArgs(BaseModel):
    """Arguments of find_files."""

    model_config = ConfigDict(extra="forbid")

    pattern: str | list[str] = Field(
        description="Glob over paths from the project root, or a list of them: '**/*.tsx', "
        "'src/**/test_*.py', '*.{ts,tsx}'. A pattern without '/' matches a file or folder name at "
        "any depth; '!pattern' takes back what an earlier pattern matched."
    )
    path: str = Field("", description="Only look below this folder; '' or '.' is the whole project.")
    exclude: str | list[str] = Field(
        default_factory=list,
        description="Globs to leave out, e.g. ['node_modules', 'dist', '*.min.js'].",
    )
    max_results: int = Field(100, ge=1, le=MAX_RESULTS, description="Most paths to show.")


def find_files(args: FindFilesArgs, context: ToolContext) -> str:
    """Return the sorted paths that the patterns select and the exclusions do not."""
    patterns = as_list(args.pattern)
    if not patterns:
        raise ToolError("pattern is empty; give a glob such as '**/*.py', or '**' for every file")
    include = compile_globs(patterns)
    exclude = compile_globs(as_list(args.exclude))
    folder, objects = files_in_folder(context, args.path)
    found = [
        info.path
        for info in objects
        if include.matches(info.path) and not (args.exclude and exclude.matches(info.path))
    ]
    if not found:
        where = f"under {folder}/" if folder else "in the project"
        return (
            f"No files {where} match. Patterns match the path from the project root; one without "
            "'/' matches a name at any depth, e.g. '*.py' or '**/models/*.py'."
        )
    shown = found[: args.max_results]
    lines = [f"Found {len(found)} {'file' if len(found) == 1 else 'files'}:", *shown]
    if len(found) > len(shown):
        lines.append(
            f"...and {len(found) - len(shown)} more; narrow the pattern or path, or raise "
            f"max_results (at most {MAX_RESULTS})"
        )
    return "\n".join(lines)


SPEC = ToolSpec(
    name="find_files",
    description=(
        "Finds files whose paths match glob patterns such as '**/*.tsx' or 'src/**/*.test.ts', "
        "with '!pattern' and exclude to leave some out. Returns the matching paths, sorted."
    ),
    category="search",
    args_model=FindFilesArgs,
    run=find_files,
    example='find_files(pattern="**/*.py", exclude=["tests"])',
    aliases={
        "glob": "pattern",
        "glob_pattern": "pattern",
        "file_pattern": "pattern",
        "name": "pattern",
        "directory": "path",
        "dir": "path",
    },
)
