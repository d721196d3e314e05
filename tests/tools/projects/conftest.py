"""The store every project test runs on: the local tree, and S3 (moto on loopback, a fresh bucket)."""

import uuid
from pathlib import Path
from typing import Any

import pytest

from reactstep.service.backends import open_store
from reactstep.service.settings import Settings
from reactstep.tools.store.objects import ObjectStore
from tests.tools.store.test_conditional_write import s3_settings


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    if request.param == "local":
        return open_store(Settings(storage_backend="local", data_dir=tmp_path))
    bucket = f"j-{uuid.uuid4().hex[:24]}"
    request.getfixturevalue("s3_creator").create_bucket(Bucket=bucket)
    return open_store(s3_settings(request.getfixturevalue("s3_server"), bucket))


@pytest.fixture(scope="module")
def s3_creator(s3_server: str) -> Any:
    from reactstep.service.backends import s3_client

    return s3_client(s3_settings(s3_server, "unused"))
