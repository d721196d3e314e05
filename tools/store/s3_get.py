"""GetObject as one signed GET: the hot path of S3Store.get, made of botocore's own parts.

A read needs the body and nothing else, but botocore's get_object also validates its arguments,
resolves the endpoint through its rule set, emits a dozen events and parses every reply header into
typed values: ~0.45 ms of a 2.7 ms read against moto on loopback, on this 2-core VM, where moto's own
answer is ~2 ms (bench/read_file_latency.py measures the read end to end). ObjectReader sends the
request get_object sends on a custom endpoint (path style, the key percent-encoded as botocore
encodes it), signed by botocore's SigV4 signer for S3, over botocore's HTTP session (a urllib3 pool,
proxies from the environment, the CA bundle), so transport failures raise botocore's exceptions.

A 200 is the answer (the body and its ETag) and a 404 NoSuchKey the named miss. Every other reply
goes to the full client, which asks again and raises botocore's own error, worded and classified as
before. The direct GET is the first of the configured attempts: after a transport failure the full
client, built with one attempt fewer, makes the rest. Part of the S3 back-end; s3.py builds it.
"""

from typing import Any

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSPreparedRequest, AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import BotoCoreError, ClientError
from botocore.httpsession import URLLib3Session
from botocore.utils import get_environ_proxies, percent_encode

_NO_SUCH_KEY = b"<Code>NoSuchKey</Code>"


def _refusal(status: int, body: bytes) -> ClientError | None:
    """A reply other than a 200: a 404 NoSuchKey as botocore's named miss, else None (the full
    client asks again and names it)."""
    if status == 404 and _NO_SUCH_KEY in body:
        return ClientError(
            {"Error": {"Code": "NoSuchKey"}, "ResponseMetadata": {"HTTPStatusCode": 404}}, "GetObject"
        )
    return None


def open_http(endpoint_url: str, timeout_s: float, ca_bundle: str | None) -> URLLib3Session:
    """An HTTP session set as botocore sets its own for that endpoint (timeouts, proxies, CA bundle)."""
    return URLLib3Session(
        timeout=(timeout_s, timeout_s),
        proxies=get_environ_proxies(endpoint_url),
        verify=ca_bundle or True,
    )


class ObjectReader:
    """Reads objects of a path-style endpoint (R2, MinIO) in one GET each; see the module doc."""

    def __init__(
        self,
        endpoint_url: str,
        region: str,
        credentials: Credentials,
        http: URLLib3Session,
        full_client: Any,
        retry: bool,
    ) -> None:
        self._base = endpoint_url.rstrip("/")
        self._region = region
        self._credentials = credentials  # refreshable ones renew themselves when frozen
        self._http = http
        self._full_client = full_client  # a boto3 S3 client with the attempts the direct GET leaves
        self._retry = retry  # whether attempts are left after a failed direct GET

    def signed(self, bucket: str, key: str) -> AWSPreparedRequest:
        """The GET get_object sends for the key on this endpoint, signed."""
        request = AWSRequest(method="GET", url=f"{self._base}/{bucket}/{percent_encode(key, safe='/~')}")
        S3SigV4Auth(self._credentials.get_frozen_credentials(), "s3", self._region).add_auth(request)
        return request.prepare()

    def get(self, bucket: str, key: str) -> tuple[bytes, str]:
        """The object's bytes and ETag header; botocore's ClientError or BotoCoreError as get_object
        raises them."""
        try:
            reply = self._http.send(self.signed(bucket, key))
        except BotoCoreError as failure:
            return self._after(failure, bucket, key)
        if reply.status_code == 200:
            return bytes(reply.content), reply.headers.get("ETag", "")
        return self._after(_refusal(reply.status_code, reply.content), bucket, key)

    def _after(self, failure: BotoCoreError | ClientError | None, bucket: str, key: str) -> tuple[bytes, str]:
        """What follows a direct GET that gave no bytes: the named miss is raised, a transport
        failure raised when no attempts are left, anything else asked again by the full client."""
        if isinstance(failure, ClientError) or (failure is not None and not self._retry):
            raise failure
        return self._full_get(bucket, key)

    def _full_get(self, bucket: str, key: str) -> tuple[bytes, str]:
        reply = self._full_client.get_object(Bucket=bucket, Key=key)
        return bytes(reply["Body"].read()), reply.get("ETag", "")
