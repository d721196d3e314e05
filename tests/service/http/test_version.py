"""What the server says it is: /version, `reactstep --version` and the contract agree."""

from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml
from starlette.testclient import TestClient

from reactstep.client.cli.main import main
from reactstep.service.version import _checkout_head, commit

SPEC = yaml.safe_load((Path(__file__).resolve().parents[3] / "openapi.yaml").read_text())
SHA = "0123456789abcdef0123456789abcdef01234567"


def test_the_version_route_names_package_api_commit_and_model(make_client: Callable[..., TestClient]) -> None:
    answer = make_client().get("/version").json()
    assert answer == {
        "version": version("reactstep"),
        "commit": commit(),
        "api_version": SPEC["info"]["version"],
        "embedding_model": "local/all-MiniLM-L6-v2-code-int8",
    }
    assert answer["version"] == answer["api_version"]  # one release, one contract version


def test_the_cli_prints_the_same(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    built = commit()
    expected = f"reactstep {version('reactstep')} (API {SPEC['info']['version']}"
    expected += f", commit {built[:12]})" if built else ")"
    assert capsys.readouterr().out.strip() == expected


@pytest.mark.parametrize(
    ("files", "found"),
    [
        ({"HEAD": f"{SHA}\n"}, SHA),
        ({"HEAD": "ref: refs/heads/main\n", "refs/heads/main": f"{SHA}\n"}, SHA),
        ({"HEAD": "ref: refs/heads/main\n", "packed-refs": f"# pack-refs\n{SHA} refs/heads/main\n"}, SHA),
        ({"HEAD": "ref: refs/heads/main\n"}, None),
        ({"HEAD": "ref: refs/heads/main\n", "refs/heads/main": "not a commit\n"}, None),
        ({}, None),
    ],
)
def test_the_commit_is_read_from_the_checkout(
    tmp_path: Path, files: dict[str, str], found: str | None
) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert _checkout_head(tmp_path) == found
