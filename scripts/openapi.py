"""Write openapi.yaml's `components: schemas:` from the contract's pydantic models (reactstep.contract).

    python scripts/openapi.py           rewrite the section in place (nothing else of the file changes)
    python scripts/openapi.py --check   exit 1, with a short diff, when the file would change

The models are the one source of every body's shape; this script only translates them. The text from
the line `  schemas:` up to the next `  responses:` is replaced; the paths, parameters, headers and
responses around it are written by hand and left as they are.
"""

import ast
import difflib
import inspect
import itertools
import sys
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, models_json_schema
from pydantic_core import core_schema

from reactstep.contract import (
    actions,
    common,
    errors,
    health,
    history,
    indexing,
    llm_config,
    manifest,
    mcp,
    projects,
    prompt_fit,
    step,
    step_report,
    sync,
)

SPEC = Path(__file__).resolve().parent.parent / "openapi.yaml"
START, END = "  schemas:\n", "  responses:\n"
REF = "#/components/schemas/{model}"

# The components in the order the file lists them: named types, then each route's bodies.
TYPES: dict[str, Any] = {
    "ProjectId": common.ProjectId,
    "SessionId": common.SessionId,
    "HistoryItem": history.HistoryItem,
}
MODELS: list[type[BaseModel]] = [
    step.ReactStepRequest,
    history.CompletedStep,
    history.FormatErrorStep,
    history.Turn,
    llm_config.LLMConfig,
    common.UserApiKeys,
    common.EmbeddingModelConfig,
    step.ClientTool,
    history.ActionDetails,
    step_report.Usage,
    step_report.KeyBudget,
    step_report.Timing,
    step_report.LLMRequestSeen,
    prompt_fit.PromptFitPin,
    prompt_fit.PromptFit,
    step.ReactStepResponse,
    step.ThoughtEvent,
    step.StepAccepted,
    actions.ExecuteActionRequest,
    actions.ExecuteActionResponse,
    actions.Approval,
    indexing.IndexRequest,
    indexing.IndexResponse,
    indexing.IndexProgress,
    indexing.IndexJob,
    indexing.IndexAccepted,
    indexing.IndexStop,
    projects.ProjectReport,
    projects.StoredFile,
    projects.ChangesResponse,
    projects.ChangeItem,
    sync.SyncRequest,
    sync.SyncResponse,
    sync.SyncConflict,
    manifest.ToolManifest,
    manifest.ToolDescription,
    health.Health,
    health.Version,
    health.Readiness,
    mcp.JsonRpcMessage,
    mcp.JsonRpcError,
    errors.ErrorBody,
    errors.ErrorDetail,
    errors.ValidationErrorBody,
    errors.ValidationErrorDetail,
    errors.FieldError,
]
# Bounds pydantic leaves under its own names when it cannot place them (see _ordered).
BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}
# The keys of a schema object in the order a reader wants them; the rest follow in pydantic's order.
KEY_ORDER = ("$ref", "type", "const", "enum", "description", "additionalProperties", "required", "properties")


class OpenAPISchema(GenerateJsonSchema):
    """JSON Schema as OpenAPI 3.1 components: no generated titles; `type: [x, 'null']` for a nullable
    value and `type: [x, y]` for a union of plain types; refs where openapi.yaml keeps its components."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        json_schema = super().model_schema(schema)
        json_schema.pop("title", None)
        return json_schema

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        inner = self.generate_inner(schema["schema"])
        kind = inner.get("type")
        if isinstance(kind, str) and "$ref" not in inner:
            if "enum" in inner:
                inner = {**inner, "enum": [*inner["enum"], None]}
            elif "const" in inner:
                return {"anyOf": [inner, {"type": "null"}]}
            return {**inner, "type": [kind, "null"]}
        if isinstance(kind, list):
            return {**inner, "type": [*kind, "null"]}
        return super().nullable_schema(schema)

    def union_schema(self, schema: core_schema.UnionSchema) -> JsonSchemaValue:
        json_schema = super().union_schema(schema)
        branches = json_schema.get("anyOf", [])
        simple = [branch.get("type") for branch in branches]
        if branches and all(
            isinstance(kind, str) and branch == {"type": kind}
            for kind, branch in zip(simple, branches, strict=True)
        ):
            return {"type": simple}
        return json_schema


def generated_schemas() -> dict[str, Any]:
    """Every component schema, named and ordered as the file lists them."""
    schemas: dict[str, Any] = {}
    for name, annotation in TYPES.items():
        schema = TypeAdapter(annotation).json_schema(ref_template=REF, schema_generator=OpenAPISchema)
        schema.pop("$defs", None)  # models, each a component of its own below
        schemas[name] = schema
    _, top = models_json_schema(
        [(model, "validation") for model in MODELS], ref_template=REF, schema_generator=OpenAPISchema
    )
    definitions = top["$defs"]
    missing = sorted(set(definitions) - {model.__name__ for model in MODELS})
    if missing:
        raise SystemExit(f"models without a place in MODELS: {', '.join(missing)}")
    for model in MODELS:
        schema = schemas[model.__name__] = definitions[model.__name__]
        for name, text in field_docstrings(model).items():
            field = schema["properties"][name]
            field.setdefault("description", text)
    return {name: _ordered(schema) for name, schema in schemas.items()}


def field_docstrings(model: type[BaseModel]) -> dict[str, str]:
    """The docstring under each field of the model and of the contract models it extends.

    They are read from the source here rather than by pydantic (use_attribute_docstrings), which would
    read every contract module's source each time the client imports it.
    """
    found: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not cls.__module__.startswith("reactstep.contract."):
            continue
        body = _class_body(sys.modules[cls.__module__].__file__ or "", cls.__name__)
        for field, after in itertools.pairwise(body):
            if (
                isinstance(field, ast.AnnAssign)
                and isinstance(field.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                found[field.target.id] = inspect.cleandoc(after.value.value)
    return found


@cache
def _module_classes(path: str) -> dict[str, list[ast.stmt]]:
    tree = ast.parse(Path(path).read_text(encoding="utf-8"), path)
    return {node.name: node.body for node in tree.body if isinstance(node, ast.ClassDef)}


def _class_body(path: str, name: str) -> list[ast.stmt]:
    return _module_classes(path)[name]


def _ordered(value: Any) -> Any:
    """Keys in KEY_ORDER first, recursively; the names under `properties` keep their model order.

    A bound pydantic could not place in the schema of a nullable value (`ge=1` on `Integer | None`)
    arrives under its pydantic name: it becomes the JSON Schema keyword here.
    """
    if isinstance(value, list):
        return [_ordered(item) for item in value]
    if not isinstance(value, dict):
        return value
    value = {BOUNDS.get(key, key): item for key, item in value.items()}
    keys = [key for key in KEY_ORDER if key in value] + [key for key in value if key not in KEY_ORDER]
    ordered = {}
    for key in keys:
        if key == "properties" and isinstance(value[key], dict):
            ordered[key] = {name: _ordered(field) for name, field in value[key].items()}
        else:
            ordered[key] = _ordered(value[key])
    return ordered


class _Dumper(yaml.SafeDumper):
    """Block style; text with line breaks as a literal block, so descriptions read as written."""


def _text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    if "\n" in text:
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", text)


def _list(dumper: yaml.SafeDumper, items: list[Any]) -> yaml.SequenceNode:
    flat = all(isinstance(item, str | int | float | bool) or item is None for item in items)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=flat)


_Dumper.add_representer(str, _text)
_Dumper.add_representer(list, _list)


def schemas_text() -> str:
    """The section as it belongs in the file: `  schemas:` and its components, indented under it."""
    body = yaml.dump(
        generated_schemas(), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100, indent=2
    )
    return START + "".join(f"    {line}" if line.strip() else line for line in body.splitlines(True))


def spliced(spec_text: str) -> str:
    """The file's text with the schemas section replaced by the generated one."""
    start = spec_text.index(START)
    end = spec_text.index(END, start)
    return spec_text[:start] + schemas_text() + spec_text[end:]


def main(argv: list[str]) -> int:
    check = "--check" in argv
    current = SPEC.read_text()
    wanted = spliced(current)
    if wanted == current:
        return 0
    if check:
        diff = difflib.unified_diff(
            current.splitlines(True), wanted.splitlines(True), "openapi.yaml", "generated", n=1
        )
        lines = list(diff)
        sys.stdout.writelines(lines[:60])
        more = len(lines) - 60
        print(f"... {more} more diff lines" if more > 0 else "", end="")
        print("\nopenapi.yaml's schemas differ from the models: run `python scripts/openapi.py`")
        return 1
    SPEC.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
