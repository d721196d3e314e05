"""Loopback servers that speak just enough HTTP to test an S3 client: one records each request and
answers it with fixed bytes, one closes every connection it accepts; and the SigV4 check an S3
server makes, written from AWS's published algorithm."""

import hashlib
import hmac
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Recorder(ThreadingHTTPServer):
    """Answers every GET with `body`; keeps each request's path and headers."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.seen: list[tuple[str, dict[str, str]]] = []
        super().__init__(("127.0.0.1", 0), RecordingHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class RecordingHandler(BaseHTTPRequestHandler):
    server: Recorder

    def do_GET(self) -> None:
        self.server.seen.append((self.path, {name.lower(): value for name, value in self.headers.items()}))
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.server.body)))
        self.end_headers()
        self.wfile.write(self.server.body)

    def log_message(self, *args: Any) -> None:
        pass


def sigv4_is_valid(path: str, headers: dict[str, str], secret: str, region: str) -> bool:
    """The SigV4 check an S3 server makes, written from AWS's published algorithm (GET, no query)."""
    fields = dict(part.strip().split("=", 1) for part in headers["authorization"].split(" ", 1)[1].split(","))
    access_key, date, scope_region, service, terminator = fields["Credential"].split("/")
    signed = fields["SignedHeaders"].split(";")
    canonical = "\n".join(
        [
            *("GET", path, ""),
            *(f"{name}:{headers[name].strip()}" for name in signed),
            *("", ";".join(signed), headers["x-amz-content-sha256"]),
        ]
    )
    scope = f"{date}/{region}/s3/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", headers["x-amz-date"], scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = f"AWS4{secret}".encode()
    for part in (date, region, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    expected = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    assert (scope_region, service, terminator, access_key) == (region, "s3", "aws4_request", "test")
    return hmac.compare_digest(expected, fields["Signature"])


class Slammer:
    """Accepts connections and closes them at once, counting them."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()
