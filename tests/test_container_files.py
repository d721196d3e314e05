"""The container files, checked without pulling an image (scripts/check-image runs the build steps):
the Dockerfile is slim, non-root, copies every package and runs scripts/image-setup; compose's service
settings are valid settings, and its endpoints name its own services."""

import re
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from reactstep.service.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
PLACEHOLDER = re.compile(r"\$\{(\w+)(?::?[-?])?([^}]*)\}")


def instructions(name: str) -> list[str]:
    """The arguments of every instruction of that name, continuation lines joined."""
    joined = DOCKERFILE.replace("\\\n", " ")
    return [line.split(None, 1)[1] for line in joined.splitlines() if line.startswith(f"{name} ")]


def test_the_image_is_slim_and_runs_as_a_user_of_its_own() -> None:
    assert instructions("FROM") == ["python:3.11-slim"]
    assert instructions("USER") == ["reactstep"]
    assert "useradd --system --uid 10001" in instructions("RUN")[0]


def test_the_image_copies_every_package_and_builds_with_image_setup() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    folders = set(pyproject["tool"]["setuptools"]["package-dir"].values())
    copied = {line.split()[0] for line in instructions("COPY")}
    assert folders <= copied
    assert "scripts/image-setup /opt/reactstep /data /src" in instructions("RUN")[0]
    assert instructions("CMD") == ['["/opt/reactstep/bin/reactstep", "serve"]']
    (health,) = instructions("HEALTHCHECK")
    assert "http://127.0.0.1:8000/healthz" in health


def test_the_image_settings_are_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    for line in instructions("ENV"):
        for name, value in re.findall(r"(\w+)=(\S+)", line):
            monkeypatch.setenv(name, value)
    settings = Settings()
    assert (settings.data_dir, settings.host, settings.port) == (Path("/data"), "0.0.0.0", 8000)


def service_settings(monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The reactstep service's environment in compose, each ${VAR:-default} at its default."""
    for name, value in COMPOSE["services"]["reactstep"]["environment"].items():
        assert name.startswith("REACTSTEP_")
        monkeypatch.setenv(name, PLACEHOLDER.sub(lambda found: found.group(2) or "x", str(value)))
    monkeypatch.setenv("REACTSTEP_API_KEYS", '["sha256:' + "0" * 64 + ':*"]')  # the .env file's job
    return Settings()


def test_compose_runs_the_service_on_its_qdrant_and_store(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = service_settings(monkeypatch)
    services = set(COMPOSE["services"])
    assert (settings.storage_backend, settings.vector_backend) == ("s3", "qdrant")
    assert urlsplit(settings.s3_endpoint_url or "").hostname in services
    assert urlsplit(settings.qdrant_url or "").hostname in services
    assert set(COMPOSE["services"]["reactstep"]["depends_on"]) <= services
    assert COMPOSE["services"]["reactstep"]["build"] == "."


def test_compose_requires_the_secrets_a_team_must_choose() -> None:
    environment = COMPOSE["services"]["reactstep"]["environment"]
    for name in ("REACTSTEP_API_KEYS", "REACTSTEP_APPROVAL_SECRET"):
        assert re.fullmatch(r"\$\{\w+:\?.+\}", environment[name]), name  # compose refuses to start without
