"""``synth report``'s figures and page (``pipeline.interop.report``), against counts taken
straight from the catalog with SQL. The page in a real browser: ``test_report_browser.py``."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from pipeline import Catalog
from pipeline.catalog.errors import CatalogError
from pipeline.interop.report import Prices, charts, gather, pass_rate_bins, render, write_report
from tests.interop.conftest import ReportCatalog


def _sql(path: Path, sql: str, params: list[object] | None = None) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("run", [None, 1, 2])
def test_funnel_and_rejections_match_the_rows(report_catalog: ReportCatalog, run: int | None) -> None:
    data = gather(Catalog.open(report_catalog.path, read_only=True), run)
    scope = "TRUE" if run is None else f"run = {run}"
    slots, attempts, accepted = _sql(report_catalog.path, "SELECT count(DISTINCT (run, slot)), count(*), "
                                     f"count(*) FILTER (WHERE status = 'accepted') FROM packages WHERE {scope}")[0]
    assert (data.funnel.slots, data.funnel.attempts, data.funnel.accepted) == (slots, attempts, accepted)
    assert data.funnel.attempts > data.funnel.slots or run == 2  # run 1's defects made repairs
    per_slot = _sql(report_catalog.path, "SELECT attempts, accepted, count(*) FROM (SELECT count(*) AS attempts, "
                    f"bool_or(status = 'accepted') AS accepted FROM packages WHERE {scope} GROUP BY run, slot) "
                    "GROUP BY ALL")
    assert sorted((s.attempts, s.accepted, s.slots) for s in data.funnel.by_attempts) == sorted(per_slot)
    assert sum(s.slots for s in data.funnel.by_attempts) == slots  # each slot once
    assert sum(s.attempts * s.slots for s in data.funnel.by_attempts) == attempts
    codes = dict(_sql(report_catalog.path, "SELECT f.code, count(DISTINCT p.row_id) FROM findings f JOIN packages p "
                      f"ON p.row_id = f.package_row WHERE p.status = 'rejected' AND f.kind = 'refusal' AND {scope} "
                      "GROUP BY f.code"))
    assert {r.code: r.packages for r in data.rejections} == codes
    assert (run == 2) == (not codes)
    mix = dict(_sql(report_catalog.path, f"SELECT capability, count(*) FROM packages WHERE {scope} GROUP BY ALL"))
    assert {m.name: m.accepted + m.rejected for m in data.capabilities} == mix
    assert sum(m.accepted for m in data.workflows) == accepted


def test_pass_rates_per_capability_and_model(report_catalog: ReportCatalog) -> None:
    groups = {(g.capability, g.model): g for g in gather(Catalog.open(report_catalog.path, read_only=True)).pass_rates}
    assert set(groups) == {("multi-turn", "m1"), ("multi-turn", "m2"), ("general", "m1")}
    m1 = groups[("multi-turn", "m1")]
    # 4 counted rollouts each: 0/4 … 4/4; the packages passed 3, 0 and 4; the errored rollout counts nowhere
    assert (m1.bins, m1.histogram) == (["0/4", "1/4", "2/4", "3/4", "4/4"], [1, 0, 0, 1, 1])
    assert (m1.packages, m1.samples, m1.errors, m1.unsolved, m1.always) == (3, 12, 1, 1, 1)
    assert m1.mean_pass_rate == pytest.approx((0.75 + 0 + 1) / 3)
    assert (groups[("multi-turn", "m2")].bins, groups[("multi-turn", "m2")].histogram) == (["0/2", "1/2", "2/2"],
                                                                                            [0, 1, 0])
    assert groups[("general", "m1")].histogram == [0, 1, 0]
    assert m1.prompt_tokens == 13 * 100 and m1.completion_tokens == 13 * 20


def test_a_run_reports_only_the_rollouts_on_its_packages(report_catalog: ReportCatalog) -> None:
    data = gather(Catalog.open(report_catalog.path, read_only=True), 2)
    assert [(g.capability, g.model, g.histogram) for g in data.pass_rates] == [("general", "m1", [0, 1, 0])]
    assert data.rollouts == 2


@pytest.mark.parametrize(("samples", "labels"), [
    ({1}, ["0/1", "1/1"]), ({4}, ["0/4", "1/4", "2/4", "3/4", "4/4"]),
    ({2, 4}, ["0/1", "1/4", "1/2", "3/4", "1/1"]),  # several k: every value one of them allows, once
    ({2, 3}, ["0/1", "1/3", "1/2", "2/3", "1/1"])])
def test_pass_rates_bin_at_the_values_k_samples_allow(samples: set[int], labels: list[str]) -> None:
    values, shown = pass_rate_bins(samples)
    assert shown == labels and values == sorted(set(values)) and len(values) == len(labels)


def test_the_page_is_one_file_with_plotly_once_and_no_outside_resource(report_catalog: ReportCatalog) -> None:
    data = gather(Catalog.open(report_catalog.path, read_only=True))
    page, charts = render(data)
    assert charts == ["slots", "rejections", "capabilities", "workflows", "pass-rates"]
    assert page.count("Plotly.newPlot(") == len(charts)
    assert len(re.findall(r"\* plotly\.js v\d", page)) == 1  # the library, inlined once
    assert not re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)=", page, re.I)
    for chart in charts:
        assert f'data-chart="{chart}"' in page and f'id="chart-{chart}"' in page
    assert re.search(r'data-figure="slots">\s*' + str(data.funnel.slots) + "<", page)
    assert "no price given" in page
    assert '"displayModeBar": false' in page  # no toolbar over the charts' titles


def test_counts_are_written_with_thousands_separators(report_catalog: ReportCatalog) -> None:
    data = gather(Catalog.open(report_catalog.path, read_only=True)).model_copy(
        update={"llm_calls": 1_234, "prompt_tokens": 1_234_567, "completion_tokens": 98_765})
    page, _ = render(data)
    for figure, shown in (("llm_calls", "1,234"), ("prompt_tokens", "1,234,567"), ("completion_tokens", "98,765")):
        assert re.search(rf'data-figure="{figure}">{shown}<', page)


def test_cost_is_shown_only_with_prices(report_catalog: ReportCatalog) -> None:
    data = gather(Catalog.open(report_catalog.path, read_only=True)).model_copy(
        update={"prompt_tokens": 12_000, "completion_tokens": 3_000})
    page, _ = render(data, Prices(prompt_per_1k=0.5, completion_per_1k=2.0))
    assert re.search(r'data-figure="cost">12\.0000<', page)  # 12 * 0.5 + 3 * 2.0
    assert "no price given" not in page


def test_without_rollouts_the_page_says_so(runs_catalog: Path) -> None:
    data = gather(Catalog.open(runs_catalog, read_only=True))
    page, charts = render(data)
    assert data.pass_rates == [] and "pass-rates" not in charts
    assert "No rollouts recorded" in page


def test_write_report_replaces_the_file_whole_and_refuses_a_folder_or_unknown_run(
        report_catalog: ReportCatalog, tmp_path: Path) -> None:
    reader = Catalog.open(report_catalog.path, read_only=True)
    out = tmp_path / "nested" / "report.html"
    out.parent.mkdir()
    out.write_text("old")
    summary = write_report(reader, out, 1)
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert summary.bytes == out.stat().st_size and summary.run == 1
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]  # no partial file left
    with pytest.raises(CatalogError, match="is a folder"):
        write_report(reader, tmp_path, 1)
    with pytest.raises(CatalogError, match="no run 9 in"):
        write_report(reader, tmp_path / "x.html", 9)
    assert not (tmp_path / "x.html").exists()


def test_a_cell_without_rollouts_says_so(report_catalog: ReportCatalog) -> None:
    """The grid has a cell per capability and model; general × m2 has no rollout, and says so."""
    figure = charts(gather(Catalog.open(report_catalog.path, read_only=True)))["pass-rates"]
    titles = [a.text for a in figure.layout.annotations if a.text != "no rollouts"]
    empty = [a for a in figure.layout.annotations if a.text == "no rollouts"]
    assert titles == ["general · m1", "general · m2", "multi-turn · m1", "multi-turn · m2"]
    assert len(empty) == 1 and (empty[0].xref, empty[0].yref) == ("x2 domain", "y2 domain")  # row 1, column 2


def test_the_audit_figures_appear_once_people_have_labelled(runs_catalog: Path, tmp_path: Path) -> None:
    from tests.conftest import copy_catalog

    path = copy_catalog(runs_catalog, tmp_path / "catalog.duckdb")
    page, _ = render(gather(Catalog.open(path, read_only=True)))
    assert "No labels:" in page and 'data-figure="acceptance-precision"' not in page
    accepted, refused = (_sql(path, f"SELECT row_id FROM packages WHERE run = 1 AND status = '{s}' AND package IS NOT NULL "
                                    "ORDER BY row_id LIMIT 2") for s in ("accepted", "rejected"))
    with Catalog.open(path) as writer:
        for who in ("ana", "ben"):
            writer.add_label(int(accepted[0][0]), "accept", who)
            writer.add_label(int(accepted[1][0]), "defective" if who == "ana" else "accept", who)
        writer.add_label(int(refused[0][0]), "defective", "ana")
    reader = Catalog.open(path, read_only=True)
    data = gather(reader)
    assert data.audit == reader.audit_stats()
    assert data.audit is not None and data.audit.labels == 5 and data.audit.agreement.method == "cohen"
    page, _ = render(data)
    precision = data.audit.acceptance.precision
    assert precision.value is not None and precision.low is not None
    assert re.search(rf'data-figure="acceptance-precision">{100 * precision.value:.1f}% <span class="note">'
                     rf'\[{100 * precision.low:.1f}, ', page)
    assert 'data-figure="labels">5<' in page and 'data-figure="kappa">' in page
    assert gather(reader, 2).audit is None  # run 2's rows are unlabelled
    assert write_report(reader, tmp_path / "r.html").audited_rows == 3
