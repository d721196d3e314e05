"""The client distribution's build backend: setuptools' own, run on a copy of the source, so that
`pip install ./client` leaves nothing in the checkout (setuptools writes build/ and an egg-info beside
the code it builds, and `reactstep index client` would upload them).

    pip ─► a hook below, in client/ ─► client/ and ../contract (reactstep.contract's folder, which the
        client's pyproject maps) copied side by side into a temporary folder ─► setuptools' hook there
        ─► the wheel, the sdist or the metadata, written where pip asked ─► the copy removed

An editable install builds in place: it points at this folder's code.
"""

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from setuptools import build_meta
from setuptools.build_meta import (
    build_editable,
    get_requires_for_build_editable,
    prepare_metadata_for_build_editable,
)

__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
]

SIBLINGS = ("contract",)  # folders beside client/ that its pyproject's package-dir names
LEFT_OUT = shutil.ignore_patterns("__pycache__", "build", "*.egg-info", ".reactstep")
Settings = dict[str, Any] | None


def get_requires_for_build_wheel(config_settings: Settings = None) -> list[str]:
    with _in_a_copy():
        return list(build_meta.get_requires_for_build_wheel(config_settings))


def get_requires_for_build_sdist(config_settings: Settings = None) -> list[str]:
    with _in_a_copy():
        return list(build_meta.get_requires_for_build_sdist(config_settings))


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Settings = None) -> str:
    with _in_a_copy():
        return str(
            build_meta.prepare_metadata_for_build_wheel(_absolute(metadata_directory), config_settings)
        )


def build_wheel(
    wheel_directory: str, config_settings: Settings = None, metadata_directory: str | None = None
) -> str:
    with _in_a_copy():
        return str(build_meta.build_wheel(_absolute(wheel_directory), config_settings, metadata_directory))


def build_sdist(sdist_directory: str, config_settings: Settings = None) -> str:
    with _in_a_copy():
        return str(build_meta.build_sdist(_absolute(sdist_directory), config_settings))


def _absolute(directory: str) -> str:
    return str(Path(directory).resolve())


@contextmanager
def _in_a_copy() -> Iterator[None]:
    """The block runs in a copy of this folder (and its siblings), removed after."""
    source = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="reactstep-client-build-") as scratch:
        shutil.copytree(source, Path(scratch) / source.name, ignore=LEFT_OUT)
        for name in SIBLINGS:
            if (source.parent / name).is_dir():
                shutil.copytree(source.parent / name, Path(scratch) / name, ignore=LEFT_OUT)
        os.chdir(Path(scratch) / source.name)
        try:
            yield
        finally:
            os.chdir(source)
