"""One package's mock world over HTTP, in the Claw-Eval route convention.

Every route is ``POST`` with a JSON object body (the arguments) and a JSON object response:

- ``/<service>/<resource>[/<action>]``: every operation of the package's services. The response is
  the result body with the world's HTTP status. An endpoint that a package tool is bound to runs as
  that tool (``World.call``: the audit names the tool and the package's faults apply); any other
  runs unbound (``World.call_endpoint``).
- ``/<service>/audit``: ``{"calls": [...]}``, the audit entries of that service's endpoints.
- ``/<service>/reset``: the whole world back to its initial state (every service, the audit log
  and the fault counters), ``{"status": "reset"}``.

An unknown route gets 404 listing the valid routes; a body that is not a JSON object gets 400;
any other method gets 405. The server listens on a loopback address unless told otherwise.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from pipeline.core.errors import UserError
from pipeline.core.package import TaskPackage
from pipeline.core.services import get_service
from pipeline.core.trajectory import trajectory_data
from pipeline.core.world import World

AUDIT, RESET = "audit", "reset"


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def operation_routes(package: TaskPackage) -> dict[str, str | None]:
    """Every endpoint of the package's services → the name of the first tool bound to it, or None."""
    bound: dict[str, str] = {}
    for tool in package.tools:
        bound.setdefault(tool.endpoint, tool.name)
    routes: dict[str, str | None] = {}
    for name in package.services:
        spec = get_service(name)
        for endpoint in spec.endpoints if spec else []:
            routes[endpoint] = bound.get(endpoint)
    return routes


class PackageServer(ThreadingHTTPServer):
    """A threading HTTP server holding one package's ``World``; calls into it are serialised."""

    daemon_threads = True

    def __init__(self, package: TaskPackage, host: str = "127.0.0.1", port: int = 0,
                 allow_remote: bool = False, log_requests: bool = False) -> None:
        if not (allow_remote or is_loopback(host)):
            raise UserError(f"host {host!r} is not a loopback address; the mock world has no authentication, "
                            "so pass --allow-remote to serve it on the network anyway")
        self.package = package
        self.world = World.from_package(package)
        self.lock = threading.Lock()
        self.operations = operation_routes(package)
        services = [s for s in package.services if get_service(s) is not None]
        # every valid route: the operations, then each service's audit and reset routes
        self.routes = [*self.operations, *(f"/{s}/{action}" for s in services for action in (AUDIT, RESET))]
        self.log_requests = log_requests
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        super().__init__((host, port), _Handler)

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        shown = f"[{host}]" if ":" in str(host) else host
        return f"http://{shown}:{port}"

    def respond(self, path: str, args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Status and body for a POST of ``args`` to ``path`` (a known route)."""
        with self.lock:
            if path in self.operations:
                tool = self.operations[path]
                result = self.world.call(tool, args) if tool else self.world.call_endpoint(path, args)
                return result.status, result.body
            service, action = path.strip("/").split("/")
            if action == AUDIT:
                calls = [trajectory_data(e) for e in self.world.audit
                         if e.endpoint.startswith(f"/{service}/")]
                return 200, {"calls": calls}
            self.world.reset()
            return 200, {"status": RESET}


def _error(status: int, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"status": status, "message": message, **extra}}


class _Handler(BaseHTTPRequestHandler):
    server: PackageServer
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        path = urlsplit(self.path).path.rstrip("/") or "/"
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if path not in self.server.routes:
            self._send(404, _error(404, f"unknown route {path!r}", valid_endpoints=self.server.routes))
            return
        try:
            args = json.loads(raw.decode("utf-8")) if raw.strip() else {}
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self._send(400, _error(400, f"body is not valid JSON: {exc}"))
            return
        if not isinstance(args, dict):
            self._send(400, _error(400, f"body must be a JSON object of arguments, got {type(args).__name__}"))
            return
        self._send(*self.server.respond(path, args))

    def _method_not_allowed(self) -> None:
        self._send(405, _error(405, f"method {self.command} not allowed; every route takes POST with a JSON body",
                               valid_endpoints=self.server.routes))

    do_GET = do_PUT = do_DELETE = do_PATCH = _method_not_allowed

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.log_requests:
            super().log_message(format, *args)
