"""``pipeline.env.http`` and ``synth serve``: a package's world over real HTTP on 127.0.0.1.

Every test talks to a server on a random loopback port with ``urllib.request``; the scripted call
sequences are replayed on an in-process ``World`` and must give the same statuses, bodies and audit.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pipeline.catalog.store import Catalog
from pipeline.cli import app
from pipeline.cli.interop import resolve_package
from pipeline.core.episode import actions_of
from pipeline.core.errors import UserError
from pipeline.core.package import TaskPackage, load_package
from pipeline.core.serving import is_loopback
from pipeline.core.trajectory import trajectory_data
from pipeline.core.world import World
from pipeline.env.http import MAX_DEPTH, PackageServer, operation_routes
from pipeline.env.task_env import TaskEnv, play_reference
from pipeline.verify.verifier import verify_package
from tests.conftest import REPO_ROOT, CliResult  # noqa: E402
from tests.support import processes  # noqa: E402

CONTACTS = REPO_ROOT / "examples" / "contacts-send-message.json"
SYNTH = Path(sys.executable).parent / "synth"
Docs = Callable[[str], dict[str, Any]]


def post(url: str, body: bytes | dict[str, Any] | None = None, method: str = "POST") -> tuple[int, dict[str, Any]]:
    data = body if isinstance(body, bytes) else json.dumps(body or {}).encode()
    request = urllib.request.Request(url, data=data if method == "POST" else None, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=processes.PATIENCE_S) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def running(server: PackageServer | TaskPackage) -> Iterator[PackageServer]:
    """Serve in a background thread (a package: on 127.0.0.1, a random port) until the caller is done."""
    if isinstance(server, TaskPackage):
        server = PackageServer(server, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=processes.PATIENCE_S)


@pytest.fixture
def contacts() -> TaskPackage:
    return load_package(CONTACTS.read_text())


@pytest.fixture
def server(contacts: TaskPackage) -> Iterator[PackageServer]:
    yield from running(contacts)


# --------------------------------------------------------------------------- same results as in process

SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("/contacts/search", {"query": "Omar"}),
    ("/contacts/send_message", {"contact_id": "c-102", "message": "The budget review moved to Friday."}),
    ("/contacts/send_message", {"contact_id": "c-999", "message": "hello"}),   # unknown id: 404
    ("/contacts/get", {}),                                                      # missing field: 400
    ("/contacts/create", {"name": "Lena Ortiz", "email": "lena@corp.example"}),  # unbound endpoint
    ("/contacts/messages", {}),
]


def test_scripted_calls_match_the_in_process_world(server: PackageServer, contacts: TaskPackage) -> None:
    world = World.from_package(contacts)
    bound = {t.endpoint: t.name for t in contacts.tools}
    for path, args in SCRIPT:
        expected = world.call(bound[path], args) if path in bound else world.call_endpoint(path, args)
        assert post(server.base_url + path, args) == (expected.status, expected.body), path
    status, audit = post(server.base_url + "/contacts/audit")
    assert status == 200
    assert audit["calls"] == [trajectory_data(entry) for entry in world.audit]
    assert [c["tool"] for c in audit["calls"]] == [
        "contacts_search", "contacts_send_message", "contacts_send_message", None, None, None]
    assert [c["status"] for c in audit["calls"]] == [200, 200, 404, 400, 200, 200]


def test_audit_is_per_service(example_doc: Docs) -> None:
    package = load_package(example_doc("multi-turn-schedule-meeting"))
    for server in running(package):
        post(server.base_url + "/contacts/search", {"query": "Maya"})
        post(server.base_url + "/calendar/events/create",
             {"title": "Sync", "start": "2026-12-03T10:00", "attendees": ["maya.patel@corp.example"]})
        contacts_calls = post(server.base_url + "/contacts/audit")[1]["calls"]
        calendar_calls = post(server.base_url + "/calendar/audit")[1]["calls"]
        assert [c["endpoint"] for c in contacts_calls] == ["/contacts/search"]
        assert [(c["tool"], c["status"]) for c in calendar_calls] == [("calendar_create_event", 200)]


def test_package_faults_apply_to_bound_routes(example_doc: Docs) -> None:
    doc = example_doc("contacts-send-message")
    doc["faults"] = [{"tool": "contacts_search", "on_call": 1, "status": 503, "retry_after": 2}]
    for server in running(load_package(doc)):
        status, body = post(server.base_url + "/contacts/search", {"query": "Omar"})
        assert (status, body["error"]["retry_after"]) == (503, 2)
        assert post(server.base_url + "/contacts/search", {"query": "Omar"})[0] == 200
        assert post(server.base_url + "/contacts/list", {})[0] == 200  # unbound: no fault


def test_reset_restores_the_initial_state(server: PackageServer) -> None:
    url = server.base_url
    post(url + "/contacts/send_message", {"contact_id": "c-101", "message": "hi"})
    assert post(url + "/contacts/messages")[1]["total"] == 1
    assert post(url + "/contacts/reset") == (200, {"status": "reset"})
    assert post(url + "/contacts/audit") == (200, {"calls": []})
    assert post(url + "/contacts/messages")[1]["total"] == 0
    created = post(url + "/contacts/send_message", {"contact_id": "c-101", "message": "hi"})[1]
    assert created["message"]["id"] == "msg-001"


def test_the_simulated_user_answers_at_user_ask_and_reset_forgets(example_doc: Docs) -> None:
    package = load_package(example_doc("multi-turn-schedule-meeting"))
    for server in running(package):
        url = server.base_url + "/user/ask"
        assert post(url, {"question": "Which day suits you?"}) == (200, {"reply": "Please make it 2026-12-03.", "revealed": ["day"]})
        assert post(url, {"question": ""})[0] == 400
        assert server.user.revealed == ["day"]
        post(server.base_url + "/calendar/reset")
        assert server.user.revealed == []


# --------------------------------------------------------------------------- the score


def http_action(server: PackageServer, action: dict[str, Any]) -> None:
    """Take one ``TaskEnv`` action over HTTP: a tool call at its tool's endpoint, a question at /user/ask."""
    if action["type"] == "tool_call":
        endpoint = next(t.endpoint for t in server.package.tools if t.name == action["name"])
        post(server.base_url + endpoint, action["arguments"])
    else:
        post(server.base_url + "/user/ask", {"question": action["text"]})


@pytest.mark.parametrize("name", ["multi-turn-schedule-meeting", "contacts-send-message"])
def test_score_over_http_is_task_env_score(name: str, example_doc: Docs) -> None:
    """The reference played over HTTP scores what ``TaskEnv.score()`` gives after ``play_reference``:
    every check, the answer and the facts the user revealed included; ``GET /score`` and a ``POST``
    without an answer grade with none; scoring changes nothing, and a reset starts the grade over."""
    package = load_package(example_doc(name))
    env = play_reference(package)
    report = env.score()
    assert report.passed
    expected = {**report.model_dump(mode="json"), "passed": True}
    actions = actions_of(env.trajectory())
    answer = actions.pop()["text"]
    without_answer = TaskEnv(package)
    without_answer.reset()
    for action in actions:
        without_answer.step(action)
    for server in running(package):
        fresh = post(server.base_url + "/score", method="GET")
        assert fresh[0] == 200 and fresh[1]["score"] < 1 and fresh[1]["passed"] is False
        for action in actions:
            http_action(server, action)
        assert post(server.base_url + "/score", {"answer": answer}) == (200, expected)
        unanswered = {**without_answer.score().model_dump(mode="json"), "passed": without_answer.score().passed}
        assert post(server.base_url + "/score", method="GET") == (200, unanswered)
        assert post(server.base_url + "/score", {}) == (200, unanswered)
        assert post(server.base_url + "/score", {"answer": answer}) == (200, expected)  # nothing was kept
        post(server.base_url + f"/{package.services[0]}/reset")
        assert post(server.base_url + "/score", method="GET") == fresh
    assert [c["id"] for c in expected["checks"]] == [c.id for c in package.checks]


def test_score_refuses_an_answer_that_is_not_text(server: PackageServer) -> None:
    status, body = post(server.base_url + "/score", {"answer": ["a", "list"]})
    assert status == 400 and "answer" in body["error"]["message"]
    assert "/score" in post(server.base_url + "/nope")[1]["error"]["valid_endpoints"]


# --------------------------------------------------------------------------- errors


def test_unknown_route_is_404_listing_valid_endpoints(server: PackageServer) -> None:
    status, body = post(server.base_url + "/contacts/send", {"contact_id": "c-102", "message": "hi"})
    assert status == 404
    assert "/contacts/send" in body["error"]["message"]
    assert "/contacts/send_message" in body["error"]["valid_endpoints"]
    assert "/contacts/audit" in body["error"]["valid_endpoints"]
    assert post(server.base_url + "/contacts/audit")[1]["calls"] == []


def test_bad_bodies_are_400_and_reach_nothing(server: PackageServer) -> None:
    for body in (b'{"query": ', b'["Omar"]', b"\xff\xfe"):
        status, reply = post(server.base_url + "/contacts/search", body)
        assert status == 400 and reply["error"]["status"] == 400, body
    assert post(server.base_url + "/contacts/search", b"")[0] == 400  # empty body = {}; query is required
    assert len(post(server.base_url + "/contacts/audit")[1]["calls"]) == 1


def raw_request(server: PackageServer, head: str, body: bytes = b"", timeout: float = processes.PATIENCE_S) -> tuple[int, dict[str, Any]]:
    """Send ``head`` (request line and headers, ``\\r\\n`` added) and ``body`` on a fresh socket;
    the status and JSON body of the one response. Fails when the server drops the connection."""
    host, port = server.server_address[:2]
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode("latin-1") + b"\r\n\r\n" + body)
        sock.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head_bytes, _, payload = data.partition(b"\r\n\r\n")
    assert head_bytes, "the server dropped the connection without a response"
    status = int(head_bytes.split()[1])
    length = int(re.search(rb"Content-Length: (\d+)", head_bytes).group(1))  # type: ignore[union-attr]
    return status, json.loads(payload[:length])


def _headers(server: PackageServer, **extra: str) -> str:
    lines = {"Host": f"127.0.0.1:{server.server_port}", **extra}
    return "\n".join(f"{k.replace('_', '-')}: {v}" for k, v in lines.items())


@pytest.mark.parametrize(("length", "status"), [
    ("abc", 400), ("-1", 400), ("1.5", 400), ("0x10", 400), ("12, 12", 400),
    ("100000000000", 413), ("9" * 5000, 413), (str(2 * 1024 * 1024), 413),
])
def test_a_bad_content_length_is_a_json_error_and_the_server_carries_on(
        server: PackageServer, length: str, status: int, capfd: pytest.CaptureFixture[str]) -> None:
    head = f"POST /contacts/search HTTP/1.1\n{_headers(server, Content_Length=length)}"
    got, body = raw_request(server, head, b'{"query": "Omar"}')
    assert (got, body["error"]["status"]) == (status, status)
    assert "Content-Length" in body["error"]["message"] or "limit" in body["error"]["message"]
    assert post(server.base_url + "/contacts/search", {"query": "Omar"})[0] == 200  # still serving
    assert post(server.base_url + "/contacts/audit")[1]["calls"][0]["args"] == {"query": "Omar"}  # only the good call
    assert "Traceback" not in capfd.readouterr().err


def test_nested_and_oversized_bodies_are_refused_before_the_world(server: PackageServer) -> None:
    url = server.base_url + "/contacts/search"
    assert post(url, b"[" * 200_000 + b"]" * 200_000)[0] == 400  # past the parser's recursion limit
    nested: Any = "Omar"
    for _ in range(MAX_DEPTH + 1):
        nested = {"q": nested}
    status, body = post(url, {"query": nested})
    assert status == 400 and "deeper" in body["error"]["message"]
    status, body = post(url, b'{"query": "' + b"x" * server.max_body + b'"}')
    assert status == 413 and "limit" in body["error"]["message"]
    status, body = post(url, b'{"query": "Om\\ud83dar"}')  # a lone surrogate: not text
    assert status == 400 and "lone surrogate" in body["error"]["message"]
    status, body = post(url, b'{"query": "Om\\u0000ar"}')
    assert status == 400 and "NUL" in body["error"]["message"]
    assert post(server.base_url + "/contacts/audit")[1]["calls"] == []


def test_the_world_stops_growing_at_the_audit_cap_until_a_reset(contacts: TaskPackage) -> None:
    for server in running(PackageServer(contacts, max_audit=20_000)):
        url, message = server.base_url, "x" * 1_000
        statuses = [post(url + "/contacts/send_message", {"contact_id": "c-101", "message": message})[0]
                    for _ in range(30)]
        assert 200 in statuses and statuses[-1] == 413
        accepted = statuses.index(413)
        assert set(statuses[accepted:]) == {413}
        assert len(post(url + "/contacts/audit")[1]["calls"]) == accepted  # refused calls reach nothing
        assert post(url + "/contacts/reset")[0] == 200
        assert post(url + "/contacts/send_message", {"contact_id": "c-101", "message": message})[0] == 200


@pytest.mark.parametrize(("headers", "status"), [
    ({"Host": "evil.example:8765"}, 403),                    # DNS rebinding: a foreign name for our address
    ({"Host": ""}, 403),
    ({"Origin": "http://evil.example"}, 403),                # a web page elsewhere
    ({"Origin": "null"}, 403),                               # a sandboxed frame or a file:// page
    ({"Origin": "http://127.0.0.1:1"}, 403),                 # another local origin (port)
    ({"Host": "localhost:{port}"}, 200),
    ({"Host": "127.0.0.1:{port}", "Origin": "http://127.0.0.1:{port}"}, 200),
    ({"Host": "localhost:{port}", "Origin": "http://localhost:{port}"}, 200),
])
def test_foreign_hosts_and_cross_origin_requests_are_refused(server: PackageServer, headers: dict[str, str],
                                                             status: int) -> None:
    port = server.server_port
    lines = {k: v.format(port=port) for k, v in {"Host": f"127.0.0.1:{port}", **headers}.items()}
    head = "POST /contacts/reset HTTP/1.1\nContent-Length: 2\n" + "\n".join(f"{k}: {v}" for k, v in lines.items())
    got, body = raw_request(server, head, b"{}")
    assert got == status, body
    if status == 403:
        assert body["error"]["status"] == 403


def test_allow_remote_on_a_wildcard_address_answers_any_host(contacts: TaskPackage) -> None:
    for server in running(PackageServer(contacts, "0.0.0.0", 0, allow_remote=True)):
        assert server.names_me("build-box.internal") and server.names_me("10.1.2.3")
    for server in running(PackageServer(contacts, "localhost", 0)):
        assert server.names_me("127.0.0.1") and server.names_me("localhost") and server.names_me("::1")
        assert not server.names_me("build-box.internal") and not server.names_me(None)


@pytest.mark.parametrize("request_line", [
    "GARBAGE", "BREW /contacts/search HTTP/1.1", "POST /" + "a" * 70_000 + " HTTP/1.1",
    "POST /contacts/search HTTP/9.9",
])
def test_malformed_requests_get_a_json_error(server: PackageServer, request_line: str,
                                             capfd: pytest.CaptureFixture[str]) -> None:
    status, body = raw_request(server, f"{request_line}\n{_headers(server)}")
    assert status >= 400 and body["error"]["status"] == status
    assert post(server.base_url + "/contacts/search", {"query": "Omar"})[0] == 200
    assert "Traceback" not in capfd.readouterr().err


def test_a_body_cut_short_leaves_no_trace_and_a_chunked_body_is_refused(
        server: PackageServer, capfd: pytest.CaptureFixture[str]) -> None:
    host, port = server.server_address[:2]
    with socket.create_connection((host, port), timeout=processes.PATIENCE_S) as sock:  # promises 100 bytes, sends 3, hangs up
        head = f"POST /contacts/search HTTP/1.1\n{_headers(server, Content_Length='100')}\n\nabc"
        sock.sendall(head.replace("\n", "\r\n").encode())
    head = f"POST /contacts/search HTTP/1.1\n{_headers(server, Transfer_Encoding='chunked')}"
    assert raw_request(server, head, b"2\r\n{}\r\n0\r\n\r\n")[0] == 411
    assert post(server.base_url + "/contacts/search", {"query": "Omar"})[0] == 200
    assert "Traceback" not in capfd.readouterr().err


def test_a_crash_inside_a_call_is_a_500_not_a_dropped_connection(server: PackageServer,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: Any) -> None:
        raise MemoryError("out of memory")

    monkeypatch.setattr(server.world, "call", boom)
    status, body = post(server.base_url + "/contacts/search", {"query": "Omar"})
    assert status == 500 and "MemoryError" in body["error"]["message"]


def test_other_methods_are_405(server: PackageServer) -> None:
    status, body = post(server.base_url + "/contacts/search", method="GET")
    assert status == 405 and "POST" in body["error"]["message"]
    assert post(server.base_url + "/score", method="DELETE")[0] == 405


def test_routes_cover_every_operation_of_the_package_services(contacts: TaskPackage) -> None:
    routes = operation_routes(contacts)
    assert routes["/contacts/search"] == "contacts_search"
    assert routes["/contacts/list"] is None
    assert set(routes) == {"/contacts/search", "/contacts/list", "/contacts/get", "/contacts/create",
                           "/contacts/update", "/contacts/send_message", "/contacts/messages"}


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.1.2.3", True), ("::1", True), ("localhost", True),
    ("0.0.0.0", False), ("192.168.1.5", False), ("::", False), ("example.org", False),
])
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_serves_on_ipv6_loopback(contacts: TaskPackage) -> None:
    try:
        server = PackageServer(contacts, "::1", 0)
    except OSError:
        pytest.skip("no IPv6 loopback here")
    for served in running(server):
        assert served.base_url.startswith("http://[::1]:")
        assert post(served.base_url + "/contacts/search", {"query": "Omar"})[1]["total"] == 2


def test_non_loopback_host_is_refused(contacts: TaskPackage) -> None:
    with pytest.raises(UserError, match="--allow-remote"):
        PackageServer(contacts, "0.0.0.0", 0)


# --------------------------------------------------------------------------- synth serve


def test_synth_serve_prints_routes_serves_and_stops_on_ctrl_c() -> None:
    command = [str(SYNTH), "serve", str(CONTACTS), "--port", "0", "--json"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        started = json.loads(proc.stdout.readline())
        assert started["base_url"].startswith("http://127.0.0.1:")
        assert "/contacts/send_message" in started["routes"] and "/contacts/reset" in started["routes"]
        assert started["package"] == load_package(CONTACTS.read_text()).compute_id()
        status, body = post(started["base_url"] + "/contacts/search", {"query": "Maya"})
        assert status == 200 and body["contacts"][0]["id"] == "c-101"
        status, body = post(started["base_url"] + "/score", method="GET")
        assert status == 200 and "/score" in started["routes"] and {"score", "passed", "checks"} <= set(body)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=processes.PATIENCE_S)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "Traceback" not in err


def test_synth_serve_stops_on_ctrl_c_even_when_started_with_sigint_ignored() -> None:
    """A shell without job control starts `synth serve ... &` with SIGINT ignored; SIGINT must still
    stop it (before, the server ran on until killed)."""
    command = [str(SYNTH), "serve", str(CONTACTS), "--port", "0", "--json"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        started = json.loads(proc.stdout.readline())
        status, _ = post(started["base_url"] + "/contacts/search", {"query": "Maya"})
        assert status == 200
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=processes.PATIENCE_S)
    finally:
        proc.kill()
    assert proc.returncode == 0, err


@pytest.mark.parametrize(("args", "message"), [
    (["serve", str(CONTACTS), "--host", "0.0.0.0"], "--allow-remote"),
    (["serve", "missing.json"], "no such package file"),
])
def test_synth_serve_user_errors_are_one_line(args: list[str], message: str,
                                              synth: Callable[..., CliResult]) -> None:
    result = synth(*args)
    assert result.exit_code == 2
    err = result.stderr
    assert message in err and len(err.strip().splitlines()) == 1


def test_synth_serve_reports_a_port_in_use(server: PackageServer) -> None:
    port = str(server.server_address[1])
    result = CliRunner().invoke(app, ["serve", str(CONTACTS), "--port", port])
    assert isinstance(result.exception, UserError)
    assert "another --port" in str(result.exception)


def test_a_package_id_is_found_in_the_catalog(empty_catalog: Path) -> None:
    package = load_package(json.loads((REPO_ROOT / "examples" / "todo-three-items.json").read_text())).with_id()
    catalog = empty_catalog
    with Catalog.open(catalog) as writer:
        writer.record(writer.start_run("t", "hand"), 0, 1, package, verify_package(package))
    assert resolve_package(package.id, catalog) == package
    with pytest.raises(UserError, match="no such package"):
        resolve_package("pkg-0000000000000000", catalog)
    with pytest.raises(UserError, match="no such package file or package id"):
        resolve_package("missing.json", catalog)
