"""Byte-exact names over HTTP, on the local store and on S3 (moto): a path is valid UTF-8 text in
NFC or it is refused naming it; two names one disk would merge never both exist; valid non-ASCII
names come back exactly as they were sent."""

import hashlib
import json
import unicodedata
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.service.backends import s3_client
from reactstep.service.http.app import create_app
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder

P = "/api/projects"
NFC = "docs/café.md"
NFD = unicodedata.normalize("NFD", NFC)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def url(path: str) -> str:
    """The URL of a file of project "n", its path percent-encoded from UTF-8."""
    return f"{P}/n/files/{quote(path, safe='/')}"


def error(response: Any) -> tuple[int, str, str]:
    body = response.json()["error"]
    return response.status_code, body["code"], body["message"]


@pytest.fixture(params=["local", "s3"])
def client(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    llm_server: ScriptedLLMServer,
    make_client: Callable[..., TestClient],
    local_embedder: LocalEmbedder,
) -> TestClient:
    """An app with project "n" on each back-end (S3: a fresh bucket on the moto server)."""
    if request.param == "local":
        built = make_client()
    else:
        endpoint = request.getfixturevalue("s3_server")
        bucket = f"names-{uuid.uuid4().hex[:12]}"
        settings = Settings(
            data_dir=tmp_path,
            llm_model="openai/scripted",
            llm_api_base=llm_server.base_url,
            storage_backend="s3",
            s3_endpoint_url=endpoint,
            s3_bucket=bucket,
            s3_region="us-east-1",
            s3_access_key_id="test",
            s3_secret_access_key="test",
        )
        s3_client(settings).create_bucket(Bucket=bucket)
        built = TestClient(create_app(settings, embedder=local_embedder), raise_server_exceptions=False)
    assert built.put(f"{P}/n").status_code == 201
    return built


def project(client: TestClient) -> tuple[int, int]:
    """The project's (files, version)."""
    body = client.get(f"{P}/n").json()
    return body["files"], body["version"]


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ("%FF%FE.py", r"b'\xff\xfe.py'"),
        ("%FE%FF.py", r"b'\xfe\xff.py'"),
        ("src/%C3.py", r"b'src/\xc3.py'"),  # a UTF-8 sequence cut short
        ("%ED%B3%BF.py", r"b'\xed\xb3\xbf.py'"),  # the UTF-8 form of a surrogate: not text either
    ],
)
@pytest.mark.parametrize("method", ["PUT", "GET", "DELETE"])
def test_a_url_path_that_is_not_utf8_is_refused_naming_its_bytes(
    client: TestClient, method: str, raw: str, named: str
) -> None:
    response = client.request(method, f"{P}/n/files/{raw}", content=b"data" if method == "PUT" else None)
    assert error(response) == (
        422,
        "invalid_path",
        f"path {named} is not valid UTF-8 text; name files in UTF-8",
    )
    assert project(client) == (0, 0)


def test_two_non_utf8_names_never_land_on_one_file(client: TestClient) -> None:
    first = client.put(f"{P}/n/files/%FF%FE.py", content=b"first")
    second = client.put(f"{P}/n/files/%FE%FF.py", content=b"second")
    assert [first.status_code, second.status_code] == [422, 422]
    assert client.get(url("\ufffd\ufffd.py")).status_code == 404
    assert project(client) == (0, 0)


@pytest.mark.parametrize("method", ["PUT", "GET", "DELETE"])
def test_a_url_path_not_in_nfc_is_refused_with_the_nfc_form(client: TestClient, method: str) -> None:
    assert client.put(url(NFC), content=b"# cafe\n").status_code == 200
    response = client.request(method, url(NFD), content=b"other" if method == "PUT" else None)
    assert error(response) == (
        422,
        "invalid_path",
        f"path {NFD!a} is not in Unicode NFC form; send the NFC form {NFC!r}",
    )
    assert client.get(url(NFC)).content == b"# cafe\n"
    assert project(client) == (1, 1)


@pytest.mark.parametrize(
    ("existing", "new"),
    [
        ("README.md", "readme.md"),
        ("src/App.py", "src/app.py"),
        ("Docs/guide.md", "docs/guide.md"),
        ("straße.py", "STRASSE.py"),  # full case folding: one name to a case-insensitive comparison
    ],
)
def test_a_new_case_twin_of_an_existing_path_is_refused_naming_it(
    client: TestClient, existing: str, new: str
) -> None:
    assert client.put(url(existing), content=b"one\n").status_code == 200
    response = client.put(url(new), content=b"two\n")
    status, code, message = error(response)
    assert (status, code) == (409, "name_collision")
    assert message.startswith(f"{new!r} differs from the existing {existing!r} only by case")
    again = client.put(url(existing), content=b"one, edited\n")  # the existing path itself: fine
    assert again.status_code == 200
    assert client.get(url(existing)).content == b"one, edited\n"
    assert client.get(url(new)).status_code == 404
    assert project(client) == (1, 2)


def test_a_twin_is_accepted_once_the_other_is_deleted(client: TestClient) -> None:
    client.put(url("README.md"), content=b"old\n")
    assert client.delete(url("README.md")).status_code == 200
    assert client.put(url("readme.md"), content=b"renamed\n").status_code == 200


HASH = sha(b"x")


def manifest_body(name: str) -> bytes:
    """A sync body whose manifest holds ok.py and then `name`, written into the JSON as given."""
    return b'{"files": {"ok.py": "%s", "%s": "%s"}}' % (HASH.encode(), name.encode("latin-1"), HASH.encode())


@pytest.mark.parametrize(
    ("name", "status", "code", "message"),
    [
        (  # raw bytes FF FE in the JSON body
            "\xff\xfe.py",
            422,
            "invalid_path",
            r"files: path b'\xff\xfe.py' is not valid UTF-8 text; name files in UTF-8",
        ),
        (  # a JSON escape that is no character: how a Python client sends the byte FF of a disk name
            r"\udcff.py",
            422,
            "invalid_path",
            r"files: path b'\xff.py' is not valid UTF-8 text; name files in UTF-8",
        ),
        (
            r"\ud800.py",
            422,
            "invalid_path",
            r"files: path b'\xed\xa0\x80.py' is not valid UTF-8 text; name files in UTF-8",
        ),
        (
            r"docs/cafe\u0301.md",
            422,
            "invalid_path",
            r"path 'docs/cafe\u0301.md' is not in Unicode NFC form; send the NFC form 'docs/café.md'",
        ),
        (
            "OK.py",
            409,
            "name_collision",
            "the manifest names 'ok.py' and 'OK.py', which differ only by case or Unicode "
            "normalisation (one file on a case-insensitive disk); rename one of them",
        ),
    ],
)
def test_a_manifest_with_one_bad_name_answers_which_one(
    client: TestClient, name: str, status: int, code: str, message: str
) -> None:
    client.put(url("keep.py"), content=b"x")
    body = manifest_body(name)
    response = client.post(
        f"{P}/n/sync",
        content=body[:-1] + b', "apply_deletes": true}',
        headers={"content-type": "application/json"},
    )
    assert error(response) == (status, code, message)
    assert client.get(url("keep.py")).content == b"x"  # nothing deleted
    assert project(client) == (1, 1)


def test_text_that_is_not_utf8_elsewhere_in_a_body_is_named_too(client: TestClient) -> None:
    response = client.post(
        f"{P}/n/sync",
        content=b'{"files": {}, "embedding_model_config": {"model": "\xff"}}',
        headers={"content-type": "application/json"},
    )
    assert error(response) == (
        400,
        "invalid_json",
        r"the request body holds text that is not valid UTF-8 at embedding_model_config.model: b'\xff'",
    )


VALID = ["docs/café.md", "日本.py", "emoji/🙂 notes.txt", "100%.md", "a+b/c d.py", "Ünïcödé/ñ.rs"]


def test_valid_non_ascii_names_are_stored_and_read_back_byte_exact(client: TestClient) -> None:
    contents = {path: f"# {path}\n".encode() for path in VALID}
    for path, data in contents.items():
        stored = client.put(url(path), content=data)
        assert (stored.status_code, stored.json()["path"]) == (200, path)
    for path, data in contents.items():
        assert client.get(url(path)).content == data
    plan = client.post(f"{P}/n/sync", json={"files": {path: sha(data) for path, data in contents.items()}})
    assert plan.status_code == 200, plan.text
    assert (plan.json()["upload"], plan.json()["delete"], plan.json()["conflicts"]) == ([], [], [])
    changes = client.get(f"{P}/n/changes").json()["changes"]
    assert [change["path"] for change in changes] == VALID
    # The names go out as they came in: the same UTF-8 bytes, escaped or not.
    raw = client.get(f"{P}/n/changes").content
    assert [change["path"] for change in json.loads(raw)["changes"]] == VALID
    assert client.delete(url("日本.py")).status_code == 200
    assert project(client) == (len(VALID) - 1, len(VALID) + 1)


def test_tool_args_follow_the_same_rule(client: TestClient) -> None:
    client.put(url(NFC), content=b"# cafe\n")
    read = client.post(
        "/api/agent/execute_action",
        json={
            "project_id": "n",
            "session_id": "s",
            "tool_name": "read_file",
            "tool_args": {"file_path": NFD},
        },
    )
    assert read.status_code == 200
    assert read.json()["is_error"] is True
    assert f"send the NFC form {NFC!r}" in read.json()["observation"]
    lone = client.post(
        "/api/agent/execute_action",
        content=b'{"project_id": "n", "session_id": "s", "tool_name": "read_file", '
        b'"tool_args": {"file_path": "\\udcff.py"}}',
        headers={"content-type": "application/json"},
    )
    assert error(lone) == (
        400,
        "invalid_json",
        r"the request body holds text that is not valid UTF-8 at tool_args.file_path: b'\xff.py'",
    )


def test_whitespace_around_a_name_is_part_of_it(client: TestClient) -> None:
    names = ["a.py", " a.py", "a.py "]
    for number, path in enumerate(names):
        assert client.put(url(path), content=b"%d" % number).json()["path"] == path
    assert [client.get(url(path)).content for path in names] == [b"0", b"1", b"2"]
    assert project(client) == (3, 3)


def test_a_tool_cannot_create_a_twin_either(client: TestClient) -> None:
    client.put(url("README.md"), content=b"# readme\n")
    created = client.post(
        "/api/agent/execute_action",
        json={
            "project_id": "n",
            "session_id": "s",
            "tool_name": "create_file",
            "tool_args": {"path": "readme.md", "content": "# other\n"},
        },
    )
    assert created.json()["is_error"] is True
    assert created.json()["observation"].endswith(
        "readme.md differs from the existing README.md only by case or Unicode normalisation, "
        "so nothing was written; change README.md instead"
    )
    assert project(client) == (1, 1)
