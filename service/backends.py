"""The settings as the values the tools side takes: which object store, which vector store, where."""

from typing import Any

from reactstep.service.settings import Settings
from reactstep.tools.store import factory as store_factory
from reactstep.tools.store.factory import StoreConfig
from reactstep.tools.store.objects import ObjectStore
from reactstep.tools.store.s3_clients import S3Config, make_s3_client
from reactstep.tools.vector_store import backend_choice
from reactstep.tools.vector_store.backend_choice import VectorConfig
from reactstep.tools.vector_store.store import VectorStore


def s3_config(settings: Settings) -> S3Config:
    """The bucket and how to reach it (attempts per call: S3Config's own)."""
    return S3Config(
        bucket=settings.s3_bucket,
        prefix=settings.s3_prefix,
        endpoint_url=settings.s3_endpoint_url,
        region=settings.s3_region,
        access_key_id=settings.s3_access_key_id,
        secret_access_key=settings.s3_secret_access_key,
        timeout_s=settings.s3_timeout_s,
    )


def store_config(settings: Settings) -> StoreConfig:
    """The object store the settings name."""
    return StoreConfig(settings.storage_backend, settings.storage_root, s3_config(settings))


def vector_config(settings: Settings) -> VectorConfig:
    """The vector store the settings name (when to optimize: VectorConfig's own)."""
    return VectorConfig(
        settings.vector_backend,
        settings.vectors_root,
        settings.qdrant_url,
        settings.qdrant_api_key,
        settings.qdrant_timeout_s,
    )


def open_store(settings: Settings) -> ObjectStore:
    """The object store the settings name: "local" (the default) or "s3"."""
    return store_factory.open_store(store_config(settings))


def open_vector_store(settings: Settings) -> VectorStore:
    """The vector store the settings name: "embedded" (the default) or "qdrant"."""
    return backend_choice.open_vector_store(vector_config(settings))


def s3_client(settings: Settings) -> Any:
    """A boto3 client for the settings' bucket (the CLI and tests create buckets with it)."""
    return make_s3_client(s3_config(settings))
