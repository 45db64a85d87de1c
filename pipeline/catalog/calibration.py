"""Calibration from rollouts: how often agent models pass each package, read from the ``rollouts``
table (one row per job, package and sample; see ``core.rollouts.Rollout``).

What counts:

- a *sample* is one ``rollouts`` row whose ``finish_reason`` is not in ``core.rollouts.UNCOUNTED`` (``error``,
  ``server_timeout``, ``server_error``, ``malformed_reply``): a rollout the model
  server ended for good measures the server, not the model, so it counts nowhere (``COUNTED``).
  Samples of one model on one package from several jobs count together;
- a sample *passes* when its ``passed`` column is true (full marks, ``core.package.passes``;
  a broken safety rule zeroes the score);
- a package's *pass rate* for a model is passes / samples (``PASS_RATE``), its *mean score* the
  mean of the samples' scores;
- *pass@k* is the chance that at least one of k samples drawn without replacement from the n
  recorded passes: the unbiased estimator 1 - C(n-c, k) / C(n, k) for c passes (``pass_at_k``),
  defined for 1 <= k <= n only. Over a set of packages it is the mean of theirs; pass@1 is the
  pass rate;
- a package is *unsolved* (for a model, or for every model) when it has samples and none passes.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Literal

import duckdb
from pydantic import Field

from pipeline.catalog.errors import CatalogError
from pipeline.core.rollouts import UNCOUNTED
from pipeline.core.strict_model import StrictModel

COUNTED = f"r.finish_reason NOT IN ({', '.join(repr(reason) for reason in UNCOUNTED)})"
"""The rollouts rows that are samples (alias ``r``)."""
PASS_RATE = "count(*) FILTER (WHERE r.passed) / count(*)"
"""A group of samples' pass rate, as SQL (alias ``r``)."""
_PACKAGE_LABELS = ("(SELECT id, any_value(capability) AS capability, any_value(workflow) AS workflow "
                   "FROM packages WHERE id IS NOT NULL GROUP BY id)")
"""One capability and workflow per package id (every row of one id holds the same package)."""
_RESULTS_TYPE = '[{"id": "VARCHAR", "kind": "VARCHAR", "passed": "BOOLEAN"}]'


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate of pass@k from ``n`` samples of which ``c`` passed:
    1 - C(n-c, k) / C(n, k), computed as 1 - prod_{i=n-c+1}^{n} (1 - k/i), a product of numbers in
    [0, 1] that neither overflows nor loses precision for large n. 1.0 when n - c < k (every draw
    of k holds a pass). ``ValueError`` unless 0 <= c <= n and 1 <= k <= n."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


# --------------------------------------------------------------------------- results


class PackageCalibration(StrictModel):
    """One model's samples on one package."""

    package_id: str
    model: str
    capability: str | None
    """From the package's catalog row (None when the catalog holds no row of that id)."""
    workflow: str | None
    samples: int
    """n: rollouts counted (``finish_reason`` not in ``core.rollouts.UNCOUNTED``)."""
    passes: int
    """c: samples that passed."""
    pass_rate: float
    mean_score: float
    k: int
    """The k of ``pass_at_k``."""
    pass_at_k: float | None
    """pass@k (``calibration.pass_at_k``); None when the package has fewer than k samples."""


class CalibrationGroup(StrictModel):
    """One model on the packages of one capability."""

    capability: str | None
    model: str
    packages: int
    """Packages with at least one sample."""
    samples: int
    mean_pass_rate: float
    """The mean of the packages' pass rates; also their mean pass@1."""
    mean_score: float
    """The mean of the packages' mean scores."""
    k: int
    pass_at_k: float | None
    """The mean pass@k of the packages with at least k samples; None when none has."""
    packages_at_k: int
    """Packages with at least k samples (those ``pass_at_k`` is the mean of)."""
    unsolved: int
    """Packages no sample passes."""


class FailedCheck(StrictModel):
    """How often one check (or safety rule) failed in the samples of unsolved packages."""

    rule: Literal["check", "safety"]
    kind: str
    id: str | None = None
    """The check's id; None in a count over every unsolved package (ids are per package)."""
    failures: int
    """Samples in which it failed."""
    packages: int = 1
    """Unsolved packages with at least one such failure."""


class UnsolvedPackage(StrictModel):
    """A package with samples, none of which passes: too hard, or a grader that fails correct agents."""

    package_id: str
    capability: str | None
    workflow: str | None
    models: list[str]
    samples: int
    best_score: float
    failed_checks: list[FailedCheck]
    """Its checks and safety rules that failed, most failures first."""


class UnsolvedReport(StrictModel):
    """``Catalog.unsolved``: the unsolved packages (of ``model``, or of every model: no sample of
    any model passes) and, over all of them, the kinds of check that failed most."""

    model: str | None
    rolled_out: int
    """Packages with at least one sample."""
    unsolved: int
    """Unsolved packages in all (``packages`` may list fewer: ``limit``)."""
    packages: list[UnsolvedPackage]
    """Ordered by capability, then id."""
    by_kind: list[FailedCheck] = Field(default_factory=list)
    """Per check kind over every unsolved package: failures and packages, most failures first."""


@dataclass(frozen=True)
class PassBand:
    """Packages whose pass rate for ``model`` lies in [``low``, ``high``] (bounds included)."""

    low: float
    high: float
    model: str

    def __post_init__(self) -> None:
        if not (0.0 <= self.low <= 1.0 and 0.0 <= self.high <= 1.0):
            raise CatalogError(f"--pass-band {self.low:g}:{self.high:g}: pass rates lie in [0, 1]; "
                               "pass bounds between 0 and 1, e.g. 0.2:0.8")
        if self.low > self.high:
            raise CatalogError(f"--pass-band {self.low:g}:{self.high:g}: the low bound is above the high one; "
                               f"pass LOW:HIGH, e.g. {self.high:g}:{self.low:g}")

    @classmethod
    def parse(cls, text: str, model: str | None) -> PassBand:
        """``LOW:HIGH`` (e.g. ``0.2:0.8``) for ``model``; ``CatalogError`` for anything else."""
        if not model:
            raise CatalogError(f"--pass-band {text} needs --model M: pass rates are per model")
        low, sep, high = text.partition(":")
        try:
            if not sep:
                raise ValueError
            return cls(float(low), float(high), model)
        except ValueError:
            raise CatalogError(f"--pass-band {text!r} is not LOW:HIGH; pass two numbers in [0, 1], "
                               "e.g. --pass-band 0.2:0.8") from None

    def condition(self) -> str:
        """A SQL boolean over ``packages``: the row's id is in the band. Built from the band's own
        values (numbers, and the model as a quoted literal), never from user SQL."""
        model = "'" + self.model.replace("'", "''") + "'"
        return (f"id IN (SELECT r.package_id FROM rollouts AS r WHERE {COUNTED} AND r.model = {model} "
                f"GROUP BY r.package_id HAVING {PASS_RATE} BETWEEN {self.low!r} AND {self.high!r})")


# --------------------------------------------------------------------------- queries


def models(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The models with at least one sample, by name."""
    return [r[0] for r in con.execute(f"SELECT DISTINCT r.model FROM rollouts AS r WHERE {COUNTED} ORDER BY 1").fetchall()]


def check_band(con: duckdb.DuckDBPyConnection, band: PassBand) -> None:
    """``CatalogError`` when ``band.model`` has no sample in the catalog."""
    if band.model not in (known := models(con)):
        raise CatalogError(f"--model {band.model}: no rollouts of that model in the catalog; "
                           + (f"models with rollouts: {', '.join(known)}" if known else
                              "run `synth rollout --model M` first"))


def _scope(model: str | None, run: int | None) -> tuple[str, list[Any]]:
    terms: list[str] = [COUNTED]
    params: list[Any] = []
    if model is not None:
        terms.append("r.model = ?")
        params.append(model)
    if run is not None:
        terms.append("r.package_id IN (SELECT id FROM packages WHERE run = ?)")
        params.append(run)
    return " AND ".join(terms), params


def calibration(con: duckdb.DuckDBPyConnection, model: str | None = None, k: int | None = None,
                run: int | None = None) -> list[PackageCalibration]:
    """Per package and model (of ``model`` only, when given; of the packages of run ``run``, when
    given): samples, passes, pass rate, mean score and pass@k, by model then package id. ``k``
    None: per model, the fewest samples any of its packages has (so every package has a pass@k)."""
    if k is not None and k < 1:
        raise CatalogError(f"--k {k}: pass@k needs k >= 1")
    where, params = _scope(model, run)
    rows = con.execute(
        "SELECT r.package_id, r.model, any_value(p.capability), any_value(p.workflow), count(*), "
        f"count(*) FILTER (WHERE r.passed), avg(r.score) FROM rollouts AS r LEFT JOIN {_PACKAGE_LABELS} AS p "
        f"ON p.id = r.package_id WHERE {where} GROUP BY r.package_id, r.model ORDER BY r.model, r.package_id",
        params).fetchall()
    fewest: dict[str, int] = {}
    for row in rows:
        fewest[row[1]] = min(fewest.get(row[1], row[4]), row[4])
    out = []
    for package_id, name, capability, workflow, n, c, mean in rows:
        kk = k if k is not None else fewest[name]
        out.append(PackageCalibration(package_id=package_id, model=name, capability=capability, workflow=workflow,
                                      samples=n, passes=c, pass_rate=c / n, mean_score=float(mean), k=kk,
                                      pass_at_k=pass_at_k(n, c, kk) if kk <= n else None))
    return out


def groups(packages: list[PackageCalibration]) -> list[CalibrationGroup]:
    """``packages`` summed per capability and model, by capability then model."""
    by: dict[tuple[str, str], list[PackageCalibration]] = defaultdict(list)
    for p in packages:
        by[(p.capability or "", p.model)].append(p)
    out = []
    for (_, name), rows in sorted(by.items()):
        at_k = [p.pass_at_k for p in rows if p.pass_at_k is not None]
        out.append(CalibrationGroup(
            capability=rows[0].capability, model=name, packages=len(rows), samples=sum(p.samples for p in rows),
            mean_pass_rate=sum(p.pass_rate for p in rows) / len(rows),
            mean_score=sum(p.mean_score for p in rows) / len(rows), k=rows[0].k,
            pass_at_k=sum(at_k) / len(at_k) if at_k else None, packages_at_k=len(at_k),
            unsolved=sum(p.passes == 0 for p in rows)))
    return out


def unsolved(con: duckdb.DuckDBPyConnection, model: str | None = None, limit: int | None = None) -> UnsolvedReport:
    """The packages with samples (of ``model``, or of any model) none of which passes, with the
    checks and safety rules that failed in their samples (from each row's ``checks`` and ``safety``
    results: a result with ``passed`` false; a judge not evaluated is no failure); at most ``limit``
    packages listed, ``by_kind`` over all of them."""
    where, params = _scope(model, None)
    counted = f"SELECT * FROM rollouts AS r WHERE {where}"
    rolled_out = int(con.execute(f"SELECT count(DISTINCT package_id) FROM ({counted})", params).fetchone()[0])  # type: ignore[index]
    found = con.execute(
        f"WITH c AS ({counted}) SELECT c.package_id, any_value(p.capability) AS capability, any_value(p.workflow), "
        "list(DISTINCT c.model ORDER BY c.model), count(*), max(c.score) "
        f"FROM c LEFT JOIN {_PACKAGE_LABELS} AS p ON p.id = c.package_id GROUP BY c.package_id "
        "HAVING NOT bool_or(c.passed) ORDER BY capability NULLS LAST, c.package_id", params).fetchall()
    failed = con.execute(
        f"WITH c AS ({counted}), u AS (SELECT package_id FROM c GROUP BY package_id HAVING NOT bool_or(passed)) "
        + " UNION ALL ".join(
            f"SELECT c.package_id, '{rule}' AS rule, x.kind, x.id, count(*) AS failures "
            f"FROM c, unnest(from_json(c.{column}, '{_RESULTS_TYPE}')) AS t(x) "
            "WHERE c.package_id IN (SELECT package_id FROM u) AND x.passed = false GROUP BY ALL"
            for rule, column in (("check", "checks"), ("safety", "safety")))
        + " ORDER BY failures DESC, rule, kind, id", params).fetchall()
    per_package: dict[str, list[FailedCheck]] = defaultdict(list)
    kind_failures: dict[tuple[Literal["check", "safety"], str], int] = defaultdict(int)
    kind_packages: dict[tuple[str, str], set[str]] = defaultdict(set)
    for package_id, rule, kind, check_id, failures in failed:
        per_package[package_id].append(FailedCheck(rule=rule, kind=kind, id=check_id, failures=failures))
        kind_failures[(rule, kind)] += failures
        kind_packages[(rule, kind)].add(package_id)
    listed = found if limit is None else found[:limit]
    return UnsolvedReport(
        model=model, rolled_out=rolled_out, unsolved=len(found),
        packages=[UnsolvedPackage(package_id=pid, capability=cap, workflow=wf, models=names, samples=n,
                                  best_score=float(best), failed_checks=per_package.get(pid, []))
                  for pid, cap, wf, names, n, best in listed],
        by_kind=sorted((FailedCheck(rule=rule, kind=kind, failures=f,
                                    packages=len(kind_packages[(rule, kind)]))
                        for (rule, kind), f in kind_failures.items()),
                       key=lambda fc: (-fc.failures, fc.rule, fc.kind)))
