"""Who a local server of a package's world answers, and how much a request may carry.

Shared by every server synth runs over a package (``synth serve``, ``--mcp``, ``--openenv``): the
world has no authentication, so a server listens on a loopback address and answers only requests
whose ``Host`` names it and whose ``Origin``, if any, is its own (a web page in the user's browser
cannot reach it, directly or through DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from pipeline.core.errors import UserError

MAX_BODY = 1024 * 1024
"""Default cap on one request body (or one WebSocket message), in bytes."""
MAX_AUDIT = 32 * 1024 * 1024
"""Default cap on the bytes of arguments and replies an episode may take in between two resets."""


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    """True for an address that binds every interface (``0.0.0.0``, ``::``)."""
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def hostname(host: str) -> str | None:
    """The hostname of a ``Host`` header value (``name``, ``name:port``, ``[v6]:port``), lowercased;
    None when it does not parse."""
    try:
        parts = urlsplit("//" + host.strip())
        parts.port  # noqa: B018 (raises ValueError for a bad port)
    except ValueError:
        return None
    return parts.hostname


def origin_of(origin: str) -> tuple[str | None, int] | None:
    """The hostname and port of an ``http`` ``Origin`` header value (port 80 when none is given);
    None for any other scheme or a value that does not parse."""
    try:
        parts = urlsplit(origin)
        port = parts.port or 80
    except ValueError:
        return None
    return (parts.hostname, port) if parts.scheme == "http" else None


def listening_socket(host: str, port: int, backlog: int = 64) -> socket.socket:
    """A socket listening on ``host``:``port`` (0: any free port), for a server to serve on.
    ``UserError`` when it cannot be bound, saying to pass another ``--port``."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UserError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); pass another --port") from exc
    sock.listen(backlog)
    return sock


def base_url(sock: socket.socket) -> str:
    """``http://HOST:PORT`` of a listening socket (an IPv6 address in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"
