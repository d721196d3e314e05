"""botocore's failures as the store's errors: the one place the S3 back-end translates them.

Part of the S3 back-end (s3.py wraps every call in s3_errors, conditional writes in stale_on_conflict
too): a missing key becomes a ToolError the model can act on, a failed write condition a StaleFile,
anything else a StoreUnavailable that names the code and status only, never a message or endpoint.
"""

import contextlib
from collections.abc import Iterator

from botocore.exceptions import BotoCoreError, ClientError

from reactstep.tools.errors import StaleFile, StoreUnavailable, ToolError

_NOT_FOUND_CODES = frozenset({"NoSuchKey", "NotFound", "404"})
# A failed If-Match / If-None-Match: 412, or 409 when a concurrent conditional write won; If-Match on
# a key deleted since the preview answers NoSuchKey.
_CONDITION_FAILED_CODES = frozenset({"PreconditionFailed", "ConditionalRequestConflict", "NoSuchKey"})


@contextlib.contextmanager
def stale_on_conflict(path: str) -> Iterator[None]:
    """Translate a failed write condition into StaleFile; other errors pass on to s3_errors."""
    try:
        yield
    except ClientError as exc:
        code = str(exc.response.get("Error", {}).get("Code", ""))
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if code in _CONDITION_FAILED_CODES or status in (409, 412):
            raise StaleFile(path) from exc
        raise


@contextlib.contextmanager
def s3_errors(path: str | None) -> Iterator[None]:
    """Translate botocore failures in the block; `path` None means no key was named."""
    try:
        yield
    except ClientError as exc:
        code = str(exc.response.get("Error", {}).get("Code", "unknown"))[:64]
        if path is not None and code in _NOT_FOUND_CODES:
            raise ToolError(f"file not found: {path}") from exc
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", "?")
        # The code and status only: messages may echo request details such as the key id.
        raise StoreUnavailable(f"object store refused the request: {code} (HTTP {status})") from exc
    except BotoCoreError as exc:
        # The class name only: botocore messages carry the endpoint URL, userinfo and all.
        raise StoreUnavailable(f"object store unreachable: {type(exc).__name__}") from exc
