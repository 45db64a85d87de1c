"""``synth report``: one self-contained HTML page of a run (or the whole catalog) a person opens in
a browser, with its charts drawn by Plotly.

What the page shows, each figure read through the catalog API (``Catalog.stats``,
``Catalog.run_counts``, ``Catalog.calibration`` and ``Catalog.rollout_usage``):

- slots and attempts of generated rows: *slots* (the (run, slot) pairs with at least one
  attempt), *attempts* (rows) and *accepted* rows, and the slots by the attempts each used and
  whether it ended accepted (a slot is tried again until accepted, so attempts outnumber slots:
  not a funnel); rows of import runs are in none of them;
- rejections: rejected rows per refusal code (``RejectionCount.packages``);
- the capability and workflow (template) mix: accepted and rejected rows of each;
- the generator's LLM use (``llm_calls``): calls and tokens, and their cost when both prices per
  1,000 tokens are given (else the page says "no price given");
- where rollouts exist (table ``rollouts``), per capability and model, a histogram of the
  packages' pass rates (a package's pass rate: the share of its counted rollouts that passed; a
  rollout ended by a model-server error counts in none), one bar per value a pass rate can take
  (k counted rollouts allow k + 1: 0/k … k/k), and a table of the same groups;
- where people have labelled rows (``synth audit``), the verifier against people
  (``Catalog.audit_stats`` of the run's rows, or of every row): agreement between annotators and
  the precision and recall of acceptance, of refusal and per reason code, with 95% Wilson intervals.

Counts are written with thousands separators, as the CLI writes them (``1,234``); the charts
carry no Plotly toolbar, so nothing covers their titles.

The page carries plotly.js once, inline: it needs no network. The file is written beside ``out``
under a temporary name and renamed over it once whole.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from contextlib import suppress
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from pipeline.catalog.audit import AuditStats
from pipeline.catalog.calibration import PackageCalibration
from pipeline.catalog.errors import CatalogError
from pipeline.catalog.queries import RejectionCount, RolloutUsage, RunInfo, SlotAttempts, is_import
from pipeline.catalog.store import Catalog
from pipeline.core.strict_model import StrictModel
from pipeline.core.wording import counted

if TYPE_CHECKING:
    from plotly.graph_objects import Figure

NO_CAPABILITY = "(no catalog row)"
"""The capability label of rollouts whose package id no catalog row holds."""
TEMPLATE = Path(__file__).with_name("report.html.j2")


# --------------------------------------------------------------------------- figures


class Prices(StrictModel):
    """What 1,000 tokens cost, in one currency: ``prompt_per_1k`` and ``completion_per_1k``."""

    prompt_per_1k: float = Field(ge=0)
    completion_per_1k: float = Field(ge=0)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.prompt_per_1k + completion_tokens * self.completion_per_1k) / 1000


class Funnel(StrictModel):
    """Generated rows: ``slots`` with at least one attempt, ``attempts`` (rows), ``accepted`` rows
    (one per accepted slot), and the slots by the attempts each used (``by_attempts``)."""

    slots: int
    attempts: int
    accepted: int
    by_attempts: list[SlotAttempts] = Field(default_factory=list)

    @property
    def attempts_per_slot(self) -> float | None:
        return self.attempts / self.slots if self.slots else None


class Mix(StrictModel):
    """Accepted and rejected generated rows of one capability or one workflow."""

    name: str
    accepted: int
    rejected: int


class PassRateGroup(StrictModel):
    """One model on the packages of one capability: ``packages`` with a counted rollout,
    ``samples`` (counted rollouts), ``errors`` (rollouts ended by an error), ``histogram`` (packages
    per pass rate, one count per ``bins`` label: the values ``pass_rate_bins`` gives), ``mean_pass_rate``
    (mean of the packages'), ``unsolved`` (pass rate 0) and ``always`` (pass rate 1), and the rollouts' tokens."""

    capability: str
    model: str
    packages: int
    samples: int
    errors: int
    bins: list[str]
    histogram: list[int]
    mean_pass_rate: float | None
    unsolved: int
    always: int
    prompt_tokens: int
    completion_tokens: int


class ReportData(StrictModel):
    """Everything the page shows, of run ``run`` (None: the whole catalog, ``runs`` runs)."""

    catalog: str
    run: RunInfo | None
    runs: int
    funnel: Funnel
    rejections: list[RejectionCount]
    capabilities: list[Mix]
    workflows: list[Mix]
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    rollouts: int
    pass_rates: list[PassRateGroup]
    audit: AuditStats | None = None
    """People's labels against the verifier (None: no row of the report is labelled)."""


class ReportSummary(StrictModel):
    """What ``write_report`` wrote: the file, its size, the charts on it (their names, in page
    order), the funnel, rollouts counted, and the generator's cost (None: no price given)."""

    path: str
    bytes: int
    run: int | None
    funnel: Funnel
    charts: list[str]
    rollouts: int
    cost: float | None
    audited_rows: int = 0
    """Rows people labelled, whose figures the page shows."""


def pass_rate_bins(samples: set[int]) -> tuple[list[Fraction], list[str]]:
    """The values a pass rate can take when packages have ``samples`` counted rollouts each (k of
    them allow the k + 1 values 0/k … k/k; several k, the union), in order, and their labels:
    ``i/k`` for one k, else the value as a reduced fraction (``1/2``, ``0/1``, ``1/1``)."""
    if len(samples) == 1:
        [k] = samples
        return [Fraction(i, k) for i in range(k + 1)], [f"{i}/{k}" for i in range(k + 1)]
    values = sorted({Fraction(i, k) for k in samples for i in range(k + 1)})
    return values, [f"{v.numerator}/{v.denominator}" for v in values]


def pass_rate_groups(packages: list[PackageCalibration], usage: list[RolloutUsage]) -> list[PassRateGroup]:
    """Per capability and model, sorted by both: the packages' pass rates (``packages``, from
    ``calibration.calibration``: counted rollouts only) and the rollouts' errors and tokens
    (``usage``)."""
    groups: dict[tuple[str, str], list[PackageCalibration]] = defaultdict(list)
    for p in packages:
        groups[(p.capability or NO_CAPABILITY, p.model)].append(p)
    used = {(u.capability or NO_CAPABILITY, u.model): u for u in usage}
    out = []
    for capability, model in sorted({*groups, *used}):
        members = groups.get((capability, model), [])
        spent = used.get((capability, model))
        values, labels = pass_rate_bins({m.samples for m in members})
        rates = Counter(Fraction(m.passes, m.samples) for m in members)
        out.append(PassRateGroup(
            capability=capability, model=model, packages=len(members), samples=sum(m.samples for m in members),
            errors=spent.errors if spent else 0, bins=labels, histogram=[rates[v] for v in values],
            mean_pass_rate=sum(m.pass_rate for m in members) / len(members) if members else None,
            unsolved=sum(m.passes == 0 for m in members), always=sum(m.passes == m.samples for m in members),
            prompt_tokens=spent.prompt_tokens if spent else 0,
            completion_tokens=spent.completion_tokens if spent else 0))
    return out


def gather(catalog: Catalog, run: int | None = None) -> ReportData:
    """The page's figures, of run ``run`` or of the whole catalog. ``CatalogError`` if there is no
    run ``run``, or if it is an import (the page is about generation: `catalog stats --run` covers
    an import's rows)."""
    stats = catalog.stats(run)
    if run is not None and is_import(catalog.runs(run)[0].generator):
        raise CatalogError(f"run {run} is an import, not a generation run: `synth report` shows how runs generate; "
                           f"`synth catalog stats --run {run}` shows what the import holds")
    slots = sum(r.slots for r in catalog.run_counts()
                if (run is None or r.id == run) and not is_import(r.generator))
    capabilities: dict[str, Counter[str]] = defaultdict(Counter)
    workflows: dict[str, Counter[str]] = defaultdict(Counter)
    for row in stats.by_workflow:
        for mix, name in ((capabilities, row.capability), (workflows, row.workflow)):
            mix[name or "(none)"].update(accepted=row.accepted, rejected=row.rejected)
    usage = catalog.rollout_usage(run)
    return ReportData(
        catalog=str(catalog.path), run=catalog.runs(run)[0] if run is not None else None, runs=stats.runs,
        funnel=Funnel(slots=slots, attempts=stats.packages, accepted=stats.accepted,
                      by_attempts=catalog.slot_attempts(run)),
        rejections=stats.rejections,
        capabilities=[Mix(name=k, accepted=v["accepted"], rejected=v["rejected"]) for k, v in sorted(capabilities.items())],
        workflows=[Mix(name=k, accepted=v["accepted"], rejected=v["rejected"]) for k, v in sorted(workflows.items())],
        llm_calls=stats.llm_calls, prompt_tokens=stats.prompt_tokens, completion_tokens=stats.completion_tokens,
        rollouts=sum(u.rollouts for u in usage), pass_rates=pass_rate_groups(catalog.calibration(run=run), usage),
        audit=audit_figures(catalog, run))


def audit_figures(catalog: Catalog, run: int | None) -> AuditStats | None:
    """The audit's figures of run ``run``'s rows (None: every row), or None when people labelled
    none of them."""
    if not catalog.audit_consensus():
        return None
    stats = catalog.audit_stats(None if run is None else f"run = {int(run)}")
    return stats if stats.labelled_rows else None


# --------------------------------------------------------------------------- charts


def charts(data: ReportData) -> dict[str, Figure]:
    """The page's charts by name, in page order; a chart with nothing to show is left out."""
    import plotly.graph_objects as go

    out: dict[str, Figure] = {}
    if data.funnel.attempts:
        out["slots"] = _slots(data.funnel)
    if data.rejections:
        rows = list(reversed(data.rejections))  # most frequent at the top
        out["rejections"] = go.Figure(go.Bar(
            x=[r.packages for r in rows], y=[r.code for r in rows], orientation="h",
            hovertext=[r.description for r in rows], marker_color="#c0392b"),
            layout={"height": _bars_height(len(rows))})
        out["rejections"].update_xaxes(**count_axis(max(r.packages for r in rows)))
    for name, mix in (("capabilities", data.capabilities), ("workflows", data.workflows)):
        if mix:
            out[name] = _stacked(mix)
    if data.pass_rates:
        out["pass-rates"] = _histograms(data.pass_rates)
    for figure in out.values():
        figure.update_layout(margin={"l": 20, "r": 20, "t": 40, "b": 40}, template="plotly_white", separators=".,")
        figure.update_yaxes(automargin=True)
    return out


def _slots(funnel: Funnel) -> Figure:
    """Slots by the attempts each used (one bar each: 1 attempt, 2 attempts …), stacked by whether
    the slot ended accepted; the bars add up to the slots, each slot counted once."""
    import plotly.graph_objects as go

    most = max((s.attempts for s in funnel.by_attempts), default=0)
    labels = [counted(n, "attempt") for n in range(1, most + 1)]
    figure = go.Figure([
        go.Bar(name=name, x=labels, marker_color=colour, texttemplate="%{y:,}", textposition="inside",
               y=[sum(s.slots for s in funnel.by_attempts if s.attempts == n and s.accepted == accepted)
                  for n in range(1, most + 1)])
        for name, accepted, colour in (("accepted", True, "#27ae60"), ("never accepted", False, "#c0392b"))])
    figure.update_layout(barmode="stack", height=320, xaxis_title="attempts the slot used",
                         yaxis_title="slots")
    figure.update_yaxes(**count_axis(max(sum(trace.y) for trace in figure.data)))
    return figure


def count_axis(most: int) -> dict[str, Any]:
    """Plotly axis settings for counts up to ``most``: thousands separated by commas (``1,234``),
    from 0, and a tick at each whole number while there are few (no ``0.5`` of a package)."""
    return {"tickformat": ",", "rangemode": "tozero", **({"dtick": 1} if most < 5 else {})}


def _bars_height(bars: int) -> int:
    """Pixels for a chart of ``bars`` horizontal bars: room for each label, at least 320."""
    return max(320, 28 * bars + 120)


def _stacked(mix: list[Mix]) -> Figure:
    """Accepted and rejected rows per name, stacked horizontal bars."""
    import plotly.graph_objects as go

    rows = list(reversed(mix))  # first name at the top
    names = [m.name for m in rows]
    figure = go.Figure([go.Bar(name="accepted", y=names, x=[m.accepted for m in rows], orientation="h",
                               marker_color="#27ae60"),
                        go.Bar(name="rejected", y=names, x=[m.rejected for m in rows], orientation="h",
                               marker_color="#c0392b")])
    figure.update_layout(barmode="stack", height=_bars_height(len(rows)))
    figure.update_xaxes(**count_axis(max(m.accepted + m.rejected for m in mix)))
    return figure


def _histograms(groups: list[PassRateGroup]) -> Figure:
    """A grid of pass-rate histograms: a row per capability, a column per model."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    capabilities = sorted({g.capability for g in groups})
    models = sorted({g.model for g in groups})
    cells = {(g.capability, g.model): g for g in groups}
    figure = make_subplots(rows=len(capabilities), cols=len(models),
                           subplot_titles=[f"{c} · {m}" for c in capabilities for m in models],
                           vertical_spacing=min(0.12, 0.4 / len(capabilities)))
    for i, capability in enumerate(capabilities, start=1):
        for j, model in enumerate(models, start=1):
            group = cells.get((capability, model))
            shown = group if group is not None and group.packages else None
            figure.add_trace(go.Bar(x=shown.bins if shown else [], y=shown.histogram if shown else [], name=model,
                                    showlegend=False, marker_color="#2e86c1"), row=i, col=j)
            if shown is None:  # say so, rather than draw an empty plot
                figure.add_annotation(text="no rollouts", showarrow=False, x=0.5, y=0.5, xref="x domain",
                                      yref="y domain", row=i, col=j)
                figure.update_yaxes(range=[0, 1], showticklabels=False, row=i, col=j)
                figure.update_xaxes(showticklabels=False, row=i, col=j)
            else:
                figure.update_yaxes(**count_axis(max(shown.histogram)), row=i, col=j)
    figure.update_xaxes(type="category", title_text="passed of counted rollouts", row=len(capabilities))
    figure.update_yaxes(title_text="packages", col=1)
    figure.update_layout(height=240 * len(capabilities) + 100)
    return figure


# --------------------------------------------------------------------------- page


def render(data: ReportData, prices: Prices | None = None) -> tuple[str, list[str]]:
    """The page's HTML and the names of its charts, in page order."""
    import pipeline
    from pipeline.interop.html_pages import html_environment

    figures = charts(data)
    html = {name: figure.to_html(full_html=False, include_plotlyjs=index == 0, div_id=f"chart-{name}",
                                 config={"displayModeBar": False, "responsive": True})
            for index, (name, figure) in enumerate(figures.items())}
    page = html_environment().get_template(TEMPLATE.name).render(
        data=data, charts=html, prices=prices, version=pipeline.__version__,
        cost=prices.cost(data.prompt_tokens, data.completion_tokens) if prices else None,
        created=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))
    return page, list(figures)


def write_report(catalog: Catalog, out: Path | str, run: int | None = None,
                 prices: Prices | None = None) -> ReportSummary:
    """Write the report of run ``run`` (None: the whole catalog) to ``out``, atomically.
    ``CatalogError`` if there is no run ``run`` or ``out`` cannot be written."""
    out = Path(out)
    if out.is_dir() or out.name in ("", ".", ".."):
        raise CatalogError(f"--out {out} is a folder; pass an HTML file path such as {out / 'report.html'}")
    data = gather(catalog, run)
    page, names = render(data, prices)
    partial = out.with_name(f".{out.name}.partial")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(page, encoding="utf-8")
        os.replace(partial, out)
    except OSError as exc:
        with suppress(OSError):
            partial.unlink(missing_ok=True)
        raise CatalogError(f"cannot write {out}: {exc.strerror or exc}; pass --out in a folder you can write") from exc
    return ReportSummary(path=str(out), bytes=out.stat().st_size, run=run, funnel=data.funnel, charts=names,
                         rollouts=data.rollouts,
                         cost=prices.cost(data.prompt_tokens, data.completion_tokens) if prices else None,
                         audited_rows=data.audit.labelled_rows if data.audit else 0)

