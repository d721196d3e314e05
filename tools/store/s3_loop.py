"""S3 reads awaited on the event loop: s3_get's signed GET sent by aiohttp (the only module importing it).

A read_file on S3 mostly waits for the bucket. On a worker thread that wait also costs the hop there
and back and a thread per read in flight (~0.3 ms of a 3-4 ms read against moto on loopback, this
2-core VM; bench/read_file_latency.py). LoopReads sends the GET s3_get.ObjectReader sends, signed the
same way, from the event loop. A 200 gives the bytes. Anything else is handed on as the store the
rest of the call must use, whose reader knows that GET was made and what it gave (a transport failure,
the named miss, another reply): the attempts made and the errors raised are the ones ObjectReader
makes on its own.

The HTTP session belongs to one event loop: start() opens it on the serving loop (the app's
lifespan), stop() closes it; a call on any other loop (or before start) is handed on untouched.
"""

import asyncio
import ssl
from typing import Protocol
from urllib.parse import urlsplit

import aiohttp
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    HTTPClientError,
    ReadTimeoutError,
)
from botocore.httpsession import get_cert_path
from botocore.utils import get_environ_proxies
from yarl import URL

from reactstep.tools.store.objects import ObjectStore
from reactstep.tools.store.s3_get import ObjectReader, refusal


class ReadingStore(ObjectStore, Protocol):
    """What LoopReads asks of its store (s3.S3Store)."""

    @property
    def bucket(self) -> str: ...
    def file_key(self, project_id: str, path: str) -> str | None: ...
    def spent(self, key: str, failure: BotoCoreError | ClientError | None) -> ObjectStore: ...


class LoopReads:
    """One S3 store's file reads, awaited on the serving event loop; see the module doc."""

    def __init__(
        self,
        store: ReadingStore,
        reader: ObjectReader,
        endpoint_url: str,
        timeout_s: float,
        ca_bundle: str | None,
    ) -> None:
        self._store = store
        self._reader = reader
        self._timeout = aiohttp.ClientTimeout(total=None, sock_connect=timeout_s, sock_read=timeout_s)
        self._ca_bundle = ca_bundle
        # The proxy botocore's session uses for the endpoint, found once as botocore finds it (asking
        # aiohttp to look in the environment on every request costs ~0.2 ms each).
        self._proxy = get_environ_proxies(endpoint_url).get(urlsplit(endpoint_url).scheme)
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        """Open the HTTP session on the running loop (botocore's CA bundle, bodies as stored: no
        decompression, no redirects followed)."""
        tls = ssl.create_default_context(cafile=get_cert_path(self._ca_bundle or True))
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=tls),
            timeout=self._timeout,
            auto_decompress=False,
        )
        # aiohttp asks a GET again, unasked, when the server drops the connection; botocore's session
        # does not (a retry is an attempt of the configured ones): no public option turns it off.
        self._session._retry_connection = False
        self._loop = asyncio.get_running_loop()

    async def stop(self) -> None:
        """Close the session (its open connections with it)."""
        session, self._session, self._loop = self._session, None, None
        if session is not None:
            await session.close()

    async def get(self, project_id: str, path: str) -> bytes | ObjectStore:
        """The file's bytes, or the store the rest of the call must use (see the module doc)."""
        session = self._session
        key = self._store.file_key(project_id, path)
        if session is None or self._loop is not asyncio.get_running_loop() or key is None:
            return self._store
        request = self._reader.signed(self._store.bucket, key)
        try:
            async with session.get(
                URL(request.url, encoded=True),
                headers={**request.headers, "Accept-Encoding": "identity"},
                allow_redirects=False,
                proxy=self._proxy,
            ) as reply:
                body = await reply.read()
        except (TimeoutError, aiohttp.ClientError) as exc:
            return self._store.spent(key, transport_failure(exc, request.url))
        if reply.status == 200:
            return body
        return self._store.spent(key, refusal(reply.status, body))


def transport_failure(exc: Exception, url: str) -> BotoCoreError:
    """aiohttp's failure as the botocore exception urllib3's would have raised (s3_errors names the
    class, so the service's error reads the same on either path)."""
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return ConnectTimeoutError(endpoint_url=url, error=exc)
    if isinstance(exc, asyncio.TimeoutError):
        return ReadTimeoutError(endpoint_url=url, error=exc)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return EndpointConnectionError(endpoint_url=url, error=exc)
    if isinstance(exc, aiohttp.ClientConnectionError | aiohttp.ClientPayloadError):
        return ConnectionClosedError(endpoint_url=url, error=exc)
    return HTTPClientError(error=exc)
