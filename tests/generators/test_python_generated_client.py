"""openapi-python-client eats openapi.yaml whole: every operation generated without a warning, and the
generated client syncs, indexes, searches and makes an approved write against the real server."""

import hashlib
import importlib
import inspect
import io
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from tests.generators.conftest import EDIT, EDITED, QUERY, SERVICE_KEY, SPEC, SPENT_KEY, WORKSPACE

PACKAGE = "reactstep_generated_client"
GENERATOR = str(Path(sys.executable).parent / "openapi-python-client")
# No post hooks (they run ruff over the generated code: slow, and nothing the test reads).
# openapi-python-client knows JSON, octet-stream and text/*; /openapi.yaml answers RFC 9512's
# application/yaml, which it is told to read as text.
CONFIG = "post_hooks: []\ncontent_type_overrides:\n  application/yaml: text/plain\n"


class Generated:
    """The generated package, imported under PACKAGE, and what the generator printed."""

    def __init__(self, root: Path, output: str) -> None:
        self.root = root
        self.output = output

    def module(self, name: str) -> ModuleType:
        """A module of the generated package, e.g. "api.projects.put_file"."""
        return importlib.import_module(f"{PACKAGE}.{name}")


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Generated]:
    """The client generated from openapi.yaml into a temporary folder (no network) and importable."""
    work = tmp_path_factory.mktemp("python-client")
    (work / "config.yaml").write_text(CONFIG)
    command = [
        GENERATOR,
        "generate",
        "--path",
        str(SPEC),
        "--output-path",
        PACKAGE,
        "--config",
        "config.yaml",
    ]
    run = subprocess.run(
        [*command, "--meta", "none"],  # the package alone, without a pyproject around it
        cwd=work,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    sys.path.insert(0, str(work))
    try:
        yield Generated(work / PACKAGE, run.stdout + run.stderr)
    finally:
        sys.path.remove(str(work))
        for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def test_the_generator_reads_the_spec_without_a_warning(generated: Generated) -> None:
    assert generated.output == f"Generating {PACKAGE}\n"


def snake_case(operation_id: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", operation_id).lower()


# (tag, operation's module name) -> the status codes the spec declares, in order
DECLARED = {
    (operation["tags"][0], snake_case(operation["operationId"])): sorted(
        int(code) for code in operation["responses"]
    )
    for path_item in yaml.safe_load(SPEC.read_text())["paths"].values()
    for method, operation in path_item.items()
    if method in ("get", "put", "post", "delete")
}


def test_every_operation_is_generated(generated: Generated) -> None:
    modules = {(path.parent.name, path.stem) for path in (generated.root / "api").glob("*/*.py")}
    assert set(DECLARED) == modules - {(tag, "__init__") for tag, _ in DECLARED}
    assert {("operations", "readyz"), ("operations", "openapi_spec")} <= set(DECLARED)


@pytest.mark.parametrize(("tag", "operation"), sorted(DECLARED))
def test_every_declared_answer_is_parsed(generated: Generated, tag: str, operation: str) -> None:
    parse = generated.module(f"api.{tag}.{operation}")._parse_response
    parsed = [int(code) for code in re.findall(r"response\.status_code == (\d+)", inspect.getsource(parse))]
    assert parsed == DECLARED[tag, operation]


def test_the_file_body_is_binary_both_ways(generated: Generated) -> None:
    types = generated.module("types")
    put_file, get_file = generated.module("api.projects.put_file"), generated.module("api.projects.get_file")
    body = inspect.signature(put_file.sync).parameters["body"].annotation
    assert set(getattr(body, "__args__", (body,))) - {types.Unset} == {types.File}  # no body: an empty file
    assert types.File in inspect.signature(get_file.sync).return_annotation.__args__


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def settled(readyz: ModuleType, client: Any) -> Any:
    """/readyz's parsed answer once no check is still warming (200 or 503, never UnexpectedStatus)."""
    deadline = time.monotonic() + 60
    while (answer := readyz.sync(client=client)).status == "warming":
        assert time.monotonic() < deadline, "readyz still warming after 60 s"
        time.sleep(0.2)
    return answer


def test_the_generated_client_syncs_indexes_searches_writes(generated: Generated, server_url: str) -> None:
    models, types, clients = (generated.module(name) for name in ("models", "types", "client"))
    anonymous = clients.Client(base_url=server_url, raise_on_unexpected_status=True)
    client = clients.AuthenticatedClient(
        base_url=server_url, token=SERVICE_KEY, raise_on_unexpected_status=True, timeout=None
    )
    readiness = settled(generated.module("api.operations.readyz"), anonymous)
    assert readiness.to_dict() == {"status": "ready", "checks": {"storage": "ok", "llm": "ok"}}
    assert generated.module("api.operations.openapi_spec").sync(client=anonymous) == SPEC.read_text()

    project = "py-generated"
    create_project = generated.module("api.projects.create_project")
    refused = create_project.sync(project, client=anonymous)  # no key: a declared answer, parsed
    assert (type(refused), refused.error.code) == (models.ErrorBody, "unauthorized")
    created = create_project.sync(project, client=client)
    assert created.to_dict()["bytes"] == created.bytes_ == 0  # Python's name; the wire's is `bytes`
    sync_project = generated.module("api.projects.sync_project")
    manifest = models.SyncRequestFiles.from_dict({path: sha256(data) for path, data in WORKSPACE.items()})
    plan = sync_project.sync(project, client=client, body=models.SyncRequest(files=manifest))
    assert (sorted(plan.upload), plan.delete, plan.conflicts) == (sorted(WORKSPACE), [], [])
    put_file = generated.module("api.projects.put_file")
    for path in plan.upload:
        stored = put_file.sync(
            project,
            path,
            client=client,
            body=types.File(payload=io.BytesIO(WORKSPACE[path])),
            if_none_match=models.PutFileIfNoneMatch("*"),
            base_version=plan.version,
        )
        assert (stored.path, stored.sha256, stored.changed) == (path, sha256(WORKSPACE[path]), True)
    again = sync_project.sync(project, client=client, body=models.SyncRequest(files=manifest))
    assert (again.upload, again.version) == ([], len(WORKSPACE))
    index_project = generated.module("api.projects.index_project")
    indexed = index_project.sync(project, client=client, body=models.IndexRequest())
    assert (indexed.files, indexed.indexed_version) == (len(WORKSPACE), len(WORKSPACE))
    stopped = generated.module("api.projects.stop_index_run").sync(project, client=client)
    assert (stopped.stopped, stopped.index_state, stopped.indexed_version) == (False, "ready", len(WORKSPACE))

    execute = generated.module("api.agent.execute_action")

    def run(tool_name: str, tool_args: dict[str, Any], approval_token: str | None = None) -> Any:
        body = models.ExecuteActionRequest(
            project_id=project,
            session_id="generated",
            tool_name=tool_name,
            tool_args=models.ExecuteActionRequestToolArgs.from_dict(tool_args),
        )
        if approval_token is not None:
            body.approval_token = approval_token
        answer = execute.sync(client=client, body=body)
        assert isinstance(answer, models.ExecuteActionResponse) and answer.is_error is False, answer
        return answer

    found = run("code_search", {"query": "shout text in upper case", "max_results": 1})
    assert "src/util/strings.py" in found.observation

    react_step = generated.module("api.agent.react_step")

    def step(history: list[Any]) -> Any:
        body = models.ReactStepRequest(
            project_id=project, session_id="generated", user_query=QUERY, conversation_history=history
        )
        return react_step.sync(client=client, body=body)

    proposed = step([])
    assert (proposed.status, proposed.action_details.tool_name) == ("action_proposed", "replace_in_file")
    assert (proposed.action_details.tool_args.to_dict(), proposed.action_details.requires_approval) == (
        EDIT,
        True,
    )
    edit = proposed.action_details.tool_args.to_dict()
    preview = run("replace_in_file", edit)
    diff = [line for line in preview.approval.diff.splitlines() if re.match(r"[-+] ", line)]
    assert diff == ["-    return text.upper()", "+    return text.upper() + '!'"]
    get_file = generated.module("api.projects.get_file")
    assert get_file.sync(project, edit["path"], client=client).payload.read() == WORKSPACE[edit["path"]]
    written = run("replace_in_file", edit, approval_token=preview.approval.token)
    assert written.observation.splitlines()[0] == "Wrote src/util/strings.py (+1 -1 lines)."
    done = models.CompletedStep(
        thought=proposed.thought, action_details=proposed.action_details, observation=written.observation
    )
    answered = step([done])
    assert (answered.status, answered.final_answer) == ("final_answer", "shout() now ends with '!'.")
    assert get_file.sync(project, edit["path"], client=client).payload.read() == EDITED
    assert answered.budget.priced is False and isinstance(answered.budget.tokens_left, int)
    spent = clients.AuthenticatedClient(base_url=server_url, token=SPENT_KEY, raise_on_unexpected_status=True)
    body = models.ReactStepRequest(project_id=project, session_id="generated", user_query=QUERY)
    refused = react_step.sync_detailed(client=spent, body=body)  # a declared answer, parsed
    assert (refused.status_code, refused.parsed.error.code) == (429, "budget_exhausted")
    assert int(refused.headers["retry-after"]) > 0
