"""The report page in a real headless browser (Debian's Chromium, ``tests/support/browser.py``):
it renders with no console error and no request beyond the file, every chart holds a drawn
Plotly plot, the slots and attempts it shows are the catalog's (each slot once: no funnel that
widens), pass rates stand at the values k samples allow, no toolbar covers a subplot title, and
counts carry thousands separators."""

from __future__ import annotations

import re
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


NUMBER = re.compile(r"(\d{1,3}(,\d{3})*|\d+\.\d+%?|\d+\.\d+)")
"""A number as the CLI writes it: thousands separated by commas, or a decimal (a rate)."""

OVERLAPS = """(chart) => {
  const shown = es => es.map(e => e.getBoundingClientRect()).filter(r => r.width > 0 && r.height > 0);
  const boxes = sel => shown([...chart.querySelectorAll(sel)]);
  const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const titles = shown([...chart.querySelectorAll('.annotation-text')].filter(e => e.textContent !== 'no rollouts'));
  const toolbar = boxes('.modebar, .modebar-btn');
  const plots = boxes('.subplot .bg, .nsewdrag');
  const outside = titles.filter(t => t.top < chart.getBoundingClientRect().top);
  return {titles: titles.length, toolbar: toolbar.length,
          covered: titles.filter(t => toolbar.some(b => meet(t, b)) || plots.some(p => meet(t, p))).length,
          outside: outside.length};
}"""
"""A page function over a chart: its subplot titles (not the "no rollouts" note inside an empty
plot), the toolbar's parts shown, the titles that meet the toolbar or a plot area, and the titles
cut off above the chart."""


@pytest.mark.parametrize("run", [None, 2])
def test_the_page_renders_every_chart_offline_with_the_catalogs_figures(
        report_catalog: ReportCatalog, tmp_path: Path, run: int | None) -> None:
    from tests.support.browser import load_report

    out = tmp_path / "report.html"
    summary = write_report(Catalog.open(report_catalog.path, read_only=True), out, run)
    expected = ["slots", "rejections", "capabilities", "workflows", "pass-rates"]
    assert summary.charts == (expected if run is None else [c for c in expected if c != "rejections"])
    with load_report(out) as load:
        page = load.page
        page.set_viewport_size({"width": 1200, "height": 900})  # a laptop's window
        assert load.errors == []
        assert load.requests == [out.resolve().as_uri()]  # plotly.js is inline: nothing else is fetched
        drawn = page.eval_on_selector_all(".report-chart", "cs => cs.map(c => [c.dataset.chart, "
                                          "c.querySelectorAll('.main-svg .trace').length])")
        assert [name for name, _ in drawn] == summary.charts
        assert all(traces > 0 for _, traces in drawn), drawn
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)  # for a person to look at

        # slots and attempts: the table, the chart's data and its drawn labels are the catalog's counts
        slots, attempts, accepted = _catalog_funnel(report_catalog.path, run)
        shown = [int(page.inner_text(f'[data-figure="{name}"]').replace(",", ""))
                 for name in ("slots", "attempts", "accepted")]
        assert shown == [slots, attempts, accepted]
        bars = page.evaluate("() => document.getElementById('chart-slots').data.map(t => "
                             "[t.name, Array.from(t.x), Array.from(t.y)])")
        assert [name for name, _, _ in bars] == ["accepted", "never accepted"]
        used = [int(label.split()[0]) for label in bars[0][1]]  # "1 attempt", "2 attempts" …
        assert used == list(range(1, len(used) + 1)) and all(x == bars[0][1] for _, x, _ in bars)
        assert sum(sum(y) for _, _, y in bars) == slots  # each slot once: the chart never widens
        assert sum(n * count for _, _, y in bars for n, count in zip(used, y, strict=True)) == attempts
        assert sum(bars[0][2]) == accepted
        labels = page.eval_on_selector_all("#chart-slots text.bartext", "ts => ts.map(t => t.textContent)")
        assert sum(int(label.replace(",", "")) for label in labels) == slots

        # pass rates: a bar for each value k counted rollouts allow, k + 1 of them
        histograms = page.evaluate("() => document.getElementById('chart-pass-rates').data.map(t => "
                                   "[Array.from(t.x), Array.from(t.y)])")
        assert sum(sum(y) for _, y in histograms) == (5 if run is None else 1)  # (package, model) pairs
        bins = {tuple(x) for x, _ in histograms if x}
        assert bins == ({("0/2", "1/2", "2/2"), ("0/4", "1/4", "2/4", "3/4", "4/4")} if run is None
                        else {("0/2", "1/2", "2/2")})
        drawn_bins = page.eval_on_selector_all("#chart-pass-rates .xaxislayer-above text", "ts => ts.map(t => t.textContent)")
        assert set(drawn_bins) == {label for x in bins for label in x}

        # no toolbar covers a subplot title, and no title is cut off or drawn over a plot
        seen = page.evaluate(OVERLAPS, page.query_selector("#chart-pass-rates"))
        assert seen["titles"] == (4 if run is None else 1)
        assert (seen["toolbar"], seen["covered"], seen["outside"]) == (0, 0, 0), seen
        page.hover("#chart-pass-rates .nsewdrag")  # Plotly shows its toolbar on hover, where it has one
        assert page.evaluate(OVERLAPS, page.query_selector("#chart-pass-rates"))["toolbar"] == 0

        # every count in the page's tables as the CLI writes it (1,234), and some above a thousand
        cells = page.eval_on_selector_all("td.n", "ts => ts.map(t => t.textContent.trim())")
        assert all(NUMBER.fullmatch(c) or c in ("–", "no price given") for c in cells), cells
        assert any("," in c for c in cells) == (run is None), cells  # the tokens of multi-turn · m1: 1,560
