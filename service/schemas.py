"""Server-side checks on top of reactstep.contract's models: those needing jsonschema or our errors."""

import re

from jsonschema import Draft202012Validator, SchemaError  # type: ignore[import-untyped]

from reactstep.contract.common import PROJECT_ID_PATTERN
from reactstep.contract.step import ReactStepRequest
from reactstep.service.errors import ValidationFailed


def check_project_id(project_id: str) -> str:
    """A project id from a URL path, or a 422 naming the rule."""
    if re.fullmatch(PROJECT_ID_PATTERN, project_id) is None:
        raise ValidationFailed(f"project_id must match {PROJECT_ID_PATTERN}")
    return project_id


def check_client_tools(request: ReactStepRequest) -> ReactStepRequest:
    """The request, or a 422 naming each client tool whose `parameters` is not a valid JSON Schema."""
    problems = []
    for number, tool in enumerate(request.client_tools):
        try:
            Draft202012Validator.check_schema(tool.parameters)
        except SchemaError as exc:
            problems.append(
                {
                    "field": f"client_tools.{number}.parameters",
                    "message": f"Value error, parameters is not a valid JSON Schema: {exc.message}",
                }
            )
    if problems:
        raise ValidationFailed("the request body does not match the schema", details=problems)
    return request
