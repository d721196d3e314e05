"""An invalid setting as one line an operator can act on: the variable, what is wrong, the accepted
form; never the value itself, which may be a key."""

import re
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt
from pydantic import SecretStr, ValidationError
from pydantic_settings import SettingsError

from reactstep.service.settings import Settings

_FIELD = re.compile(r'field "(\w+)"')


class RefusedSetting(SettingsError):
    """A setting the model accepts but a back-end refuses when the app is built (an unknown local
    embedding model): one line, like any invalid setting."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(problem)
        self.name = name
        self.problem = problem


_BOUNDS = {Ge: ">= {}", Gt: "> {}", Le: "<= {}", Lt: "< {}"}


def settings_problems(error: Exception) -> list[str] | None:
    """One line per invalid setting, or None when `error` is not about the settings."""
    if isinstance(error, RefusedSetting):
        return [f"{_variable(error.name)}: {error.problem}"]
    if isinstance(error, SettingsError):  # a list or object setting that is not JSON
        found = _FIELD.search(str(error))
        if found is None or found[1] not in Settings.model_fields:
            return [str(error)]
        return [f"{_variable(found[1])}: not valid JSON; expected {_form(found[1])}"]
    if not isinstance(error, ValidationError) or error.title != Settings.__name__:
        return None
    lines = []
    for problem in error.errors(include_input=False, include_url=False):
        name = str(problem["loc"][0]) if problem["loc"] else ""
        if name in Settings.model_fields:
            lines.append(f"{_variable(name)}: {problem['msg']}; expected {_form(name)}")
        else:
            lines.append(f"settings: {problem['msg']}")
    return lines


def _variable(name: str) -> str:
    return f"REACTSTEP_{name.upper()}"


def _form(name: str) -> str:
    field = Settings.model_fields[name]
    bounds = [_BOUNDS[type(rule)].format(_bound(rule)) for rule in field.metadata if type(rule) in _BOUNDS]
    shape = _kind(field.annotation) + (f" {' and '.join(bounds)}" if bounds else "")
    return f"{shape} ({field.description})" if field.description else shape


def _bound(rule: Any) -> Any:
    return next(value for key in ("ge", "gt", "le", "lt") if (value := getattr(rule, key, None)) is not None)


def _kind(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        kinds = [_kind(argument) for argument in get_args(annotation) if argument is not type(None)]
        return " or ".join(kinds) + " (or unset)"
    if origin is Literal:
        return "one of " + ", ".join(str(choice) for choice in get_args(annotation))
    if origin is list:
        return 'a JSON list of strings, e.g. ["a", "b"]'
    names = {int: "an integer", float: "a number", bool: "true or false", str: "text", Path: "a path"}
    return names.get(annotation, "text" if annotation is SecretStr else str(annotation))
