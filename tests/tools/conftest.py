"""The object store the conditional-write, journal and lease tests run on: the local tree, and S3
(moto on loopback, a fresh bucket per test). Modules with a `store` fixture of their own override it."""

import uuid
from pathlib import Path
from typing import Any

import pytest

from reactstep.service.backends import open_store, s3_client
from reactstep.service.settings import Settings
from reactstep.tools.store.objects import ObjectStore
from tests.tools.store.test_conditional_write import s3_settings


@pytest.fixture(scope="module")
def s3_creator(s3_server: str) -> Any:
    """One client that makes the buckets, so each test builds only the client under test."""
    return s3_client(s3_settings(s3_server, "unused"))


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    """Each back-end as open_store builds it; S3 gets a fresh bucket on the moto server."""
    if request.param == "local":
        return open_store(Settings(storage_backend="local", data_dir=tmp_path))
    bucket = f"w-{uuid.uuid4().hex[:24]}"
    request.getfixturevalue("s3_creator").create_bucket(Bucket=bucket)
    return open_store(s3_settings(request.getfixturevalue("s3_server"), bucket))
