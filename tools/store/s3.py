"""The S3 / Cloudflare R2 back-end of the object store: the store, over the clients of s3_clients.py.

Reads (of project files and index files) on a custom endpoint go through s3_get.ObjectReader, one
signed GET each; everything else through the boto3 client. Every call runs on the caller's thread
(the service's worker threads).

Keys are "<prefix>/<project_id>/<path>"; index files are "<prefix>/.reactstep-index/<project_id>/<name>",
outside every project's keys, and the server's records "<prefix>/.reactstep-records/<name>". botocore
errors are translated by s3_errors.py and nowhere else: a missing key becomes a ToolError, anything
else a StoreUnavailable.
"""

import contextlib
import hashlib
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from reactstep.tools.errors import ToolError
from reactstep.tools.store.objects import (
    INDEX_DIR,
    RECORDS_DIR,
    ObjectInfo,
    check_index_name,
    check_project_id,
    directory_error,
)
from reactstep.tools.store.paths import ROOT, ProjectPath, named_file
from reactstep.tools.store.s3_clients import S3Config, s3_client, s3_session
from reactstep.tools.store.s3_errors import s3_errors, stale_on_conflict
from reactstep.tools.store.s3_get import ObjectReader, open_http


class S3Store:
    """Files as keys "<prefix>/<project_id>/<path>" in one S3 or R2 bucket."""

    local = False

    def __init__(self, bucket: str, prefix: str, client: Any, reader: ObjectReader | None = None) -> None:
        self._bucket = bucket
        self._prefix = prefix.strip("/")
        self._client = client  # a boto3 S3 client; thread-safe, so one per process
        self._reader = reader  # the reads' hot path (make_s3_store sets it for a custom endpoint)

    def get(self, project_id: str, path: ProjectPath) -> bytes:
        """The object's bytes."""
        key = self._key(project_id, path)
        if not path:
            raise directory_error(path)
        try:
            with s3_errors(path):
                return self._fetch(key)[0]
        except ToolError as exc:
            # S3 has no directories: a missing key with keys below it is one to the model.
            if self._has_children(key):
                raise directory_error(path) from exc
            raise

    def head(self, project_id: str, path: ProjectPath) -> ObjectInfo | None:
        """The object's metadata, or None."""
        key = self._key(project_id, path)
        if not path:
            return None
        try:
            with s3_errors(path):
                meta = self._client.head_object(Bucket=self._bucket, Key=key)
        except ToolError:
            return None
        modified = meta["LastModified"].timestamp()
        return ObjectInfo(path, int(meta["ContentLength"]), _etag(meta), modified)

    def put(self, project_id: str, path: ProjectPath, data: bytes) -> ObjectInfo:
        """Upload in one request; `modified` is the local clock, saving a HEAD."""
        clean = named_file(path)
        key = self._key(project_id, clean)
        with s3_errors(clean):
            reply = self._client.put_object(Bucket=self._bucket, Key=key, Body=data)
        etag = _etag(reply) or hashlib.md5(data).hexdigest()
        return ObjectInfo(clean, len(data), etag, time.time())

    def put_if(
        self, project_id: str, path: ProjectPath, data: bytes, expected_etag: str | None
    ) -> ObjectInfo:
        """Upload only while the ETag is `expected_etag` (None: only while absent), in one request.

        S3 and R2 evaluate If-Match / If-None-Match on PutObject atomically with the write, so there
        is no HEAD-then-PUT race. moto's server honours both headers (the tests run against it),
        though it checks and stores in two steps.
        """
        clean = named_file(path)
        key = self._key(project_id, clean)
        condition = {"IfNoneMatch": "*"} if expected_etag is None else {"IfMatch": f'"{expected_etag}"'}
        with s3_errors(clean), stale_on_conflict(clean):
            reply = self._client.put_object(Bucket=self._bucket, Key=key, Body=data, **condition)
        etag = _etag(reply) or hashlib.md5(data).hexdigest()
        return ObjectInfo(clean, len(data), etag, time.time())

    def delete(self, project_id: str, path: ProjectPath) -> None:
        """Remove the object; a missing key (or a bare prefix) is not an error."""
        clean = named_file(path)
        key = self._key(project_id, clean)
        with contextlib.suppress(ToolError), s3_errors(clean):
            self._client.delete_object(Bucket=self._bucket, Key=key)

    def list(self, project_id: str, prefix: ProjectPath = ROOT) -> Iterator[ObjectInfo]:
        """Every object below the directory `prefix`; all pages are read before returning."""
        root = self._key(project_id, "") + "/"
        found: list[ObjectInfo] = []
        with s3_errors(None):
            pages = self._client.get_paginator("list_objects_v2")
            for page in pages.paginate(Bucket=self._bucket, Prefix=f"{root}{prefix}/" if prefix else root):
                found.extend(_listed_info(item, root) for item in page.get("Contents", []))
        return iter(sorted(found, key=lambda info: info.path))

    def check(self) -> None:
        """HEAD the bucket: reachable, present and readable with these credentials."""
        with s3_errors(None):
            self._client.head_bucket(Bucket=self._bucket)

    def get_index_file(self, project_id: str, name: str) -> bytes | None:
        """The index file's bytes, or None when it was never written."""
        key = self._index_key(project_id, name)
        try:
            with s3_errors(name):
                return self._fetch(key)[0]
        except ToolError:
            return None

    def put_index_file(self, project_id: str, name: str, data: bytes) -> None:
        """Upload the index file in one request."""
        key = self._index_key(project_id, name)
        with s3_errors(name):
            self._client.put_object(Bucket=self._bucket, Key=key, Body=data)

    def get_index_file_tagged(self, project_id: str, name: str) -> tuple[bytes, str] | None:
        """The index file's bytes and ETag, or None when it was never written."""
        key = self._index_key(project_id, name)
        try:
            with s3_errors(name):
                return self._fetch(key)
        except ToolError:
            return None

    def put_index_file_if(self, project_id: str, name: str, data: bytes, expected_etag: str | None) -> str:
        """Upload the index file only while its ETag is `expected_etag` (None: while absent)."""
        key = self._index_key(project_id, name)
        condition = {"IfNoneMatch": "*"} if expected_etag is None else {"IfMatch": f'"{expected_etag}"'}
        with s3_errors(name), stale_on_conflict(name):
            reply = self._client.put_object(Bucket=self._bucket, Key=key, Body=data, **condition)
        return _etag(reply) or hashlib.md5(data).hexdigest()

    def delete_index_file(self, project_id: str, name: str) -> None:
        """Remove one index file; a missing one is fine (S3 answers 204 either way)."""
        key = self._index_key(project_id, name)
        with s3_errors(name):
            self._client.delete_object(Bucket=self._bucket, Key=key)

    def delete_project(self, project_id: str) -> None:
        """Delete every key of the project and of its index files, 1,000 per request."""
        roots = (
            self._key(project_id, "") + "/",
            self._index_key(project_id, "head.json")[: -len("head.json")],
        )
        with s3_errors(None):
            pages = self._client.get_paginator("list_objects_v2")
            for root in roots:
                for page in pages.paginate(Bucket=self._bucket, Prefix=root):
                    keys = [{"Key": item["Key"]} for item in page.get("Contents", [])]
                    if keys:
                        self._client.delete_objects(
                            Bucket=self._bucket, Delete={"Objects": keys, "Quiet": True}
                        )

    def get_record(self, name: str) -> tuple[bytes, str] | None:
        """The record's bytes and ETag, or None when there is none."""
        try:
            with s3_errors(name):
                return self._fetch(self._record_key(name))
        except ToolError:
            return None

    def put_record_if(self, name: str, data: bytes, expected_etag: str | None) -> str:
        """Upload the record only while its ETag is `expected_etag` (None: while absent)."""
        condition = {"IfNoneMatch": "*"} if expected_etag is None else {"IfMatch": f'"{expected_etag}"'}
        key = self._record_key(name)
        with s3_errors(name), stale_on_conflict(name):
            reply = self._client.put_object(Bucket=self._bucket, Key=key, Body=data, **condition)
        return _etag(reply) or hashlib.md5(data).hexdigest()

    def delete_record(self, name: str) -> None:
        """Remove one record; a missing one is fine."""
        with s3_errors(name):
            self._client.delete_object(Bucket=self._bucket, Key=self._record_key(name))

    def _record_key(self, name: str) -> str:
        check_index_name(name)
        return "/".join(part for part in (self._prefix, RECORDS_DIR, name) if part)

    def _fetch(self, key: str) -> tuple[bytes, str]:
        """The object's bytes and ETag (unquoted), by the direct GET where there is one."""
        if self._reader is not None:
            data, etag = self._reader.get(self._bucket, key)
            return data, etag.strip('"')
        reply = self._client.get_object(Bucket=self._bucket, Key=key)
        return bytes(reply["Body"].read()), _etag(reply)

    def _key(self, project_id: str, clean: str) -> str:
        """The object key of a normalized path (the project's root key when `clean` is '')."""
        check_project_id(project_id)
        return "/".join(part for part in (self._prefix, project_id, clean) if part)

    def _index_key(self, project_id: str, name: str) -> str:
        """The key of one of the project's index files, beside (not below) its own keys."""
        check_project_id(project_id)
        check_index_name(name)
        return "/".join(part for part in (self._prefix, INDEX_DIR, project_id, name) if part)

    def _has_children(self, key: str) -> bool:
        """Whether any object lives below `key`, as below a directory."""
        with s3_errors(None):
            reply = self._client.list_objects_v2(Bucket=self._bucket, Prefix=key + "/", MaxKeys=1)
        return int(reply.get("KeyCount", 0)) > 0


def _listed_info(item: dict[str, Any], root: str) -> ObjectInfo:
    """ObjectInfo from one list_objects_v2 entry, the project prefix stripped."""
    path = ProjectPath(str(item["Key"])[len(root) :])  # a key put under a project path
    return ObjectInfo(path, int(item["Size"]), _etag(item), item["LastModified"].timestamp())


def _etag(reply: dict[str, Any]) -> str:
    """The ETag without the quotes S3 wraps it in."""
    return str(reply.get("ETag", "")).strip('"')


def make_s3_store(config: S3Config) -> S3Store:
    """The store on the config's bucket; on a custom endpoint its reads take the direct GET."""
    session, ca_bundle = s3_session(config)
    client = s3_client(session, config)
    credentials = session.get_credentials()
    if config.endpoint_url is None or credentials is None:
        # AWS's own endpoints are virtual-hosted per region: botocore resolves them. No credentials:
        # botocore names the failure.
        return S3Store(config.bucket, config.prefix, client)
    # The direct GET is the first attempt; the full client makes the rest (and names other errors).
    full_client = s3_client(session, replace(config, max_attempts=max(1, config.max_attempts - 1)))
    http = open_http(config.endpoint_url, config.timeout_s, ca_bundle)
    reader = ObjectReader(
        config.endpoint_url, config.region, credentials, http, full_client, retry=config.max_attempts > 1
    )
    return S3Store(config.bucket, config.prefix, client, reader)
