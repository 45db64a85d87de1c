"""The audit page's server (``synth audit``): the queue and one package per screen, rendered
from the catalog, and the label API the page's keys post to. Starlette on uvicorn, on loopback.

Who may use it: the person holding the token the URL carries (``?token=``, exchanged on the
first visit for an HttpOnly, SameSite=Strict cookie, then dropped from the address). Every
request is checked, in this order: its ``Host`` must name this server (``127.0.0.1:PORT`` or
``localhost:PORT``; anything else is 403: a DNS-rebinding page cannot reach it), an ``Origin``,
when sent, must be this server's (403 otherwise: no other site can post labels), the token must
be given (401) and right (403), and a body may hold at most ``MAX_BODY`` bytes (413). Pages are
sent with a Content-Security-Policy that runs only the page's own inline script and style (a
nonce per response), loads nothing from elsewhere, and is never framed.

Labels: ``POST /api/labels`` with ``{"row", "label", "code", "comment", "annotator"}`` opens the
catalog for writing, appends the label (``Catalog.add_label``) and closes it: committed before
the answer (201 with the stored label). When another process holds the writer lock (a run), the
answer is 503 with the reason, and the page keeps the label in the browser and sends it again
until it is stored; a label the catalog refuses (unknown row, code...) is 400 with the reason.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode

import anyio
import uvicorn
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from pipeline.catalog.audit import DEFAULT_REFUSALS, DEFAULT_SAMPLE, AuditLabel, AuditQueue
from pipeline.catalog.errors import CatalogBusy, CatalogError
from pipeline.catalog.store import Catalog
from pipeline.core.codes import DESCRIPTIONS, Code
from pipeline.core.errors import first_validation_error
from pipeline.core.strict_model import StrictModel
from pipeline.interop.audit_view import package_view
from pipeline.interop.html_pages import html_environment

MAX_BODY = 16 * 1024
"""Bytes a request body may hold (a label is a few hundred)."""
WRITE_WAIT_S = 2.0
"""Seconds a label waits for another process's DuckDB lock before the answer is 503."""
READ_WAIT_S = 10.0
"""Seconds a page waits for another process's DuckDB lock before the answer is 503."""
HOST = "127.0.0.1"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class AuditOptions(StrictModel):
    """What ``synth audit`` serves: the catalog, the rows (``run``, ``where``), the sampling plan
    (``sample``, ``refusals``, ``seed``) and the annotator's name the page starts with."""

    catalog: Path
    run: int | None = None
    where: str | None = None
    sample: int = DEFAULT_SAMPLE
    refusals: int = DEFAULT_REFUSALS
    seed: int = 0
    annotator: str | None = None

    def rows(self) -> str | None:
        """The one ``--where`` of the rows: ``run`` and ``where`` together."""
        parts = ([f"run = {int(self.run)}"] if self.run is not None else []) + ([f"({self.where})"] if self.where else [])
        return " AND ".join(parts) or None


# --------------------------------------------------------------------------- the guard


class Guard:
    """ASGI middleware: the checks of the module docstring, before any route runs."""

    def __init__(self, app: ASGIApp, port: int, token: str, cookie: str) -> None:
        self.app = app
        self.token = token
        self.cookie = cookie
        self.hosts = {f"{HOST}:{port}", f"localhost:{port}"}
        self.origins = {f"http://{h}" for h in self.hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self.refusal(scope, headers)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if "token" in query and scope["method"] in ("GET", "HEAD"):  # swap the URL's token for the cookie
            rest = urlencode({k: v for k, v in query.items() if k != "token"})
            response = Response(status_code=303, headers={"Location": scope["path"] + (f"?{rest}" if rest else ""),
                                                          "Cache-Control": "no-store"})
            response.set_cookie(self.cookie, self.token, httponly=True, samesite="strict", path="/")
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope, headers: dict[str, str]) -> Response | None:
        """The answer that refuses this request, or None when it may go on."""
        if headers.get("host") not in self.hosts:
            return PlainTextResponse("refused: this server answers only to 127.0.0.1 or localhost with its port",
                                     status_code=403)
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            return PlainTextResponse("refused: a request from another origin", status_code=403)
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        given = query.get("token") or _cookie(headers.get("cookie", ""), self.cookie)
        if not given:
            return PlainTextResponse("this page needs its token: open the URL `synth audit` printed", status_code=401)
        if not secrets.compare_digest(given.encode(), self.token.encode()):
            return PlainTextResponse("wrong token: open the URL `synth audit` printed", status_code=403)
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            return PlainTextResponse(f"a request body may hold at most {MAX_BODY} bytes", status_code=413)
        return None


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return unquote(value)
    return None


class BodyTooLarge(Exception):
    pass


async def bounded_body(request: Request, limit: int = MAX_BODY) -> bytes:
    """The request's body, read in chunks; ``BodyTooLarge`` past ``limit`` bytes (a body sent
    without a length, or longer than it said, is cut off there too)."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyTooLarge
    return bytes(body)


# --------------------------------------------------------------------------- the site


class AuditSite:
    """The pages and the label API over one catalog. The queue is drawn once, when the site
    starts (the plan is fixed by its seed); labels and figures are read at every page."""

    def __init__(self, options: AuditOptions, port: int, token: str | None = None) -> None:
        self.options = options
        self.port = port
        self.token = token or secrets.token_urlsafe(24)
        self.instance = hashlib.sha256(str(options.catalog.resolve()).encode()).hexdigest()[:12]
        self.cookie = f"synth_audit_{port}"
        self.name_cookie = f"synth_audit_annotator_{port}"
        self.where = options.rows()
        self.reader = Catalog.open(options.catalog, read_only=True, busy_timeout=READ_WAIT_S)
        self.queue: AuditQueue = self.reader.audit_queue(options.sample, options.refusals, options.seed, self.where)
        self.order = [i.row for i in self.queue.items]
        self.position = {row: n for n, row in enumerate(self.order)}
        self.items = {i.row: i for i in self.queue.items}
        self.lock = threading.Lock()
        """One catalog operation at a time in this process (DuckDB opens a file one way per process)."""
        self.codes = [{"code": c.value, "description": DESCRIPTIONS[c]} for c in Code]

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/?token={self.token}"

    def app(self) -> ASGIApp:
        routes = [Route("/", self.queue_page), Route("/item/{row:int}", self.item_page),
                  Route("/api/labels", self.post_label, methods=["POST"])]
        return Guard(Starlette(routes=routes), self.port, self.token, self.cookie)

    # ------------------------------------------------------------------ pages

    def _annotator(self, request: Request) -> str | None:
        name = request.cookies.get(self.name_cookie)
        return (unquote(name).strip() or None) if name else self.options.annotator

    def _page(self, template: str, page_data: dict[str, Any], **values: Any) -> HTMLResponse:
        nonce = secrets.token_urlsafe(16)
        body = html_environment().get_template(template).render(nonce=nonce, page_data=page_data, **values)
        return HTMLResponse(body, headers={
            "Content-Security-Policy": f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
                                       "img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
                                       "frame-ancestors 'none'",
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
            "X-Frame-Options": "DENY"})

    def _data(self, page: str, **more: Any) -> dict[str, Any]:
        return {"page": page, "instance": self.instance, "name_cookie": self.name_cookie, "row": None,
                "next_row": None, "prev_row": None, "labels": [], "codes": self.codes, **more}

    def queue_page(self, request: Request) -> Response:
        annotator = self._annotator(request)
        try:
            with self.lock:
                stats = self.reader.audit_stats(self.where)
                latest = self.reader.labels(latest=True)
                consensus = self.reader.audit_consensus()
        except CatalogBusy as exc:
            return PlainTextResponse(f"{exc}; reload the page in a moment", status_code=503)
        by_row: dict[int, dict[str, AuditLabel]] = {}
        for label in latest:
            by_row.setdefault(label.package_row, {})[label.annotator] = label
        mine = [row for row in self.order if annotator and annotator in by_row.get(row, {})]
        first_open = next((row for row in self.order if not (annotator and annotator in by_row.get(row, {}))), None)
        return self._page("audit_queue.html.j2", self._data("queue"), queue=self.queue, stats=stats, latest=by_row,
                          consensus=consensus, annotator=annotator, mine_count=len(mine), first_open=first_open,
                          drawn=sum(s.sampled for s in self.queue.strata), catalog=str(self.options.catalog))

    def item_page(self, request: Request) -> Response:
        row = int(request.path_params["row"])
        try:
            with self.lock, self.reader.batch():
                records = self.reader.show(str(row))
                labels = self.reader.labels(row, latest=True)
        except CatalogBusy as exc:
            return PlainTextResponse(f"{exc}; reload the page in a moment", status_code=503)
        if not records or records[0].package is None:
            return PlainTextResponse(f"no package row {row} in this catalog", status_code=404)
        try:
            view = package_view(records[0], self.items.get(row), labels)
        except ValidationError as exc:
            return PlainTextResponse(f"row {row}'s package does not load in this synth: {first_validation_error(exc)}; "
                                     f"`synth catalog show {row}` prints it", status_code=422)
        at = self.position.get(row)
        prev_row = self.order[at - 1] if at is not None and at > 0 else None
        next_row = self.order[at + 1] if at is not None and at + 1 < len(self.order) else None
        data = self._data("item", row=row, next_row=next_row, prev_row=prev_row,
                          labels=[label.model_dump(mode="json") for label in labels])
        return self._page("audit_item.html.j2", data, view=view, annotator=self._annotator(request), position=at,
                          total=len(self.order), prev_row=prev_row, next_row=next_row)

    # ------------------------------------------------------------------ labels

    async def post_label(self, request: Request) -> Response:
        try:
            body = json.loads(await bounded_body(request))
        except BodyTooLarge:
            return JSONResponse({"error": f"a label may hold at most {MAX_BODY} bytes"}, status_code=413)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return JSONResponse({"error": "the body is not JSON"}, status_code=400)
        problem = label_problem(body)
        if problem:
            return JSONResponse({"error": problem}, status_code=400)
        return await anyio.to_thread.run_sync(self.store_label, body)

    def store_label(self, body: dict[str, Any]) -> Response:
        """Append the label ``body`` holds (already shaped by ``label_problem``); the answer."""
        try:
            with self.lock, Catalog.open(self.options.catalog, create=False, busy_timeout=WRITE_WAIT_S) as writer:
                stored = writer.add_label(body["row"], body["label"], body["annotator"], body.get("code"),
                                          body.get("comment"))
        except CatalogBusy as exc:
            return JSONResponse({"error": str(exc), "busy": True}, status_code=503)
        except CatalogError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse(stored.model_dump(mode="json"), status_code=201)


def label_problem(body: Any) -> str | None:
    """Why ``body`` is not a label the API takes, or None: a JSON object with an integer ``row``,
    string ``label`` and ``annotator``, and a string or null ``code`` and ``comment``."""
    if not isinstance(body, dict):
        return "a label is a JSON object"
    if not isinstance(body.get("row"), int) or isinstance(body.get("row"), bool):
        return "row: give the package row as an integer"
    for key in ("label", "annotator"):
        if not isinstance(body.get(key), str):
            return f"{key}: give it as a string"
    for key in ("code", "comment"):
        if body.get(key) is not None and not isinstance(body.get(key), str):
            return f"{key}: give it as a string or null"
    return None


# --------------------------------------------------------------------------- serving


def listen(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: any free port); ``OSError`` when it cannot
    be bound."""
    sock = socket.socket(socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError:
        sock.close()
        raise
    sock.listen(64)
    return sock


def serve(site: AuditSite, sock: socket.socket) -> None:
    """Serve ``site`` on ``sock`` until interrupted (Ctrl-C, SIGTERM)."""
    uvicorn.Server(uvicorn.Config(site.app(), log_level="warning", lifespan="off")).run(sockets=[sock])


@dataclass
class Running:
    """A site served in a thread of this process (tests and benchmarks): its ``url``."""

    site: AuditSite
    url: str


@contextlib.contextmanager
def running(options: AuditOptions, token: str | None = None, timeout_s: float = 30.0) -> Iterator[Running]:
    """Serve ``options`` on a free port in a background thread until the block ends."""
    import time

    sock = listen(0)
    site = AuditSite(options, sock.getsockname()[1], token)
    server = uvicorn.Server(uvicorn.Config(site.app(), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the audit server did not start")
        time.sleep(0.01)
    try:
        yield Running(site, site.url)
    finally:
        server.should_exit = True
        thread.join(timeout_s)
        sock.close()
