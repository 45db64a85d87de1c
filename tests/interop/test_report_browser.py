"""The report page in a real headless browser (Debian's Chromium, ``tests/support/browser.py``):
it renders with no console error and no request beyond the file, every chart holds a drawn
Plotly plot, and the funnel it shows is the catalog's."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pipeline import Catalog
from pipeline.interop.report import write_report
from tests.interop.conftest import ReportCatalog

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("chromium")]


def _catalog_funnel(path: Path, run: int | None) -> list[int]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        row = con.execute("SELECT count(DISTINCT (run, slot)), count(*), count(*) FILTER (WHERE status = 'accepted') "
                          "FROM packages" + ("" if run is None else f" WHERE run = {run}")).fetchall()[0]
    finally:
        con.close()
    return [int(v) for v in row]


@pytest.mark.parametrize("run", [None, 2])
def test_the_page_renders_every_chart_offline_with_the_catalogs_funnel(
        report_catalog: ReportCatalog, tmp_path: Path, run: int | None) -> None:
    from tests.support.browser import load_report

    out = tmp_path / "report.html"
    summary = write_report(Catalog.open(report_catalog.path, read_only=True), out, run)
    expected = ["funnel", "rejections", "capabilities", "workflows", "pass-rates"]
    assert summary.charts == (expected if run is None else [c for c in expected if c != "rejections"])
    with load_report(out) as load:
        page = load.page
        assert load.errors == []
        assert load.requests == [out.resolve().as_uri()]  # plotly.js is inline: nothing else is fetched
        drawn = page.eval_on_selector_all(".report-chart", "cs => cs.map(c => [c.dataset.chart, "
                                          "c.querySelectorAll('.main-svg .trace').length])")
        assert [name for name, _ in drawn] == summary.charts
        assert all(traces > 0 for _, traces in drawn), drawn
        funnel = _catalog_funnel(report_catalog.path, run)
        shown = [int(page.inner_text(f'[data-figure="{name}"]')) for name in ("slots", "attempts", "accepted")]
        plotted = page.evaluate("() => Array.from(document.getElementById('chart-funnel').data[0].x)")
        assert shown == plotted == funnel
        drawn_labels = page.eval_on_selector_all("#chart-funnel text.bartext", "ts => ts.map(t => t.textContent)")
        assert drawn_labels == [str(v) for v in funnel]
        histograms = page.evaluate("() => document.getElementById('chart-pass-rates').data.map(t => Array.from(t.y))")
        assert sum(map(sum, histograms)) == (5 if run is None else 1)  # (package, model) pairs with counted rollouts
