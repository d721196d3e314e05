"""The one visible tool registry: every server tool, its schema, and how a call becomes an observation.

execute(name, raw_args, context)   (or spec.call(raw_args, context) for a spec looked up already)
  -> unknown tool?          Observation(is_error) listing the tools
  -> Args.model_validate    Observation(is_error) naming the bad argument
  -> spec.run(args, ctx)    ToolError -> Observation(is_error, "Error: ...")
                             a write tool's preview -> Observation(approval=PendingApproval)
                             StoreUnavailable propagates: the service answers 503
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ValidationError

from reactstep.contract.validation import describe_validation_error
from reactstep.tools.errors import ToolError
from reactstep.tools.store.objects import ObjectStore
from reactstep.tools.writes.approval import Approvals, PendingApproval

if TYPE_CHECKING:
    from reactstep.tools.ranking.retrieval import CodeIndex

Category = Literal["search", "reading", "writing", "execution"]


@dataclass(frozen=True)
class ToolLimits:
    """Size limits tools honour: the file size is a setting, the rest keep one observation readable."""

    file_max_bytes: int = 1_000_000  # the setting's: grep passes a larger file over, writes refuse one
    read_file_max_lines: int = 500  # a screenful the model can follow; it asks for the next lines
    read_file_max_bytes: int = 50_000  # ~12k tokens: one read never crowds out the rest of the context
    list_files_max_entries: int = 1_000  # over all pages; a deeper tree is better found with find_files
    list_files_page_size: int = 100  # one page is a short observation
    code_search_max_results: int = 10  # the hits a model reads; a call may ask for fewer or more
    code_search_max_chars: int = 12_000  # ~3k tokens of passages, like a read_file of one module


@dataclass(frozen=True)
class ToolContext:
    """What one tool call may touch: the authorised project, its store and its search index."""

    project_id: str
    store: ObjectStore
    limits: ToolLimits
    index: "CodeIndex | None" = None
    approvals: Approvals | None = None  # signs and checks the write tools' approval tokens
    approval_token: str | None = None  # the request's token: the user approved this call's preview


@dataclass(frozen=True)
class ToolSpec:
    """A server tool: its name, argument model, prompt text, flags and implementation."""

    name: str
    description: str
    category: Category
    args_model: type[BaseModel]
    run: Callable[[Any, ToolContext], "str | Observation"]
    example: str
    read_only: bool = True
    requires_approval: bool = False
    uses_index: bool = False  # the call needs ToolContext.index (opened only for such tools)
    # The argument naming the one stored file the call reads, when it reads nothing else: when it
    # succeeds the project exists, and it can run on the event loop over that file's bytes.
    file_arg: str | None = None
    # Argument names models carry over from other tools' spellings -> the parameter they mean.
    aliases: Mapping[str, str] = field(default_factory=dict)

    @property
    def reads_one_file(self) -> bool:
        """Whether the call reads one stored file (named by file_arg) and nothing else."""
        return self.file_arg is not None

    def json_schema(self) -> dict[str, Any]:
        """The arguments' JSON Schema, without pydantic's titles."""
        return _schema_of(self.args_model)

    def call(self, raw_args: dict[str, Any], context: "ToolContext") -> "Observation":
        """Run this tool on raw arguments; a failure the model can fix comes back as an error observation."""
        try:
            args = self.args_model.model_validate(raw_args)
        except ValidationError as exc:
            return Observation(f"Error: {self.name}: {describe_validation_error(exc)}", True)
        try:
            result = self.run(args, context)
        except ToolError as exc:
            return Observation(f"Error: {exc}", True)
        return result if isinstance(result, Observation) else Observation(result)


@dataclass(frozen=True)
class Observation:
    """What a tool call produced, as the model will read it."""

    text: str
    is_error: bool = False
    approval: PendingApproval | None = None  # set on a write tool's preview: nothing was written


class ToolRegistry:
    """The server tools, by name, in manifest order."""

    def __init__(self, specs: Iterable[ToolSpec]) -> None:
        self._specs = {spec.name: spec for spec in specs}

    @property
    def specs(self) -> list[ToolSpec]:
        """Every tool, in registration order."""
        return list(self._specs.values())

    def get(self, name: str) -> ToolSpec | None:
        """The tool called `name`, if any."""
        return self._specs.get(name)

    def schemas(self) -> dict[str, dict[str, Any]]:
        """Tool name -> JSON Schema of its arguments."""
        return {spec.name: spec.json_schema() for spec in self._specs.values()}

    def aliases(self) -> dict[str, Mapping[str, str]]:
        """Tool name -> the argument aliases it declares."""
        return {spec.name: spec.aliases for spec in self._specs.values() if spec.aliases}

    def execute(self, name: str, raw_args: dict[str, Any], context: ToolContext) -> Observation:
        """Run one tool call by name; a failure the model can fix comes back as an error observation."""
        spec = self._specs.get(name)
        return self.unknown(name) if spec is None else spec.call(raw_args, context)

    def unknown(self, name: str) -> Observation:
        """The error observation for a call of a tool that is not here, listing those that are."""
        available = ", ".join(sorted(self._specs))
        return Observation(f"Error: unknown tool {name!r}. Available tools: {available}", True)


@cache
def _schema_of(args_model: type[BaseModel]) -> dict[str, Any]:
    # pydantic rebuilds the schema on every call; a step asks for every tool's several times.
    schema: dict[str, Any] = _drop_titles(args_model.model_json_schema())
    return schema


def _drop_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        # A property may be called "title"; only pydantic's string titles go.
        return {
            key: _drop_titles(value)
            for key, value in schema.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(schema, list):
        return [_drop_titles(item) for item in schema]
    return schema
