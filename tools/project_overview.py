"""project_overview: the stored overview of the project, as the last index run built it (overview.py)."""

from pydantic import BaseModel, ConfigDict

from reactstep.tools.errors import ToolError
from reactstep.tools.index.overview import load_overview
from reactstep.tools.index.symbols import not_indexed_message
from reactstep.tools.registry import ToolContext, ToolSpec


class ProjectOverviewArgs(BaseModel):
    """project_overview takes no arguments."""

    model_config = ConfigDict(extra="forbid")


def project_overview(args: ProjectOverviewArgs, context: ToolContext) -> str:
    """The overview markdown, or an error saying how to build it."""
    overview = load_overview(context.store, context.project_id)
    if overview is None:
        raise ToolError(not_indexed_message(context.project_id, "it has no project overview"))
    return overview.rstrip("\n")


SPEC = ToolSpec(
    name="project_overview",
    description=(
        "Returns an overview of the project built when it was indexed: languages, layout, entry points, "
        "the most imported modules, test layout and conventions. Use it first to get your bearings."
    ),
    category="search",
    args_model=ProjectOverviewArgs,
    run=project_overview,
    example="project_overview()",
)
