"""``synth report`` on the command line: the file, ``--json``, and one-line errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from tests.interop.conftest import ReportCatalog


def test_report_writes_the_page_and_prints_its_funnel(synth: Callable[..., CliResult],
                                                      report_catalog: ReportCatalog, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = synth("report", "--catalog", report_catalog.path, "--out", out, "--run", "1",
                   "--price-per-1k-prompt", "1", "--price-per-1k-completion", "2", "--json")
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["path"] == str(out) and summary["run"] == 1 and summary["cost"] == 0.0
    assert summary["charts"] == ["slots", "rejections", "capabilities", "workflows", "pass-rates"]
    assert summary["rollouts"] == 15  # on run 1's packages: 14 counted, 1 ended by an error
    assert out.stat().st_size == summary["bytes"]
    plain = synth("report", "--catalog", report_catalog.path, "--out", out, "--run", "1")
    funnel = summary["funnel"]
    assert plain.exit_code == 0
    per_slot = funnel["attempts"] / funnel["slots"]
    assert (f"run 1: {funnel['slots']} slots, {funnel['attempts']} attempts ({per_slot:.2f} per slot), "
            f"{funnel['accepted']} accepted; 15 rollouts") in plain.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--catalog", "{tmp}/none.duckdb"], "error: no catalog at"),
    (["--run", "7"], "error: no run 7 in"),
    (["--price-per-1k-prompt", "1"], "error: give both --price-per-1k-prompt and --price-per-1k-completion"),
    (["--out", "{tmp}"], "is a folder; pass an HTML file path"),
])
def test_mistakes_are_one_line(synth: Callable[..., CliResult], report_catalog: ReportCatalog, tmp_path: Path,
                               args: list[str], message: str) -> None:
    given = [a.format(tmp=tmp_path) for a in args]
    base = ["--catalog", str(report_catalog.path), "--out", str(tmp_path / "r.html")]
    result = synth("report", *base, *given)
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r.html").exists()


def test_a_report_on_an_import_run_says_where_its_rows_are(synth: Callable[..., CliResult], tmp_path: Path) -> None:
    catalog = tmp_path / "c.duckdb"
    assert synth("run", "--services", "claw", "-c", "information-synthesis", "-n", "2", "--catalog", catalog).exit_code == 0
    assert synth("export", "--format", "clawenvkit", "--catalog", catalog, "--out", tmp_path / "claw").exit_code == 0
    assert synth("import", "--format", "clawenvkit", tmp_path / "claw", "--catalog", catalog).exit_code == 0
    result = synth("report", "--catalog", catalog, "--out", tmp_path / "r.html", "--run", "2")
    assert result.exit_code == 2 and result.stderr.strip().count("\n") == 0
    assert "run 2 is an import" in result.stderr and "synth catalog stats --run 2" in result.stderr
    assert not (tmp_path / "r.html").exists()
