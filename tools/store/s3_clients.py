"""How the S3 back-end reaches its bucket: its settings, and the boto3 session and clients (the only
module that imports boto3; s3.py builds the store over them)."""

from dataclasses import dataclass
from typing import Any

import boto3
import botocore.session
from botocore.config import Config
from pydantic import SecretStr

from reactstep.tools.store.s3_dates import parse_timestamp


@dataclass(frozen=True)
class S3Config:
    """Where the bucket is and how to reach it: the values make_s3_client needs."""

    bucket: str = "reactstep"
    prefix: str = "projects"
    endpoint_url: str | None = None
    region: str = "auto"
    access_key_id: SecretStr | None = None
    secret_access_key: SecretStr | None = None
    timeout_s: float = 10.0
    max_attempts: int = 3  # botocore's standard mode: a blip is retried, a dead store fails in seconds


def _secret(value: SecretStr | None) -> str | None:
    """The plain secret, or None so boto3 falls back to its own credential chain."""
    return value.get_secret_value() if value is not None else None


def make_s3_client(config: S3Config) -> Any:
    """A boto3 S3 client with bounded timeouts and retries, as R2 and MinIO accept."""
    return s3_client(s3_session(config)[0], config)


def s3_session(config: S3Config) -> tuple[Any, str | None]:
    """A boto3 session with the config's credentials (or boto3's chain), and the CA bundle it names."""
    # A botocore session of its own, so the faster date parser reaches this store's clients only.
    core = botocore.session.get_session()
    core.get_component("response_parser_factory").set_parser_defaults(timestamp_parser=parse_timestamp)
    session = boto3.session.Session(
        aws_access_key_id=_secret(config.access_key_id),
        aws_secret_access_key=_secret(config.secret_access_key),
        botocore_session=core,
    )
    return session, core.get_config_variable("ca_bundle")


def s3_client(session: Any, config: S3Config) -> Any:
    """An S3 client of the session with the config's endpoint, timeouts and attempts."""
    client_config = Config(
        connect_timeout=config.timeout_s,
        read_timeout=config.timeout_s,
        # total_max_attempts counts the first try; botocore's max_attempts would count retries only.
        retries={"total_max_attempts": config.max_attempts, "mode": "standard"},
        signature_version="s3v4",
        # R2 rejects the CRC32 checksums botocore >= 1.36 sends by default.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
        # A custom endpoint (R2, MinIO) is one host; bucket subdomains may not resolve.
        s3={"addressing_style": "path"} if config.endpoint_url else None,
    )
    return session.client(
        "s3", endpoint_url=config.endpoint_url, region_name=config.region, config=client_config
    )
