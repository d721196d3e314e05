"""The tools one react_step request may call: the server's, plus the request's client tools."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reactstep.contract.step import ReactStepRequest
from reactstep.service.errors import ValidationFailed
from reactstep.tools.registry import ToolRegistry


@dataclass(frozen=True)
class StepTools:
    """The tools one request may call: JSON Schemas by name, and which the client runs."""

    schemas: dict[str, dict[str, Any]]
    client_names: frozenset[str]
    approval_names: frozenset[str] = frozenset()  # server tools whose calls the user must approve
    # Server tool name -> the argument names models write for its parameters (ToolSpec.aliases).
    aliases: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


def step_tools(request: ReactStepRequest, registry: ToolRegistry) -> StepTools:
    """Server tools plus the request's client tools; a client tool may not shadow a server one."""
    schemas = registry.schemas()
    server_names = set(schemas)
    for tool in request.client_tools:
        if tool.name in schemas:
            whose = "a server tool" if tool.name in server_names else "another client tool"
            raise ValidationFailed(f"client tool {tool.name!r} has the name of {whose}")
        schemas[tool.name] = tool.parameters
    approval_names = frozenset(spec.name for spec in registry.specs if spec.requires_approval)
    client_names = frozenset(tool.name for tool in request.client_tools)
    return StepTools(schemas, client_names, approval_names, registry.aliases())
