"""openapi.yaml against the app: valid 3.1, same routes, schemas and error codes, live bodies."""

import hashlib
import json
import re
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate as validate_spec
from referencing import Registry
from referencing.jsonschema import DRAFT202012
from starlette.testclient import TestClient

import reactstep.service
import reactstep.tools
from reactstep.contract.errors import VALIDATION_CODES
from reactstep.contract.history import MAX_HISTORY_ITEMS, CompletedStep
from reactstep.contract.step_report import Usage
from reactstep.service import errors
from reactstep.service.http.app import ROUTES, create_app
from reactstep.service.http.auth import key_entry
from reactstep.service.http.endpoints import OPENAPI_PATH
from reactstep.service.llm.protocol import LLMReply, LLMRequest, NativeToolCall
from reactstep.service.settings import Settings
from reactstep.tools.errors import StaleFile, StoreUnavailable
from reactstep.tools.projects.journal import Projects
from reactstep.tools.projects.journaled import JournaledStore
from reactstep.tools.store.local import LocalStore

SPEC_URI = "urn:reactstep:openapi"
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
# Codes app.py's HTTPException handler writes for routing failures, by status.
ROUTING_CODES = {"not_found": 404, "method_not_allowed": 405}


@cache
def load_spec() -> dict[str, Any]:
    spec: dict[str, Any] = yaml.safe_load(OPENAPI_PATH.read_text(encoding="utf-8"))
    return spec


@cache
def spec_registry() -> Registry[Any]:
    registry: Registry[Any] = Registry().with_resource(SPEC_URI, DRAFT202012.create_resource(load_spec()))
    return registry


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def lookup(pointer: str) -> Any:
    node: Any = load_spec()
    for token in pointer.lstrip("/").split("/"):
        node = node[token.replace("~1", "/").replace("~0", "~")]
    return node


def validator(pointer: str) -> OAS31Validator:
    """A validator for the schema at `pointer` in the spec, with every $ref resolvable."""
    return OAS31Validator({"$ref": f"{SPEC_URI}#{pointer}"}, registry=spec_registry())


def errors_of(pointer: str, instance: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator(pointer).iter_errors(instance)
    ]


def spec_path(path: str, paths: dict[str, Any]) -> str:
    """The spec's path template a concrete path matches ('/api/projects/demo/index' -> '{project_id}')."""
    path = path.split("?", 1)[0]
    for template in paths:
        pattern = re.sub(r"\\\{[^/]+\\\}", "[^/]+", re.escape(template).replace(r"\{path\}", ".+"))
        if re.fullmatch(pattern, path):
            return template
    return path


def response_pointer(path: str, method: str, status: int) -> str:
    """The spec's response object for a call; unknown routes get NotFound/MethodNotAllowed."""
    paths = load_spec()["paths"]
    path = spec_path(path, paths)
    if path not in paths:
        pointer = "/components/responses/NotFound"
    elif method.lower() not in paths[path]:
        pointer = "/components/responses/MethodNotAllowed"
    else:
        pointer = f"/paths/{escape(path)}/{method.lower()}/responses/{status}"
    ref = lookup(pointer).get("$ref")
    return ref.removeprefix("#") if ref else pointer


def operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(path, method, operation) for every operation; a path item's shared `parameters` are skipped."""
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method in HTTP_METHODS:
                yield path, method, operation


def spec_error_responses() -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(where, status, response object) for every response listing x-error-codes."""
    spec = load_spec()
    for name, response in spec["components"]["responses"].items():
        yield f"components/responses/{name}", "", response
    for path, method, operation in operations(spec):
        for status, response in operation["responses"].items():
            if "$ref" in response:
                target = lookup(response["$ref"].removeprefix("#"))
                yield f"{method} {path} {status}", status, target
            else:
                yield f"{method} {path} {status}", status, response


def spec_error_codes() -> set[str]:
    return {code for _, _, r in spec_error_responses() for code in r.get("x-error-codes", [])}


# --- the document itself ---------------------------------------------------------------------


def test_spec_is_valid_openapi_3_1() -> None:
    spec = load_spec()
    assert spec["openapi"].startswith("3.1.")
    validate_spec(spec)


def test_routes_match_spec_paths() -> None:
    app_routes = {
        (re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path), method.lower())  # {path:path} is {path}
        for route in ROUTES
        for method in route.methods or ()
        if method != "HEAD"  # Starlette adds HEAD to GET routes
    }
    spec_routes = {
        (path, method)
        for path, item in load_spec()["paths"].items()
        for method in item
        if method in HTTP_METHODS
    }
    assert spec_routes == app_routes


# --- bodies the live calls send ------------------------------------------------------------

STEP = {
    "thought": "look",
    "action_details": {
        "tool_name": "read_file",
        "tool_args": {"file_path": "src/app.py"},
        "raw_action_string": 'Action: read_file(file_path="src/app.py")',
        "executor": "server",
    },
    "observation": "File: src/app.py (1 lines)",
    "is_error": False,
}
BASE = {"project_id": "demo", "session_id": "s1", "user_query": "What does src/app.py do?"}


def media_examples() -> Iterator[tuple[str, str, Any]]:
    """(id, schema pointer, example value) for every example in the spec."""
    spec = load_spec()
    bodies: list[tuple[str, dict[str, Any]]] = []
    for path, method, operation in operations(spec):
        base = f"/paths/{escape(path)}/{method}"
        if "requestBody" in operation:
            bodies.append((f"{base}/requestBody", operation["requestBody"]))
        for status, response in operation["responses"].items():
            bodies.append((f"{base}/responses/{status}", response))
    for name, response in spec["components"]["responses"].items():
        bodies.append((f"/components/responses/{name}", response))
    for where, body in bodies:
        for media, content in body.get("content", {}).items():
            pointer = f"{where}/content/{escape(media)}/schema"
            if "example" in content:
                yield f"{where} {media}", pointer, content["example"]
            for name, example in content.get("examples", {}).items():
                yield f"{where} {media} {name}", pointer, example["value"]


EXAMPLES = list(media_examples())


def test_spec_has_examples() -> None:
    assert len(EXAMPLES) >= 25


@pytest.mark.parametrize(("pointer", "value"), [e[1:] for e in EXAMPLES], ids=[e[0] for e in EXAMPLES])
def test_examples_match_their_schemas(pointer: str, value: Any) -> None:
    assert errors_of(pointer, value) == []


# --- error codes ------------------------------------------------------------------------------


def service_errors() -> list[type[errors.ServiceError]]:
    found: list[type[errors.ServiceError]] = []
    pending = [errors.ServiceError]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return found


def raised_codes() -> set[str]:
    """Codes of the ServiceErrors the code base builds (raise X(...) or return X(...)).

    internal_error is ServiceError's own code: app.py's catch-all handler answers with it.
    """
    sources = [
        path.read_text(encoding="utf-8")
        for package in (reactstep.service, reactstep.tools)
        for path in Path(str(package.__file__)).parent.rglob("*.py")
        if path.name != "errors.py"
    ]
    text = "\n".join(sources)
    built = {cls.code for cls in service_errors() if re.search(rf"\b{cls.__name__}\(", text)}
    # a code carried as data is raised by naming it: Forbidden(..., code="provider_not_allowed")
    built |= {code for cls in service_errors() for code in cls.carried_codes() if f'code="{code}"' in text}
    return built | {errors.ServiceError.code}


def test_raised_codes_are_found() -> None:
    # Guards the source scan: these are built in bodies.py, completions.py, llm/config.py, actions.py.
    expected = {
        "internal_error",
        "invalid_json",
        "validation_failed",
        "payload_too_large",
        "api_base_not_allowed",
        "llm_auth_failed",
        "llm_bad_response",
        "llm_rate_limited",
        "llm_unavailable",
        "llm_timeout",
        "storage_unavailable",
    }
    assert expected <= raised_codes()


@pytest.mark.parametrize("code", sorted(raised_codes()))
def test_every_raised_code_is_in_the_spec(code: str) -> None:
    assert code in spec_error_codes()


def test_the_422_body_names_the_codes_of_validation_failed_and_its_kinds() -> None:
    kinds = {
        code
        for cls in service_errors()
        if issubclass(cls, errors.ValidationFailed)
        for code in cls.carried_codes()
    }
    assert set(VALIDATION_CODES) == kinds


def test_every_spec_code_is_a_code_the_app_knows() -> None:
    known = {code for cls in service_errors() for code in cls.carried_codes()} | set(ROUTING_CODES)
    assert spec_error_codes() - known == set()


@pytest.mark.parametrize(("where", "status", "response"), list(spec_error_responses()))
def test_error_codes_are_listed_under_their_http_status(
    where: str, status: str, response: dict[str, Any]
) -> None:
    statuses = {code: cls.status for cls in service_errors() for code in cls.carried_codes()} | ROUTING_CODES
    codes = response.get("x-error-codes", [])
    bodies = response.get("content", {}).values()  # 204 and 304 have none
    # A schema, or one of its oneOf options (/mcp's 400 is an ErrorBody or a JSON-RPC error).
    schemas_used = {
        option.get("$ref")
        for media in bodies
        for option in [media.get("schema", {}), *media.get("schema", {}).get("oneOf", [])]
    }
    error_bodies = {"#/components/schemas/ErrorBody", "#/components/schemas/ValidationErrorBody"}
    assert bool(codes) is bool(schemas_used & error_bodies)
    for code in codes:
        expected = statuses[code]
        if status:
            assert int(status) == expected, code
        else:  # a shared response: all its codes share one status
            assert {statuses[c] for c in codes} == {expected}, codes


# --- live conformance -------------------------------------------------------------------------

FILE_TEXT = "print('hi')\n"


class ScriptedGateway:
    """Answers each LLM call with the next scripted text or reply, or raises the next scripted error."""

    def __init__(self, script: list[str | LLMReply | Exception]) -> None:
        self.script = list(script)
        self.requests: list[LLMRequest] = []

    async def complete(self, request: LLMRequest) -> LLMReply:
        self.requests.append(request)
        item = self.script.pop(0)
        if isinstance(item, Exception):
            raise item
        if isinstance(item, LLMReply):
            return item
        return LLMReply(text=item, usage=Usage(), finish_reason="stop", elapsed_ms=1.0)

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        reply = await self.complete(request)
        for start in range(0, len(reply.text), 5):
            yield reply.text[start : start + 5]
        yield reply


class BrokenStore(LocalStore):
    """An object store that does not answer."""

    def get(self, project_id: str, path: str) -> bytes:
        raise StoreUnavailable("connection refused")

    def get_index_file_tagged(self, project_id: str, name: str) -> tuple[bytes, str] | None:
        raise StoreUnavailable("connection refused")

    def put_index_file_if(self, project_id: str, name: str, data: bytes, expected_etag: str | None) -> str:
        raise StoreUnavailable("connection refused")

    def check(self) -> None:
        raise StoreUnavailable("connection refused")


class RacedStore(LocalStore):
    """A store where another replica's claim of every Idempotency-Key lands just before ours."""

    def put_record_if(self, name: str, data: bytes, expected_etag: str | None) -> str:
        raise StaleFile(name)


@dataclass(frozen=True)
class Call:
    """One request to the app, what it must answer, and what the spec says of its body."""

    method: str
    path: str
    status: int
    json: Any = None
    content: bytes | None = None
    script: tuple[str | LLMReply | Exception, ...] = ()
    settings: dict[str, Any] = field(default_factory=dict)
    broken_store: bool = False
    request_valid: bool | None = None  # whether the body matches the spec's request schema
    code: str | None = None  # the error code, for error answers
    expect: dict[str, Any] = field(default_factory=dict)  # exact top-level values in the answer
    llm_calls: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    media: str | None = "application/json"  # the answer's content type; None: no body (204, 304)
    tool_write: bool = False  # journal a tool's write of src/app.py before the call
    racing_claims: bool = False  # another replica always claims the Idempotency-Key first


def step(**extra: Any) -> dict[str, Any]:
    return {**BASE, **extra}


def action(**extra: Any) -> dict[str, Any]:
    return {"project_id": "demo", "session_id": "s1", **extra}


READ_APP = 'Thought: look\nAction: read_file(file_path="src/app.py")'
FORMAT_ERROR_START = "Your last reply could not be used: "
OBSERVATION = "File: src/app.py (1 lines)\n    1 | print('hi')"
FORMAT_ERROR_STEP = {"raw_output": "gibberish", "format_error": FORMAT_ERROR_START + "..."}
HISTORY = [
    {"role": "user", "content": "What is in src?"},
    {"role": "assistant", "content": "src/app.py"},
    STEP,
    FORMAT_ERROR_STEP,
]
REACT, EXECUTE, INDEX = "/api/agent/react_step", "/api/agent/execute_action", "/api/projects/demo/index"
ALL_TOOLS = (
    "code_search, create_file, edit_file, edit_lines, find_definition, find_files, find_importers, grep, "
    "list_files, project_overview, read_file, replace_in_file"
)
WRITE_ARGS = {"path": "src/app.py", "find": "hi", "replace": "bye"}
WRITE_PREVIEW = (
    "Nothing was written yet. The user must approve this change to src/app.py "
    "(+1 -1 lines, 1 replacement) before it is written:\n"
)
WRITE_DIFF = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-print('hi')\n+print('bye')\n"
DEAD_URL = "http://127.0.0.1:9"  # discard port: nothing listens on loopback, refused at once
SERVICE_KEY = "rsk_openapi-test-key-0123456789"
WITH_KEYS = {"api_keys": [key_entry(SERVICE_KEY, "demo,team-*")]}
BEARER = {"authorization": f"Bearer {SERVICE_KEY}"}
REQUEST_ID = "conformance-1"  # every call sends it; every answer and error body must repeat it
NO_STEP = f"/api/agent/steps/demo~{'A' * 32}"  # a well-formed id no step has

PROJECTS = "/api/projects"
DEMO, FILE, SYNC = f"{PROJECTS}/demo", f"{PROJECTS}/demo/files/src/app.py", f"{PROJECTS}/demo/sync"
FILE_ETAG = hashlib.md5(FILE_TEXT.encode()).hexdigest()
FILE_SHA256 = hashlib.sha256(FILE_TEXT.encode()).hexdigest()
BYE_SHA256 = hashlib.sha256(b"print('bye')\n").hexdigest()
PROJECT_ROUTES = [
    ("project create", "PUT", DEMO),
    ("project report", "GET", DEMO),
    ("project delete", "DELETE", DEMO),
    ("file put", "PUT", FILE),
    ("file get", "GET", FILE),
    ("file delete", "DELETE", FILE),
    ("sync", "POST", SYNC),
    ("changes", "GET", f"{DEMO}/changes"),
    ("gc", "POST", f"{DEMO}/gc"),
    ("index stop", "DELETE", INDEX),
]

MCP = "/mcp/demo"
MCP_ACCEPT = {"accept": "application/json, text/event-stream"}
MCP_READ = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "read_file", "arguments": {"file_path": "src/app.py"}},
}
MCP_CALLS = {
    "mcp tools/call": Call(
        "POST", MCP, 200, json=MCP_READ, headers=MCP_ACCEPT,
        expect={
            "result": {
                "content": [{"type": "text", "text": OBSERVATION}],
                "structuredContent": {"observation": OBSERVATION},
                "isError": False,
            }
        },
    ),
    "mcp batch": Call(
        "POST", MCP, 400, json=[MCP_READ, MCP_READ], headers=MCP_ACCEPT, expect={"jsonrpc": "2.0"}
    ),
    "mcp too deep": Call(
        "POST", MCP, 400, content=b'{"a": ' + b"[" * 40 + b"]" * 40 + b"}", headers=MCP_ACCEPT,
        code="json_too_deep",
    ),
    "mcp without a service key": Call(
        "POST", MCP, 401, json=MCP_READ, headers=MCP_ACCEPT, settings=WITH_KEYS, code="unauthorized"
    ),
    "mcp outside the key": Call(
        "POST", "/mcp/other", 403, json=MCP_READ, headers={**MCP_ACCEPT, **BEARER}, settings=WITH_KEYS,
        code="forbidden_project",
    ),
    "mcp from a page not allowed": Call(
        "POST", MCP, 403, json=MCP_READ, headers={**MCP_ACCEPT, "origin": "https://evil.example"},
        code="forbidden_origin",
    ),
    "mcp missing project": Call(
        "POST", "/mcp/nope", 404, json=MCP_READ, headers=MCP_ACCEPT, code="project_not_found"
    ),
    "mcp bad project id": Call(
        "POST", "/mcp/-x", 422, json=MCP_READ, headers=MCP_ACCEPT, code="validation_failed"
    ),
    "mcp not accepting JSON": Call("POST", MCP, 406, json=MCP_READ, headers={"accept": "text/html"}),
    "mcp too large": Call(
        "POST", MCP, 413, content=b"x" * 1_001, headers=MCP_ACCEPT, settings={"max_body_bytes": 1_000},
        code="payload_too_large",
    ),
    "mcp storage unavailable": Call(
        "POST", MCP, 503, json=MCP_READ, headers=MCP_ACCEPT, broken_store=True, code="storage_unavailable"
    ),
}  # fmt: skip

# A timeout says which setting gives a slow model more time, whatever the gateway's own words were.
SCRIPTED = {
    errors.LLMTimeout: "the LLM did not answer within 60 s; "
    "a slow model needs a larger REACTSTEP_LLM_TIMEOUT_S"
}
CALLS: dict[str, Call] = {
    "react_step action_proposed": Call(
        "POST",
        REACT,
        200,
        json=step(),
        script=(READ_APP,),
        request_valid=True,
        expect={
            "session_id": "s1",
            "status": "action_proposed",
            "thought": "look",
            "action_details": STEP["action_details"],
            "raw_output": READ_APP,
            "model": "openai/gpt-4o-mini",
        },
        llm_calls=1,
    ),
    "react_step action_proposed client": Call(
        "POST",
        REACT,
        200,
        json=step(client_tools=[{"name": "run_tests", "description": "Runs the tests."}]),
        script=("Thought: test\nAction: run_tests()",),
        request_valid=True,
        expect={
            "status": "action_proposed",
            "action_details": {
                "tool_name": "run_tests",
                "tool_args": {},
                "raw_action_string": "Action: run_tests()",
                "executor": "client",
            },
        },
        llm_calls=1,
    ),
    "react_step final_answer with history": Call(
        "POST",
        REACT,
        200,
        json=step(conversation_history=HISTORY, llm_config={"model": "openai/other"}),
        script=("Final Answer: done",),
        request_valid=True,
        expect={
            "status": "final_answer",
            "thought": "",
            "final_answer": "done",
            "raw_output": "Final Answer: done",
            "model": "openai/other",
        },
        llm_calls=1,
    ),
    "react_step format_error": Call(
        "POST",
        REACT,
        200,
        json=step(),
        script=("gibberish",),
        request_valid=True,
        expect={"status": "format_error", "raw_output": "gibberish"},
        llm_calls=1,
    ),
    "react_step max_iterations_reached": Call(
        "POST",
        REACT,
        200,
        json=step(max_iterations_left=0),
        request_valid=True,
        expect={
            "session_id": "s1",
            "status": "max_iterations_reached",
            "thought": "",
            "usage": {
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "total_tokens": 0,
                "cached_tokens": None,
                "estimated": False,
            },
            "timing": {"llm_ms": 0.0, "total_ms": 0.0, "retries": 0},
        },
        llm_calls=0,
    ),
    "react_step debug prompt": Call(
        "POST",
        REACT,
        200,
        json=step(),
        script=("Final Answer: done",),
        settings={"debug_prompt": True},
        request_valid=True,
        expect={"status": "final_answer"},
        llm_calls=1,
    ),
    "react_step native action_proposed": Call(
        "POST",
        REACT,
        200,
        json=step(llm_config={"tool_calling": "native"}),
        script=(
            LLMReply(
                text="look",
                usage=Usage(prompt_tokens=90, completion_tokens=9, total_tokens=99, cached_tokens=64),
                finish_reason="tool_calls",
                elapsed_ms=1.0,
                tool_calls=(NativeToolCall("read_file", '{"file_path": "src/app.py"}'),),
            ),
        ),
        request_valid=True,
        expect={
            "status": "action_proposed",
            "thought": "look",
            "action_details": STEP["action_details"],
            "raw_output": READ_APP,
            "tool_calling": "native",
            "usage": {
                "prompt_tokens": 90,
                "completion_tokens": 9,
                "total_tokens": 99,
                "cached_tokens": 64,
                "estimated": False,
                "cost_usd": 1.41e-05,  # 26 and 64 cached prompt tokens, 9 completion ones: gpt-4o-mini
            },
        },
        llm_calls=1,
    ),
    "react_step truncated_output": Call(
        "POST",
        REACT,
        200,
        json=step(llm_config={"max_tokens": 16}),
        script=(LLMReply(text="Thought: I need to", usage=Usage(), finish_reason="length", elapsed_ms=1.0),),
        request_valid=True,
        expect={"status": "truncated_output", "thought": "I need to", "raw_output": "Thought: I need to"},
        llm_calls=1,
    ),
    "react_step loop_detected": Call(
        "POST",
        REACT,
        200,
        json=step(conversation_history=[STEP, STEP, STEP]),
        script=(READ_APP,),
        request_valid=True,
        expect={"status": "loop_detected", "action_details": STEP["action_details"]},
        llm_calls=1,
    ),
    "react_step retried after a rate limit": Call(
        "POST",
        REACT,
        200,
        json=step(),
        script=(errors.LLMRateLimited("scripted"), "Final Answer: done"),
        settings={"llm_max_retries": 1, "llm_retry_base_s": 0.001},
        request_valid=True,
        expect={"status": "final_answer", "final_answer": "done"},
        llm_calls=2,
    ),
    "react_step invalid json": Call(
        "POST", REACT, 400, content=b"{not json", code="invalid_json", llm_calls=0
    ),
    "react_step empty body": Call("POST", REACT, 400, content=b"", code="invalid_json"),
    "react_step api_base not allowed": Call(
        "POST",
        REACT,
        403,
        json=step(llm_config={"api_base": "http://127.0.0.1:9/v1"}),
        request_valid=True,
        code="api_base_not_allowed",
        llm_calls=0,
    ),
    "react_step payload too large": Call(
        "POST",
        REACT,
        413,
        json=step(user_query="q" * 200),
        settings={"max_body_bytes": 100},
        code="payload_too_large",
    ),
    "react_step missing user_query": Call(
        "POST",
        REACT,
        422,
        json={"project_id": "demo", "session_id": "s1"},
        request_valid=False,
        code="validation_failed",
        expect={
            "error": {
                "code": "validation_failed",
                "message": "the request body does not match the schema: user_query: Field required",
                "details": [{"field": "user_query", "message": "Field required"}],
                "request_id": REQUEST_ID,
            }
        },
    ),
    "react_step client tool parameters not a JSON Schema": Call(
        "POST",
        REACT,
        422,
        json=step(client_tools=[{"name": "t", "parameters": {"type": "object", "properties": 5}}]),
        code="validation_failed",
        llm_calls=0,
        expect={
            "error": {
                "code": "validation_failed",
                "message": "the request body does not match the schema: client_tools.0.parameters: "
                'Value error, parameters is not a valid JSON Schema: 5 is not of type "object"',
                "details": [
                    {
                        "field": "client_tools.0.parameters",
                        "message": "Value error, parameters is not a valid JSON Schema: "
                        '5 is not of type "object"',
                    }
                ],
                "request_id": REQUEST_ID,
            }
        },
    ),
    "react_step client tool shadows a server tool": Call(
        "POST",
        REACT,
        422,
        json=step(client_tools=[{"name": "read_file"}]),
        request_valid=True,
        code="validation_failed",
        llm_calls=0,
    ),
    "react_step history too long": Call(
        "POST",
        REACT,
        422,
        json=step(conversation_history=[STEP] * (MAX_HISTORY_ITEMS + 1)),
        request_valid=False,  # the contract says maxItems: 200
        code="history_too_long",
        llm_calls=0,
    ),
    "react_step max_tokens too large": Call(
        "POST",
        REACT,
        422,
        json=step(llm_config={"max_tokens": 2_000}),
        settings={"llm_max_tokens_cap": 1_000},
        request_valid=True,
        code="max_tokens_too_large",
        llm_calls=0,
    ),
    "react_step json too deep": Call(
        "POST", REACT, 400, content=b'{"a":' * 40 + b"1" + b"}" * 40, code="json_too_deep", llm_calls=0
    ),
    "react_step provider not allowed": Call(
        "POST",
        REACT,
        403,
        json=step(llm_config={"model": "bedrock/anthropic.claude-v2"}),
        request_valid=True,
        code="provider_not_allowed",
        llm_calls=0,
    ),
    "react_step with a service key": Call(
        "POST",
        REACT,
        200,
        json=step(),
        script=(READ_APP,),
        settings=WITH_KEYS,
        headers=BEARER,
        request_valid=True,
        expect={"status": "action_proposed"},
        llm_calls=1,
    ),
    "react_step over the key's budget": Call(
        "POST",
        REACT,
        429,
        json=step(),
        script=(READ_APP,),
        settings={"api_keys": [key_entry(SERVICE_KEY, "demo", "tokens_per_day=10")]},
        headers=BEARER,
        code="budget_exhausted",
        llm_calls=0,
    ),
    "react_step without a service key": Call(
        "POST", REACT, 401, json=step(), settings=WITH_KEYS, code="unauthorized", llm_calls=0
    ),
    "react_step project outside the key": Call(
        "POST",
        REACT,
        403,
        json=step(project_id="other"),
        settings=WITH_KEYS,
        headers=BEARER,
        request_valid=True,
        code="forbidden_project",
        llm_calls=0,
    ),
    "execute_action without a service key": Call(
        "POST",
        EXECUTE,
        401,
        json=action(tool_name="read_file", tool_args={"file_path": "src/app.py"}),
        settings=WITH_KEYS,
        headers={"authorization": "Bearer not-a-configured-key"},
        code="unauthorized",
    ),
    "execute_action project outside the key": Call(
        "POST",
        EXECUTE,
        403,
        json={**action(tool_name="read_file", tool_args={"file_path": "src/app.py"}), "project_id": "other"},
        settings=WITH_KEYS,
        headers=BEARER,
        request_valid=True,
        code="forbidden_project",
    ),
    "index without a service key": Call("POST", INDEX, 401, settings=WITH_KEYS, code="unauthorized"),
    "index project outside the key": Call(
        "POST", "/api/projects/other/index", 403, settings=WITH_KEYS, headers=BEARER, code="forbidden_project"
    ),
    "tools without a service key": Call(
        "GET", "/api/agent/tools", 401, settings=WITH_KEYS, code="unauthorized"
    ),
    **{
        f"react_step {error.code}": Call(
            "POST",
            REACT,
            error.status,
            json=step(),
            script=(error("scripted"),),
            request_valid=True,
            code=error.code,
            expect={
                "error": {
                    "code": error.code,
                    "message": SCRIPTED.get(error, "scripted"),
                    "request_id": REQUEST_ID,
                }
            },
            llm_calls=1,
        )
        for error in (
            errors.LLMAuthFailed,
            errors.LLMBadResponse,
            errors.LLMRateLimited,
            errors.LLMUnavailable,
            errors.LLMTimeout,
        )
    },
    "react_step unexpected failure": Call(
        "POST",
        REACT,
        500,
        json=step(),
        script=(RuntimeError("boom"),),
        request_valid=True,
        code="internal_error",
        expect={
            "error": {
                "code": "internal_error",
                "message": "internal error; see the server log",
                "request_id": REQUEST_ID,
            }
        },
    ),
    "execute_action read_file": Call(
        "POST",
        EXECUTE,
        200,
        json=action(tool_name="read_file", tool_args={"file_path": "src/app.py"}),
        request_valid=True,
        expect={
            "session_id": "s1",
            "tool_name": "read_file",
            "observation": OBSERVATION,
            "is_error": False,
        },
    ),
    "execute_action list_files": Call(
        "POST",
        EXECUTE,
        200,
        json=action(tool_name="list_files", tool_args={"path": "", "recursive": True}),
        request_valid=True,
        expect={
            "observation": "Contents of ./ (1 entries):\nsrc/app.py  (12 bytes)",
            "is_error": False,
        },
    ),
    "execute_action write preview": Call(
        "POST",
        EXECUTE,
        200,
        json=action(tool_name="replace_in_file", tool_args=WRITE_ARGS),
        settings={"approval_secret": "openapi-test-secret"},
        request_valid=True,
        expect={"observation": WRITE_PREVIEW + WRITE_DIFF.rstrip(), "is_error": False},
    ),
    "execute_action missing file": Call(
        "POST",
        EXECUTE,
        200,
        json=action(tool_name="read_file", tool_args={"file_path": "src/nope.py"}),
        request_valid=True,
        expect={"observation": "Error: file not found: src/nope.py", "is_error": True},
    ),
    "execute_action unknown tool": Call(
        "POST",
        EXECUTE,
        200,
        json=action(tool_name="delete_everything", tool_args={"query": "auth"}),
        request_valid=True,
        expect={
            "observation": f"Error: unknown tool 'delete_everything'. Available tools: {ALL_TOOLS}",
            "is_error": True,
        },
    ),
    "execute_action storage unavailable": Call(
        "POST",
        EXECUTE,
        503,
        json=action(tool_name="read_file", tool_args={"file_path": "src/app.py"}),
        broken_store=True,
        request_valid=True,
        code="storage_unavailable",
    ),
    "execute_action invalid json": Call("POST", EXECUTE, 400, content=b"[1,", code="invalid_json"),
    "execute_action unknown key": Call(
        "POST",
        EXECUTE,
        422,
        json=action(tool_name="read_file", tool_name_2="x"),
        request_valid=False,
        code="validation_failed",
        expect={
            "error": {
                "code": "validation_failed",
                "message": "the request body does not match the schema: "
                "tool_name_2: Extra inputs are not permitted",
                "details": [{"field": "tool_name_2", "message": "Extra inputs are not permitted"}],
                "request_id": REQUEST_ID,
            }
        },
    ),
    "execute_action payload too large": Call(
        "POST",
        EXECUTE,
        413,
        json=action(tool_name="read_file", tool_args={"file_path": "x" * 200}),
        settings={"max_body_bytes": 100},
        code="payload_too_large",
    ),
    "index": Call(
        "POST",
        INDEX,
        200,
        expect={"project_id": "demo", "files": 1, "embedded": 1, "reused": 0, "removed": 0, "skipped": 0},
    ),
    "index invalid json": Call("POST", INDEX, 400, content=b"{", code="invalid_json"),
    "index payload too large": Call(
        "POST",
        INDEX,
        413,
        json={"user_api_keys": {"embeddingKey": "x" * 200}},
        settings={"max_body_bytes": 100},
        code="payload_too_large",
    ),
    "index bad project id": Call("POST", "/api/projects/bad$id/index", 422, code="validation_failed"),
    "index vector store down": Call(
        "POST",
        INDEX,
        503,
        settings={"vector_backend": "qdrant", "qdrant_url": DEAD_URL, "qdrant_timeout_s": 1},
        code="vector_store_unavailable",
    ),
    "react_step missing project": Call(
        "POST",
        REACT,
        404,
        json=step(project_id="nope"),
        request_valid=True,
        code="project_not_found",
        llm_calls=0,
    ),
    "execute_action missing project": Call(
        "POST",
        EXECUTE,
        404,
        json=action(project_id="nope", tool_name="read_file", tool_args={"file_path": "a.py"}),
        request_valid=True,
        code="project_not_found",
    ),
    "project create": Call(
        "PUT",
        f"{PROJECTS}/fresh",
        201,
        expect={"project_id": "fresh", "files": 0, "chunks": 0, "version": 0, "index_state": "ready"},
    ),
    "project create again": Call("PUT", DEMO, 200, expect={"project_id": "demo", "files": 1, "version": 0}),
    "project create bad id": Call("PUT", f"{PROJECTS}/bad$id", 422, code="validation_failed"),
    "project create storage unavailable": Call(
        "PUT", f"{PROJECTS}/fresh", 503, broken_store=True, code="storage_unavailable"
    ),
    "project report": Call(
        "GET", DEMO, 200, expect={"files": 1, "bytes": 12, "version": 0, "indexed_version": 0, "chunks": 0}
    ),
    "project report missing": Call("GET", f"{PROJECTS}/nope", 404, code="project_not_found"),
    "project report bad id": Call("GET", f"{PROJECTS}/bad$id", 422, code="validation_failed"),
    "project report storage unavailable": Call(
        "GET", DEMO, 503, broken_store=True, code="storage_unavailable"
    ),
    "project delete": Call("DELETE", DEMO, 204, media=None),
    "project delete missing": Call("DELETE", f"{PROJECTS}/nope", 404, code="project_not_found"),
    "project delete bad id": Call("DELETE", f"{PROJECTS}/bad$id", 422, code="validation_failed"),
    "project delete storage unavailable": Call(
        "DELETE", DEMO, 503, broken_store=True, code="storage_unavailable"
    ),
    "file put": Call(
        "PUT",
        FILE,
        200,
        content=b"print('bye')\n",
        expect={"path": "src/app.py", "version": 1, "changed": True},
    ),
    "file put missing project": Call(
        "PUT", f"{PROJECTS}/nope/files/a.py", 404, content=b"x", code="project_not_found"
    ),
    "file put over a tool write": Call(
        "PUT", f"{FILE}?base_version=0", 409, content=b"mine\n", tool_write=True, code="conflict"
    ),
    "file put if-match failed": Call(
        "PUT", FILE, 412, content=b"x", headers={"if-match": '"0123"'}, code="precondition_failed"
    ),
    "file put digest mismatch": Call(
        "PUT",
        FILE,
        400,
        content=b"x",
        headers={"content-digest": "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:"},
        code="digest_mismatch",
    ),
    "file put malformed digest": Call(
        "PUT", FILE, 400, content=b"x", headers={"content-digest": "sha-256=abc"}, code="invalid_digest"
    ),
    "file put too large": Call(
        "PUT", FILE, 413, content=b"x" * 11, settings={"file_max_bytes": 10}, code="payload_too_large"
    ),
    "file put bad path": Call("PUT", f"{DEMO}/files/a%07b.py", 422, content=b"x", code="invalid_path"),
    "file put storage unavailable": Call(
        "PUT", FILE, 503, content=b"x", broken_store=True, code="storage_unavailable"
    ),
    "file get": Call("GET", FILE, 200, media="application/octet-stream"),
    "file get not modified": Call("GET", FILE, 304, headers={"if-none-match": f'"{FILE_ETAG}"'}, media=None),
    "file get missing": Call("GET", f"{DEMO}/files/src/nope.py", 404, code="file_not_found"),
    "file get bad path": Call("GET", f"{DEMO}/files/a%07b.py", 422, code="invalid_path"),
    "file get storage unavailable": Call("GET", FILE, 503, broken_store=True, code="storage_unavailable"),
    "file get version": Call(
        "GET", f"{FILE}?version=0", 200, tool_write=True, media="application/octet-stream"
    ),
    "file get version deleted": Call(
        "GET", f"{DEMO}/files/src/nope.py?version=0", 404, code="file_not_found"
    ),
    "file get version ahead": Call("GET", f"{FILE}?version=9", 409, code="conflict"),
    "file get bad version": Call("GET", f"{FILE}?version=x", 422, code="validation_failed"),
    "gc": Call("POST", f"{DEMO}/gc", 200, tool_write=True, expect={"removed": [], "paths": 1}),
    "gc missing project": Call("POST", f"{PROJECTS}/nope/gc", 404, code="project_not_found"),
    "gc bad project id": Call("POST", f"{PROJECTS}/.bad/gc", 422, code="validation_failed"),
    "gc storage unavailable": Call("POST", f"{DEMO}/gc", 503, broken_store=True, code="storage_unavailable"),
    "file delete": Call("DELETE", FILE, 200, expect={"path": "src/app.py", "version": 1, "sha256": None}),
    "file delete missing": Call("DELETE", f"{DEMO}/files/src/nope.py", 404, code="file_not_found"),
    "file delete over a tool write": Call(
        "DELETE", f"{FILE}?base_version=0", 409, tool_write=True, code="conflict"
    ),
    "file delete if-match failed": Call(
        "DELETE", FILE, 412, headers={"if-match": '"0123"'}, code="precondition_failed"
    ),
    "file delete bad path": Call("DELETE", f"{DEMO}/files/a%07b.py", 422, code="invalid_path"),
    "file delete storage unavailable": Call(
        "DELETE", FILE, 503, broken_store=True, code="storage_unavailable"
    ),
    "sync": Call(
        "POST",
        SYNC,
        200,
        json={"files": {"src/app.py": FILE_SHA256, "src/new.py": "0" * 64}, "base_version": 0},
        request_valid=True,
        expect={"version": 0, "upload": ["src/new.py"], "delete": [], "conflicts": []},
    ),
    "sync invalid json": Call("POST", SYNC, 400, content=b"{", code="invalid_json"),
    "sync missing project": Call(
        "POST", f"{PROJECTS}/nope/sync", 404, json={"files": {}}, request_valid=True, code="project_not_found"
    ),
    "sync base_version ahead": Call(
        "POST", SYNC, 409, json={"files": {}, "base_version": 5}, request_valid=True, code="conflict"
    ),
    "sync too large": Call(
        "POST",
        SYNC,
        413,
        json={"files": {"a.py": "0" * 64}},
        settings={"max_body_bytes": 10},
        code="payload_too_large",
    ),
    "sync malformed hash": Call(
        "POST", SYNC, 422, json={"files": {"a.py": "xyz"}}, request_valid=False, code="validation_failed"
    ),
    "sync storage unavailable": Call(
        "POST", SYNC, 503, json={"files": {}}, broken_store=True, code="storage_unavailable"
    ),
    "changes": Call(
        "GET",
        f"{DEMO}/changes?since=0",
        200,
        tool_write=True,
        expect={
            "version": 1,
            "changes": [
                {
                    "version": 1,
                    "path": "src/app.py",
                    "sha256": BYE_SHA256,
                    "origin": "tool",
                    "url": "/api/projects/demo/files/src/app.py?version=1",
                }
            ],
        },
    ),
    "changes missing project": Call("GET", f"{PROJECTS}/nope/changes", 404, code="project_not_found"),
    "changes since ahead": Call("GET", f"{DEMO}/changes?since=9", 409, code="conflict"),
    "changes bad since": Call("GET", f"{DEMO}/changes?since=-1", 422, code="validation_failed"),
    "changes storage unavailable": Call(
        "GET", f"{DEMO}/changes", 503, broken_store=True, code="storage_unavailable"
    ),
    "index in the background": Call("POST", INDEX, 202, json={"background": True}, request_valid=True),
    "index streamed": Call(
        "POST", INDEX, 200, json={"stream": True}, media="text/event-stream; charset=utf-8"
    ),
    "index missing project": Call("POST", f"{PROJECTS}/nope/index", 404, code="project_not_found"),
    "index stop with no run": Call(
        "DELETE", INDEX, 200, expect={"stopped": False, "indexed_version": 0, "index_state": "ready"}
    ),
    "index stop missing project": Call("DELETE", f"{PROJECTS}/nope/index", 404, code="project_not_found"),
    "index stop bad id": Call("DELETE", f"{PROJECTS}/bad$id/index", 422, code="validation_failed"),
    "index stop storage unavailable": Call(
        "DELETE", INDEX, 503, broken_store=True, code="storage_unavailable"
    ),
    **{
        f"{name} without a service key": Call(method, path, 401, settings=WITH_KEYS, code="unauthorized")
        for name, method, path in PROJECT_ROUTES
    },
    **{
        f"{name} outside the key": Call(
            method,
            path.replace("/demo", "/other"),
            403,
            settings=WITH_KEYS,
            headers=BEARER,
            code="forbidden_project",
        )
        for name, method, path in PROJECT_ROUTES
    },
    **MCP_CALLS,
    "tools": Call("GET", "/api/agent/tools", 200),
    "healthz": Call("GET", "/healthz", 200, expect={"status": "ok"}),
    "metrics": Call("GET", "/metrics", 200, media="text/plain; version=0.0.4; charset=utf-8"),
    "metrics without a service key": Call("GET", "/metrics", 401, settings=WITH_KEYS, code="unauthorized"),
    "version": Call("GET", "/version", 200),
    "version with keys configured, no key needed": Call("GET", "/version", 200, settings=WITH_KEYS),
    "readyz ready": Call(
        "GET", "/readyz", 200, expect={"status": "ready", "checks": {"storage": "ok", "llm": "unconfigured"}}
    ),
    "readyz with a hosted model's key, not probed": Call(
        "GET",
        "/readyz",
        200,
        settings={"llm_api_key": "sk-hosted"},
        expect={"status": "ready", "checks": {"storage": "ok", "llm": "configured"}},
    ),
    "readyz unavailable": Call(
        "GET",
        "/readyz",
        503,
        broken_store=True,
        expect={
            "status": "unavailable",
            "checks": {"storage": "unavailable: connection refused", "llm": "unconfigured"},
        },
    ),
    # Background steps: the answers a second request reads are in test_background_steps_spec.py.
    "react_step background": Call(
        "POST", REACT, 202, json=step(background=True, max_iterations_left=0), expect={"status": "running"}
    ),
    "step unknown": Call("GET", NO_STEP, 404, code="step_not_found"),
    "step without a service key": Call("GET", NO_STEP, 401, settings=WITH_KEYS, code="unauthorized"),
    "step of another project": Call(
        "GET",
        f"/api/agent/steps/secret~{'A' * 32}",
        403,
        settings=WITH_KEYS,
        headers=BEARER,
        code="forbidden_project",
    ),
    "step events unknown": Call("GET", f"{NO_STEP}/events", 404, code="step_not_found"),
    "step deleted unknown": Call("DELETE", NO_STEP, 404, code="step_not_found"),
    "step deleted without a service key": Call(
        "DELETE", NO_STEP, 401, settings=WITH_KEYS, code="unauthorized"
    ),
    "step deleted of another project": Call(
        "DELETE",
        f"/api/agent/steps/secret~{'A' * 32}",
        403,
        settings=WITH_KEYS,
        headers=BEARER,
        code="forbidden_project",
    ),
    "step events without a service key": Call(
        "GET", f"{NO_STEP}/events", 401, settings=WITH_KEYS, code="unauthorized"
    ),
    "step events of another project": Call(
        "GET",
        f"/api/agent/steps/secret~{'A' * 32}/events",
        403,
        settings=WITH_KEYS,
        headers=BEARER,
        code="forbidden_project",
    ),
    "step events after a bad Last-Event-ID": Call(
        "GET", f"{NO_STEP}/events", 400, headers={"last-event-id": "one"}, code="bad_request"
    ),
    "unknown route": Call(
        "GET",
        "/api/agent/nope",
        404,
        code="not_found",
        expect={
            "error": {
                "code": "not_found",
                "message": "GET /api/agent/nope: Not Found",
                "request_id": REQUEST_ID,
            }
        },
    ),
    "wrong method": Call(
        "GET",
        REACT,
        405,
        code="method_not_allowed",
        expect={
            "error": {
                "code": "method_not_allowed",
                "message": "GET /api/agent/react_step: Method Not Allowed",
                "request_id": REQUEST_ID,
            }
        },
    ),
}

# Every route that changes something takes an Idempotency-Key: a malformed one is 400, and one whose
# first request still runs (here: claimed by another replica each time we look) is 409.
KEYED_ROUTES = [
    ("react_step", "POST", REACT),
    ("execute_action", "POST", EXECUTE),
    ("index", "POST", INDEX),
    *[
        (name, method, path)
        for name, method, path in PROJECT_ROUTES
        if method != "GET" and name != "index stop"
    ],
]
for _name, _method, _path in KEYED_ROUTES:
    CALLS[f"{_name} bad idempotency key"] = Call(
        _method, _path, 400, headers={"idempotency-key": "a b"}, code="invalid_idempotency_key"
    )
    CALLS[f"{_name} idempotency key in flight"] = Call(
        _method,
        _path,
        409,
        headers={"idempotency-key": "k1"},
        racing_claims=True,
        code="idempotency_key_in_flight",
    )


EMBEDDING_FAULTS = {
    ("/api/agent/execute_action", "post", "502"),
    ("/api/agent/execute_action", "post", "504"),
    ("/api/projects/{project_id}/index", "post", "502"),
    ("/api/projects/{project_id}/index", "post", "504"),
    ("/api/projects/{project_id}/sync", "post", "502"),
}
# A body that never arrives whole needs a real socket: tests/service/http/test_slow_bodies.py sends
# one to each of these routes and checks each 408 against these same response schemas.
SLOW_BODIES = {
    ("/api/agent/react_step", "post", "408"),
    ("/api/agent/execute_action", "post", "408"),
    ("/api/projects/{project_id}/files/{path}", "put", "408"),
    ("/api/projects/{project_id}/sync", "post", "408"),
    ("/api/projects/{project_id}/index", "post", "408"),
    ("/mcp/{project_id}", "post", "408"),
}
# A notification's 202 has no body to check here: tests/service/mcp/test_mcp_http.py sends one.
MCP_ONLY = {("/mcp/{project_id}", "post", "202")}
# A run stopped mid-way, and one still stopping, need a real run: tests/service/http/test_index_stop.py
# makes them and checks each answer against these same schemas. A 499 is never received (the client
# left): tests/service/http/test_cancellation.py checks the log line and metrics that carry it.
CANCELLATION = {
    ("/api/projects/{project_id}/index", "post", "409"),
    ("/api/projects/{project_id}/index", "delete", "202"),
    ("/api/agent/react_step", "post", "499"),
}
# A background step's answers need the step started first: test_background_steps_spec.py starts one and
# checks each of these against these same response schemas.
BACKGROUND_ONLY = {
    *(("/api/agent/steps/{step_id}", "get", status) for status in ("200", "202", "502", "503", "504")),
    ("/api/agent/steps/{step_id}/events", "get", "200"),
    ("/api/agent/steps/{step_id}", "delete", "204"),
    ("/api/agent/steps/{step_id}", "delete", "409"),
}


def test_live_calls_cover_every_route_and_documented_status() -> None:
    paths = load_spec()["paths"]
    called = {(spec_path(c.path, paths), c.method.lower(), str(c.status)) for c in CALLS.values()}
    documented = {
        (path, method, status)
        for path, method, operation in operations(load_spec())
        for status in operation["responses"]
    }
    # 500 is documented for every operation but only provoked on react_step. The embedding
    # provider's faults need a loopback provider: tests/service/workspace/test_code_search.py provokes them
    # and checks each answer against these same response schemas.
    uncalled = {
        entry
        for entry in documented
        - called
        - EMBEDDING_FAULTS
        - SLOW_BODIES
        - MCP_ONLY
        - CANCELLATION
        - BACKGROUND_ONLY
        if entry[2] != "500"
    }
    assert uncalled == {("/openapi.yaml", "get", "200")}  # checked by its own test below


def answer(call: Call, tmp_path: Path) -> tuple[Any, ScriptedGateway]:
    # Explicit values, so REACTSTEP_* variables in the environment cannot change the answers.
    fields: dict[str, Any] = {
        "data_dir": tmp_path,
        "storage_backend": "local",
        "llm_model": "openai/gpt-4o-mini",
        "llm_api_base_allowlist": [],
        "debug_prompt": False,
        "max_body_bytes": 1_000_000,
        "llm_max_retries": 0,
        "llm_tool_calling": "text",
    }
    settings = Settings(**{**fields, **call.settings})
    kind = BrokenStore if call.broken_store else RacedStore if call.racing_claims else LocalStore
    store = kind(tmp_path / "objects")
    if not call.broken_store:
        store.put("demo", "src/app.py", FILE_TEXT.encode())
    if call.tool_write:
        JournaledStore(store, Projects(store), "tool").put("demo", "src/app.py", b"print('bye')\n")
    gateway = ScriptedGateway(list(call.script))
    app = create_app(settings, llm=gateway, store=store)
    with TestClient(app, raise_server_exceptions=False) as client:
        headers = {"x-request-id": REQUEST_ID, **call.headers}
        if call.content is not None and call.method == "POST":
            headers = {"content-type": "application/json", **headers}
        if call.path == "/readyz":  # the llm verdict is made in the background from the first call
            while client.get("/readyz").json()["status"] == "warming":
                time.sleep(0.05)
        if call.content is not None:
            response = client.request(call.method, call.path, content=call.content, headers=headers)
        else:
            response = client.request(call.method, call.path, json=call.json, headers=headers)
    return response, gateway


@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
def test_live_answer_matches_the_spec(call: Call, tmp_path: Path) -> None:
    response, gateway = answer(call, tmp_path)
    assert response.status_code == call.status, response.text
    assert response.headers["x-request-id"] == REQUEST_ID
    if call.media != "application/json":
        assert response.headers.get("content-type") == call.media
        if call.media is None:
            assert response.content == b""
        return
    assert response.headers["content-type"] == "application/json"
    body = response.json()

    pointer = response_pointer(call.path, call.method, call.status)
    documented = lookup(pointer)
    assert errors_of(f"{pointer}/content/application~1json/schema", body) == []
    if call.code is not None:
        assert (body["error"]["code"], body["error"]["request_id"]) == (call.code, REQUEST_ID)
        assert call.code in documented["x-error-codes"]
    elif "jsonrpc" not in body:  # a JSON-RPC error of /mcp carries the protocol's codes, not ours
        assert "x-error-codes" not in documented
    for key, value in call.expect.items():
        assert body[key] == value, key
    if call.llm_calls is not None:
        assert len(gateway.requests) == call.llm_calls
    if call.request_valid is not None:
        template = spec_path(call.path, load_spec()["paths"])
        request_pointer = f"/paths/{escape(template)}/post/requestBody/content/application~1json"
        assert (errors_of(f"{request_pointer}/schema", call.json) == []) is call.request_valid


def test_live_approved_write_matches_the_spec(tmp_path: Path) -> None:
    preview_call = CALLS["execute_action write preview"]
    preview, _ = answer(preview_call, tmp_path)
    approval = preview.json()["approval"]
    assert (approval["required"], approval["diff"]) == (True, WRITE_DIFF)
    approved = replace(preview_call, json={**preview_call.json, "approval_token": approval["token"]})
    response, _ = answer(approved, tmp_path)  # a fresh app with the same secret: another replica
    body = response.json()
    pointer = response_pointer(EXECUTE, "POST", 200)
    assert errors_of(f"{pointer}/content/application~1json/schema", body) == []
    assert (body["observation"], body["is_error"]) == ("Wrote src/app.py (+1 -1 lines).", False)
    assert "approval" not in body
    request_pointer = f"/paths/{escape(EXECUTE)}/post/requestBody/content/application~1json/schema"
    assert errors_of(request_pointer, approved.json) == []
    assert LocalStore(tmp_path / "objects").get("demo", "src/app.py") == b"print('bye')\n"


def test_live_format_error_is_what_the_client_appends(tmp_path: Path) -> None:
    response, _ = answer(CALLS["react_step format_error"], tmp_path)
    body = response.json()
    assert body["format_error"].startswith(FORMAT_ERROR_START)
    appended = {"raw_output": body["raw_output"], "format_error": body["format_error"]}
    assert errors_of("/components/schemas/HistoryItem", appended) == []


def test_live_action_is_what_the_client_appends(tmp_path: Path) -> None:
    proposed, _ = answer(CALLS["react_step action_proposed"], tmp_path)
    observed, _ = answer(CALLS["execute_action read_file"], tmp_path)
    appended = {
        "thought": proposed.json()["thought"],
        "action_details": proposed.json()["action_details"],
        "observation": observed.json()["observation"],
        "is_error": observed.json()["is_error"],
    }
    assert errors_of("/components/schemas/HistoryItem", appended) == []
    assert CompletedStep.model_validate(appended).observation == OBSERVATION


def test_live_debug_prompt_is_the_rendered_messages(tmp_path: Path) -> None:
    response, gateway = answer(CALLS["react_step debug prompt"], tmp_path)
    assert response.json()["prompt"] == gateway.requests[0].messages
    without, _ = answer(CALLS["react_step final_answer with history"], tmp_path / "other")
    assert "prompt" not in without.json()


def test_live_history_renders_turns_before_the_question(tmp_path: Path) -> None:
    _, gateway = answer(CALLS["react_step final_answer with history"], tmp_path)
    messages = gateway.requests[0].messages
    assert [m["role"] for m in messages] == [
        "system",
        "user",  # Turn user
        "assistant",  # Turn assistant
        "user",  # the current user_query, after the last Turn
        "assistant",  # CompletedStep: the action
        "user",  # CompletedStep: the observation
        "assistant",  # FormatErrorStep: raw_output
        "user",  # FormatErrorStep: format_error
    ]
    assert BASE["user_query"] in messages[3]["content"]
    assert messages[7]["content"] == FORMAT_ERROR_STEP["format_error"]


def test_live_tools_manifest(tmp_path: Path) -> None:
    response, _ = answer(CALLS["tools"], tmp_path)
    body = response.json()
    assert [tool["name"] for tool in body["tools"]] == [
        "code_search",
        "grep",
        "find_files",
        "find_definition",
        "find_importers",
        "project_overview",
        "list_files",
        "read_file",
        "create_file",
        "edit_file",
        "replace_in_file",
        "edit_lines",
    ]
    documented = lookup("/paths/~1api~1agent~1tools/get/responses/200/content/application~1json")
    assert body == documented["examples"]["default_tools"]["value"]


def test_live_openapi_yaml_is_this_document(tmp_path: Path) -> None:
    response, _ = answer(Call("GET", "/openapi.yaml", 200), tmp_path)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/yaml"
    assert response.content == OPENAPI_PATH.read_bytes()
    assert yaml.safe_load(response.content) == load_spec()
    assert list(lookup("/paths/~1openapi.yaml/get/responses/200/content")) == ["application/yaml"]


STREAMED = [
    "react_step action_proposed",
    "react_step native action_proposed",
    "react_step final_answer with history",
    "react_step format_error",
    "react_step truncated_output",
    "react_step loop_detected",
    "react_step max_iterations_reached",
    "react_step retried after a rate limit",
    "react_step llm_rate_limited",
    "react_step llm_auth_failed",
    "react_step unexpected failure",
]


def sse_events(text: str) -> list[tuple[str, Any]]:
    events = []
    for block in text.split("\n\n"):
        if block:
            fields = dict(line.split(": ", 1) for line in block.splitlines())
            events.append((fields["event"], json.loads(fields["data"])))
    return events


@pytest.mark.parametrize("name", STREAMED)
def test_live_stream_matches_the_spec(name: str, tmp_path: Path) -> None:
    """Streamed, the same call answers 200 events: thoughts, then its body as `result` or `error`."""
    call = CALLS[name]
    plain, _ = answer(call, tmp_path / "plain")
    streamed, gateway = answer(replace(call, json={**call.json, "stream": True}), tmp_path / "streamed")
    assert streamed.status_code == 200
    assert streamed.headers["content-type"] == "text/event-stream; charset=utf-8"
    media = lookup(f"{response_pointer(REACT, 'POST', 200)}/content/text~1event-stream")
    events = sse_events(streamed.text)
    for event, data in events:
        assert errors_of(media["x-sse-events"][event].removeprefix("#"), data) == [], event
    *thoughts, (last, body) = events
    assert {event for event, _ in thoughts} <= {"thought"}
    if plain.status_code == 200:
        assert last == "result"
        assert "".join(data["delta"] for _, data in thoughts) == body["thought"]
        assert {k: v for k, v in body.items() if k != "timing"} == {
            k: v for k, v in plain.json().items() if k != "timing"
        }
    else:
        assert (last, body) == ("error", plain.json())
    if call.llm_calls is not None:
        assert len(gateway.requests) == call.llm_calls


def test_live_stream_needs_no_llm_for_a_broken_request(tmp_path: Path) -> None:
    call = CALLS["react_step api_base not allowed"]
    response, gateway = answer(replace(call, json={**call.json, "stream": True}), tmp_path)
    assert (response.status_code, response.json()["error"]["code"]) == (403, "api_base_not_allowed")
    assert gateway.requests == []
