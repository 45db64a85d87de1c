"""The audit page's server (pipeline/interop/audit_server.py), served on a free port of this
machine and spoken to over HTTP: who it answers, what it refuses, that labels reach the catalog,
that a busy catalog is said so (and the label kept for later), and that package text is escaped."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipeline.catalog.store import Catalog
from pipeline.core.outcomes import Verdict
from pipeline.interop.audit_server import MAX_BODY, AuditOptions, Running, running
from tests.catalog.test_audit import fill, variant
from tests.conftest import copy_catalog, load_examples

HOSTILE_REQUEST = "<script>window.__pwned = 1</script> Send it \"><img src=x onerror=\"window.__pwned = 2\"> now."
HOSTILE_NAME = "\"><img src=x onerror=\"window.__pwned = 3\">"


def audit_catalog(path: Path) -> dict[str, list[int]]:
    """The rows of ``tests.catalog.test_audit.fill`` plus an accepted package whose request and a
    record hold HTML (``hostile``): the catalog the page's tests serve."""
    with Catalog.open(path) as writer, writer.batch():
        rows = fill(writer)
        base = load_examples()[0]
        state = json.loads(json.dumps(base.initial_state))
        next(iter(next(iter(state.values())).values()))[0]["name"] = HOSTILE_NAME
        package = variant(base, 999).model_copy(
            update={"request": base.request.model_copy(update={"text": HOSTILE_REQUEST}), "initial_state": state}
        ).with_id()
        run = writer.runs()[0].id
        rows["hostile"] = [writer.record(run, 500, 1, package, Verdict.build(package.id, [], 1.0))]
    return rows


@dataclass
class Served:
    path: Path
    rows: dict[str, list[int]]
    server: Running

    @property
    def port(self) -> int:
        return self.server.site.port

    @property
    def cookie(self) -> str:
        return f"{self.server.site.cookie}={self.server.site.token}"

    def request(self, method: str, target: str, body: bytes | None = None,
                headers: dict[str, str] | None = None, token: bool = True) -> tuple[int, dict[str, str], bytes]:
        """One request with the token's cookie (unless ``token`` is False) and ``headers``."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        sent = {**({"Cookie": self.cookie} if token else {}), **(headers or {})}
        connection.request(method, target, body=body, headers=sent)
        response = connection.getresponse()
        out = (response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        connection.close()
        return out

    def label(self, row: int, label: str, annotator: str = "ana", **more: object) -> tuple[int, dict[str, object]]:
        status, _, body = self.request("POST", "/api/labels", json.dumps(
            {"row": row, "label": label, "annotator": annotator, **more}).encode(),
            {"Content-Type": "application/json", "Origin": f"http://127.0.0.1:{self.port}"})
        return status, json.loads(body)


@pytest.fixture(scope="module")
def audit_template(empty_catalog_template: Path, tmp_path_factory: pytest.TempPathFactory
                   ) -> tuple[Path, dict[str, list[int]]]:
    """``audit_catalog`` built once per module: copy it, never open it."""
    path = copy_catalog(empty_catalog_template, tmp_path_factory.mktemp("audit") / "catalog.duckdb")
    return path, audit_catalog(path)


@pytest.fixture
def served(audit_template: tuple[Path, dict[str, list[int]]], tmp_path: Path) -> Iterator[Served]:
    path = copy_catalog(audit_template[0], tmp_path / "catalog.duckdb")
    with running(AuditOptions(catalog=path, sample=50)) as server:
        yield Served(path, audit_template[1], server)


def test_the_token_is_needed_and_traded_for_a_cookie(served: Served) -> None:
    assert served.request("GET", "/", token=False)[0] == 401
    status, _, body = served.request("GET", "/", token=False, headers={"Cookie": f"{served.server.site.cookie}=wrong"})
    assert status == 403 and b"wrong token" in body
    assert served.request("GET", "/?token=wrong", token=False)[0] == 403
    status, headers, _ = served.request("GET", f"/item/1?token={served.server.site.token}", token=False)
    assert status == 303 and headers["location"] == "/item/1"
    assert headers["set-cookie"].startswith(served.cookie) and "HttpOnly" in headers["set-cookie"]
    assert "samesite=strict" in headers["set-cookie"].lower()
    status, headers, body = served.request("GET", "/")
    assert status == 200 and b"Sampling plan" in body
    assert "script-src 'nonce-" in headers["content-security-policy"]
    assert served.request("POST", "/api/labels", b"{}", token=False)[0] == 401


def test_a_foreign_host_or_origin_is_refused(served: Served) -> None:
    for host in ("evil.example", f"evil.example:{served.port}", f"127.0.0.1:{served.port + 1}", "127.0.0.1"):
        status, _, _ = served.request("GET", "/", headers={"Host": host})
        assert status == 403, host
    assert served.request("GET", "/", headers={"Host": f"localhost:{served.port}"})[0] == 200
    row = served.rows["accepted"][0]
    body = json.dumps({"row": row, "label": "accept", "annotator": "ana"}).encode()
    for origin in ("http://evil.example", f"http://localhost:{served.port + 1}", "null"):
        status, _, _ = served.request("POST", "/api/labels", body, {"Origin": origin})
        assert status == 403, origin
    with Catalog.open(served.path, read_only=True) as reader:
        assert reader.labels() == []


def test_a_big_body_is_refused(served: Served) -> None:
    big = json.dumps({"row": 1, "label": "accept", "annotator": "ana", "comment": "x" * MAX_BODY}).encode()
    status, _, body = served.request("POST", "/api/labels", big, {"Content-Type": "application/json"})
    assert status == 413 and str(MAX_BODY).encode() in body

    def chunks() -> Iterator[bytes]:  # no Content-Length: the server must stop reading by itself
        yield b'{"row": 1, "label": "accept", "annotator": "ana", "comment": "'
        for _ in range(4):
            yield b"y" * MAX_BODY
        yield b'"}'

    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    connection.request("POST", "/api/labels", body=chunks(), headers={"Cookie": served.cookie}, encode_chunked=True)
    assert connection.getresponse().status == 413
    connection.close()
    with Catalog.open(served.path, read_only=True) as reader:
        assert reader.labels() == []


def test_labels_are_stored_at_once_and_shown(served: Served) -> None:
    row = served.rows["refused"][0]
    status, stored = served.label(row, "defective", code="grader_counts_calls", comment="3 = 1")
    assert status == 201, stored
    with Catalog.open(served.path, read_only=True) as reader:
        [label] = reader.labels(row)
    assert (label.annotator, label.label, label.code, label.comment, label.id) == (
        "ana", "defective", "grader_counts_calls", "3 = 1", stored["id"])
    assert served.label(row, "defective", annotator="ben")[0] == 201
    status, _, page = served.request("GET", f"/item/{row}")
    assert status == 200 and page.count(b'<tr data-annotator="') == 2
    status, _, queue = served.request("GET", "/")
    assert f'data-labels="{row}">2<'.encode() in queue
    assert b'data-figure="labels">2<' in queue and b'data-figure="kappa">' in queue


WRONG_LABELS: list[tuple[object, str]] = [
    ({"row": 999_999, "label": "accept", "annotator": "ana"}, "no package row"),
    ({"row": 1, "label": "fine", "annotator": "ana"}, "not one of"),
    ({"row": 1, "label": "defective", "annotator": "ana", "code": "made_up"}, "not a reason code"),
    ({"row": 1, "label": "accept", "annotator": " "}, "annotator's name is empty"),
    ({"row": "1", "label": "accept", "annotator": "ana"}, "row: give the package row as an integer"),
    ({"row": 1, "label": "accept", "annotator": "ana", "comment": 3}, "comment: give it as a string or null"),
    ([1, 2], "a label is a JSON object"),
]


def test_a_wrong_label_is_refused_with_its_reason(served: Served) -> None:
    for body, message in WRONG_LABELS:
        status, _, answer = served.request("POST", "/api/labels", json.dumps(body).encode(),
                                           {"Content-Type": "application/json"})
        assert status == 400 and message in json.loads(answer)["error"], body
    assert served.request("POST", "/api/labels", b"{not json", {"Content-Type": "application/json"})[0] == 400
    with Catalog.open(served.path, read_only=True) as reader:
        assert reader.labels() == []


def test_a_busy_catalog_is_said_so_and_the_label_can_be_sent_again(served: Served) -> None:
    row = served.rows["accepted"][0]
    with Catalog.open(served.path):  # another writer holds the lock (as a run does)
        status, answer = served.label(row, "accept")
        assert status == 503 and answer["busy"] is True and "being written by another process" in str(answer["error"])
    assert served.label(row, "accept")[0] == 201
    with Catalog.open(served.path, read_only=True) as reader:
        assert [label.label for label in reader.labels(row)] == ["accept"]


def test_package_text_is_escaped_and_unknown_rows_are_404(served: Served) -> None:
    status, _, page = served.request("GET", f"/item/{served.rows['hostile'][0]}")
    assert status == 200
    text = page.decode()
    assert "<script>window.__pwned" not in text and "<img src=x" not in text
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in text
    assert "&#34;&gt;&lt;img src=x onerror=&#34;window.__pwned = 3&#34;&gt;" in text
    assert served.request("GET", "/item/999999")[0] == 404
    assert served.request("GET", f"/item/{served.rows['failure'][0]}")[0] == 404


def test_a_package_that_no_longer_loads_is_said_so(served: Served) -> None:
    import duckdb

    row = served.rows["accepted"][0]
    con = duckdb.connect(str(served.path))
    try:  # a package stored by another version of synth, with a field this one does not know
        con.execute("UPDATE packages SET package = json_merge_patch(package, '{\"colour\": \"red\"}') "
                    "WHERE row_id = ?", [row])
    finally:
        con.close()
    status, _, body = served.request("GET", f"/item/{row}")
    assert status == 422 and b"does not load" in body and b"colour" in body
