"""Where a request may make the server connect: checked before any connection is opened.

api_base (llm_config, embedding_model_config) against REACTSTEP_LLM_API_BASE_ALLOWLIST:
    url      http or https, a host, no userinfo, query, fragment, backslash or control character
    entry    scheme://host[:port]   host: a name, an IP literal, *.example.com, or * (any host);
                                    port: a number, * (any), or the scheme's default when left out;
                                    a path after it is ignored
    match    an entry with the same scheme, a host it covers and a port it covers
    address  an entry that names the host exactly is the operator's word for it; a host matched
             only by a wildcard must resolve to public addresses only: private, loopback,
             link-local (cloud metadata), shared, reserved, unspecified and multicast are refused
model (llm_config.model, embedding_model_config.model) against REACTSTEP_LLM_ALLOWED_PROVIDERS:
    the litellm provider it routes to must be listed; with a request's api_base it must be
    `openai` (OpenAI-compatible), the one path whose HTTP client the gateway builds without redirects
A name resolved here may resolve differently when litellm connects (DNS rebinding); wildcard
entries should only cover domains the operator trusts to answer DNS honestly.
"""

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from reactstep.service.errors import Forbidden
from reactstep.service.llm.gateway import provider_of

DEFAULT_PORTS = {"http": 80, "https": 443}
OPENAI_COMPATIBLE = "openai"
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Origin:
    """Scheme, lower-case host and port of a URL."""

    scheme: str
    host: str
    port: int


@dataclass(frozen=True)
class AllowEntry:
    """One allowlist entry; host may be '*' or '*.suffix', port None for any."""

    scheme: str
    host: str
    port: int | None

    @property
    def names_host(self) -> bool:
        """Whether the entry names one host exactly (no wildcard)."""
        return not self.host.startswith("*")

    def covers(self, origin: Origin) -> bool:
        """Whether the origin's scheme, host and port are all covered."""
        if origin.scheme != self.scheme or (self.port is not None and origin.port != self.port):
            return False
        if self.host == "*":
            return True
        if self.host.startswith("*."):
            return origin.host.endswith(self.host[1:])
        return origin.host == self.host


def check_api_base(url: str, allowlist: list[str], field: str = "llm_config.api_base") -> None:
    """Refuse an api_base the allowlist does not cover, or a wildcard match on a private address."""
    origin = parse_origin(url)
    entries = [entry for raw in allowlist if (entry := parse_entry(raw)) is not None]
    covering = [entry for entry in entries if origin is not None and entry.covers(origin)]
    if origin is None or not covering:
        raise Forbidden(
            f"{field} is not on this server's allowlist (REACTSTEP_LLM_API_BASE_ALLOWLIST)",
            code="api_base_not_allowed",
        )
    if any(entry.names_host for entry in covering):
        return
    for address in resolve(origin.host, origin.port, field):
        if not is_public_address(address):
            raise Forbidden(
                f"{field} resolves to a non-public address ({address}); "
                "only an allowlist entry naming the host exactly allows that",
                code="api_base_not_allowed",
            )


def check_model(model: str, allowed: list[str], field: str, with_api_base: bool) -> None:
    """Refuse a model whose litellm provider is not allowed (or not OpenAI-compatible with an api_base)."""
    check_provider(provider_of(model), allowed, field, with_api_base)


def check_provider(provider: str | None, allowed: list[str], field: str, with_api_base: bool) -> None:
    """check_model for a model whose provider is already known (None: litellm cannot route it)."""
    if provider is None or provider not in allowed:
        raise Forbidden(
            f"{field} names provider {provider or 'unknown'!r}, which this server does not allow "
            "(REACTSTEP_LLM_ALLOWED_PROVIDERS)",
            code="provider_not_allowed",
        )
    if with_api_base and provider != OPENAI_COMPATIBLE:
        raise Forbidden(
            f"{field} must be an OpenAI-compatible model ('openai/<name>') when the request sets api_base",
            code="provider_not_allowed",
        )


def parse_origin(url: str) -> Origin | None:
    """The URL's origin, or None if it is not a plain http(s) URL without userinfo."""
    if any(char.isspace() or ord(char) < 32 or char == "\\" for char in url):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname or "@" in parts.netloc:
        return None
    if parts.query or parts.fragment:
        return None
    return Origin(parts.scheme, parts.hostname.lower().rstrip("."), port or DEFAULT_PORTS[parts.scheme])


def parse_entry(entry: str) -> AllowEntry | None:
    """An allowlist entry, or None if it is malformed (and so allows nothing)."""
    scheme, separator, rest = entry.strip().lower().partition("://")
    authority = rest.split("/", 1)[0]  # a path after the origin is ignored, as in an api_base
    if not separator or scheme not in DEFAULT_PORTS or not authority or "@" in authority:
        return None
    host, port_text = _split_port(authority)
    if not host:
        return None
    if port_text is None:
        return AllowEntry(scheme, host, DEFAULT_PORTS[scheme])
    if port_text == "*":
        return AllowEntry(scheme, host, None)
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None
    return AllowEntry(scheme, host, int(port_text))


def resolve(host: str, port: int, field: str) -> list[Address]:
    """Every address the host resolves to; an IP literal is itself, without a lookup."""
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise Forbidden(f"{field} names a host that does not resolve", code="api_base_not_allowed") from exc
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]


def is_public_address(address: Address) -> bool:
    """Whether the address is globally routable unicast (IPv4-mapped IPv6 judged as IPv4)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


def _split_port(rest: str) -> tuple[str, str | None]:
    """'host:port' -> (host, port); '[::1]:80' keeps its brackets off; no port -> None."""
    if rest.startswith("["):
        host, _, tail = rest[1:].partition("]")
        return host, tail[1:] if tail.startswith(":") else None
    host, separator, port = rest.rpartition(":")
    return (host, port) if separator else (rest, None)


def is_loopback_url(url: str) -> bool:
    """Whether the URL names this machine: localhost or a loopback address (no name is resolved)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
