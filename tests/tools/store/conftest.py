"""Fixtures of the store tests."""

import uuid

import pytest

from reactstep.service.backends import s3_client
from tests.tools.store.test_storage import s3_settings


@pytest.fixture
def bucket(s3_server: str) -> str:
    """A fresh bucket on the moto server (test_storage.py has its own, made by its admin client)."""
    name = f"bucket-{uuid.uuid4().hex[:20]}"
    s3_client(s3_settings(s3_server, name)).create_bucket(Bucket=name)
    return name
