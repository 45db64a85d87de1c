"""``synth audit queue|label|stats|export`` (pipeline/cli/audit.py), in process."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.catalog.store import Catalog
from tests.catalog.test_audit import fill
from tests.conftest import CliResult


@pytest.fixture
def audited(empty_catalog: Path) -> tuple[Path, dict[str, list[int]]]:
    with Catalog.open(empty_catalog) as writer, writer.batch():
        rows = fill(writer)
    return empty_catalog, rows


def test_label_queue_stats_and_export(audited: tuple[Path, dict[str, list[int]]], tmp_path: Path,
                                      synth: Callable[..., CliResult]) -> None:
    path, rows = audited
    done = synth("audit", "label", rows["refused"][0], "--label", "defective", "--code", "grader_counts_calls",
                 "--annotator", "one", "--comment", "three\tidentical creates", "--catalog", path, "--json")
    assert done.exit_code == 0, done.stderr
    stored = json.loads(done.stdout)
    assert (stored["label"], stored["code"], stored["annotator"]) == ("defective", "grader_counts_calls", "one")
    for row, label, who in [(rows["refused"][0], "defective", "two"), (rows["accepted"][0], "accept", "one"),
                            (rows["accepted"][0], "accept", "two"), (rows["accepted"][1], "unsure", "one")]:
        assert synth("audit", "label", row, "--label", label, "--annotator", who, "--catalog", path).exit_code == 0

    plan = json.loads(synth("audit", "queue", "--sample", "4", "--seed", "1", "--catalog", path, "--json").stdout)
    assert {i["reason"] for i in plan["items"]} == {"review", "disagreement", "accepted", "refused"}
    assert all(i["weight"] >= 1 for i in plan["items"])
    table = synth("audit", "queue", "--sample", "4", "--catalog", path)
    assert table.exit_code == 0 and "synth audit label ROW" in table.stdout

    stats = json.loads(synth("audit", "stats", "--catalog", path, "--json").stdout)
    assert stats["decided_rows"] == 2 and stats["agreement"]["method"] == "cohen"
    assert stats["agreement"]["kappa"] == 1.0
    assert stats["refusal"]["precision"]["value"] == 1.0
    text = synth("audit", "stats", "--catalog", path)
    assert text.exit_code == 0 and "acceptance" in text.stdout and "cohen kappa" in text.stdout

    out = tmp_path / "labelled"
    summary = json.loads(synth("audit", "export", "--out", out, "--catalog", path, "--json").stdout)
    assert (summary["packages"], summary["accept"], summary["reject"]) == (2, 1, 1)
    assert summary["skipped"] == {"undecided": 1}
    expected = list(csv.DictReader((out / "expected.tsv").open(encoding="utf-8"), delimiter="\t"))
    assert [(e["expected"], e["code"]) for e in expected] == [("accept", "-"), ("reject", "grader_counts_calls")]
    assert expected[1]["description"] == "three identical creates"
    for e in expected:
        assert json.loads((out / e["file"]).read_text())["id"] == e["file"].removesuffix(".json")
    assert synth("audit", "export", "--out", out, "--catalog", path).exit_code == 2  # not empty

    exported = json.loads(synth("export", "--format", "jsonl", "--out", tmp_path / "a.jsonl", "--audited",
                                "--catalog", path, "--json").stdout)
    assert exported["rows"] == 1 and exported["audited"] is True
    where = json.loads(synth("export", "--format", "jsonl", "--out", tmp_path / "d.jsonl", "--status", "all",
                             "--where", "audit_label = 'defective'", "--catalog", path, "--json").stdout)
    assert where["rows"] == 1
    query = synth("catalog", "query", "SELECT count(*) AS n FROM audit_latest", "--catalog", path, "--json")
    assert json.loads(query.stdout)["rows"] == [[5]]


@pytest.mark.parametrize("args, message", [
    (["--label", "great", "--annotator", "a"], "label 'great' is not one of"),
    (["--label", "defective", "--code", "bogus", "--annotator", "a"], "not a reason code"),
    (["--label", "accept", "--annotator", " "], "annotator's name is empty"),
])
def test_label_errors_are_one_line(audited: tuple[Path, dict[str, list[int]]], synth: Callable[..., CliResult],
                                   args: list[str], message: str) -> None:
    path, rows = audited
    result = synth("audit", "label", rows["accepted"][0], *args, "--catalog", path)
    assert result.exit_code == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_unknown_row_and_bad_where(audited: tuple[Path, dict[str, list[int]]], synth: Callable[..., CliResult]) -> None:
    path, _ = audited
    result = synth("audit", "label", "999999", "--label", "accept", "--annotator", "a", "--catalog", path)
    assert result.exit_code == 2 and "no package row 999999" in result.stderr
    result = synth("audit", "queue", "--where", "1; DROP TABLE packages", "--catalog", path)
    assert result.exit_code == 2 and "without ';'" in result.stderr
    result = synth("audit", "stats", "--where", "nope = 1", "--catalog", path)
    assert result.exit_code == 2 and "the packages columns are" in result.stderr


def test_bare_audit_serves_the_page_with_a_token(audited: tuple[Path, dict[str, list[int]]],
                                                 synth: Callable[..., CliResult],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from pipeline.interop import audit_server

    served: list[tuple[audit_server.AuditSite, int]] = []
    monkeypatch.setattr(audit_server, "serve", lambda site, sock: served.append((site, sock.getsockname()[1])))
    path, rows = audited
    done = synth("audit", "--catalog", path, "--port", "0", "--run", "1", "--where", "status = 'rejected'",
                 "--sample", "0", "--refusals", "2", "--annotator", "ana", "--json")
    assert done.exit_code == 0, done.stderr
    [(site, port)] = served
    shown = json.loads(done.stdout)
    assert shown["url"] == f"http://127.0.0.1:{port}/?token={site.token}" and len(site.token) >= 32
    assert site.where == "run = 1 AND (status = 'rejected')" and site.options.annotator == "ana"
    assert {i.row for i in site.queue.items} >= set(rows["refused"][:2]) and shown["items"] == len(site.queue.items)
    assert not ({i.row for i in site.queue.items} & set(rows["accepted"]))
    table = synth("audit", "--catalog", path, "--port", "0")
    assert table.exit_code == 0 and f"open {served[1][0].url}" in table.stdout and "127.0.0.1 only" in table.stdout

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        busy = synth("audit", "--catalog", path, "--port", taken.getsockname()[1])
    assert busy.exit_code != 0 and "cannot listen on 127.0.0.1" in busy.stderr and "another --port" in busy.stderr
    missing = synth("audit", "--catalog", path.with_name("none.duckdb"), "--port", "0")
    assert missing.exit_code != 0 and "no catalog at" in missing.stderr and "Traceback" not in missing.stderr
    bad = synth("audit", "--catalog", path, "--port", "0", "--where", "nonsense_column = 1")
    assert bad.exit_code != 0 and "nonsense_column" in bad.stderr and len(served) == 2


@pytest.mark.slow
def test_the_served_page_answers_and_ctrl_c_stops_it(audited: tuple[Path, dict[str, list[int]]]) -> None:
    import http.client
    import signal
    import subprocess
    import sys

    path, _ = audited
    process = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "audit", "--catalog", str(path), "--port", "0",
                                "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = json.loads(process.stdout.readline())["url"]  # printed once the socket listens
        port = int(url.split(":")[2].split("/")[0])
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        connection.request("GET", "/" + url.split("/", 3)[3])
        response = connection.getresponse()
        assert response.status == 303 and "HttpOnly" in (response.getheader("set-cookie") or "")
        connection.close()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 0
        assert "Traceback" not in (process.stderr.read() if process.stderr else "")
    finally:
        process.kill()
        process.wait()
