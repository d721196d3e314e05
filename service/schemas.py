"""Server-side checks on top of reactstep.contract's models: those needing a schema library or our errors."""

import re

import jsonschema_rs

from reactstep.contract.common import PROJECT_ID_PATTERN
from reactstep.contract.step import ReactStepRequest
from reactstep.service.errors import ValidationFailed


def check_project_id(project_id: str) -> str:
    """A project id from a URL path, or a 422 naming the rule."""
    if re.fullmatch(PROJECT_ID_PATTERN, project_id) is None:
        raise ValidationFailed(f"project_id must match {PROJECT_ID_PATTERN}")
    return project_id


def check_client_tools(request: ReactStepRequest) -> ReactStepRequest:
    """The request, or a 422 naming each client tool whose `parameters` is not a valid JSON Schema.

    jsonschema_rs checks a schema against the 2020-12 meta-schema in Rust: 3 ms for 470 KB of
    schema, where jsonschema took 1.45 s (tests/hostile_bodies.py's largest client tool)."""
    problems = []
    for number, tool in enumerate(request.client_tools):
        try:
            jsonschema_rs.meta.validate(tool.parameters)
        except jsonschema_rs.ValidationError as exc:
            problems.append(
                {
                    "field": f"client_tools.{number}.parameters",
                    "message": f"Value error, parameters is not a valid JSON Schema: {exc.message}",
                }
            )
    if problems:
        raise ValidationFailed.naming(problems)
    return request
