"""The Content-Digest request header (RFC 9530): what the client says it sent.

    Content-Digest: sha-256=:<base64 of the 32-byte digest>:, sha-512=:<base64>:

The header is a Structured Fields dictionary (RFC 8941). sha-256 and sha-512 are verified; members
naming other algorithms are ignored, as RFC 9530 lets a recipient do, so a header that names only
those stores the body unchecked. A header that is not such a dictionary, or a sha-256 / sha-512
value that is not a byte sequence of the algorithm's length, is 400 invalid_digest.
"""

import base64
import binascii
import re

from reactstep.service.errors import BadRequest

# The algorithms verified: RFC 9530 name -> (hashlib name, digest length in bytes).
ALGORITHMS = {"sha-256": ("sha256", 32), "sha-512": ("sha512", 64)}
_MEMBER = re.compile(r"[ \t]*([a-z*][a-z0-9_\-.*]*)(?:=([^,]*))?[ \t]*")
_BYTES = re.compile(r":([A-Za-z0-9+/]*={0,2}):(?:;.*)?")
# The headers parse_content_digest accepts, as openapi.yaml's pattern says them: members of the
# dictionary, a verified algorithm's value the base64 of its digest's length.
_ANY_MEMBER = (
    r"[ \t]*(?:(?!sha-(?:256|512)(?:[=, \t]|$))[a-z*][a-z0-9_\-.*]*(?:=[^,]*)?"
    r"|sha-256=[ \t]*:[A-Za-z0-9+/]{43}=:(?:;[^,]*)?"
    r"|sha-512=[ \t]*:[A-Za-z0-9+/]{86}==:(?:;[^,]*)?)[ \t]*"
)
CONTENT_DIGEST_PATTERN = rf"^(?:[ \t]*|{_ANY_MEMBER}(?:,{_ANY_MEMBER})*)$"


def parse_content_digest(header: str | None) -> tuple[tuple[str, bytes], ...]:
    """(hashlib name, digest) for each verified algorithm the header names; () without one."""
    if header is None or not header.strip():
        return ()
    found: dict[str, bytes] = {}
    for member in header.split(","):
        match = _MEMBER.fullmatch(member)
        if match is None:
            raise BadRequest(
                f"Content-Digest {header!r} is not a list of <algorithm>=:<base64>: (RFC 9530)",
                code="invalid_digest",
            )
        key, value = match.groups()
        if key in ALGORITHMS:
            name, size = ALGORITHMS[key]
            found[name] = _digest(key, (value or "").strip(), size)
    return tuple(sorted(found.items()))


def _digest(key: str, value: str, size: int) -> bytes:
    """The bytes of one `:<base64>:` value, of the algorithm's length."""
    match = _BYTES.fullmatch(value)
    try:
        digest = base64.b64decode(match.group(1), validate=True) if match is not None else b""
    except binascii.Error:
        digest = b""
    if len(digest) != size:
        raise BadRequest(
            f"Content-Digest {key} must be :<base64 of {size} bytes>: (RFC 9530), not {value!r}",
            code="invalid_digest",
        )
    return digest
