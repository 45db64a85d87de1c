"""People's judgement of packages, and how right the verifier is by it (``synth audit``).

Three parts, each a function of an open catalog connection that ``Catalog`` wraps:

- **labels** (table ``audit_labels``, schema 7): an annotator says of one package row ``accept``,
  ``defective`` (optionally with the reason code that names the defect) or ``unsure``. Labels are
  appended, never changed; an annotator's latest label of a row is the one that counts
  (``audit_latest``), and a row's ``audit_label`` is the majority of them (``audit_consensus``).
- **the queue** (``queue``): what people should label. The population is every row with a package
  (a generation failure has nothing to judge), cut in disjoint strata: ``review`` (every row with
  a review note, or a finding whose reader did not agree: taken whole), ``accepted`` rows by
  capability × workflow × service profile (a stratified sample of ``sample`` rows in all), and
  ``refused`` rows by their first refusal code (``refusals`` rows per code). Within a stratum the
  rows drawn are those with the smallest ``md5(seed:row)``: reproducible for a seed, and stable as
  the catalog grows (a new row enters a sample only by displacing one). Each item's sampling
  weight is its stratum's size over the rows drawn from it.
- **the figures** (``stats``): agreement between annotators (Cohen's kappa for two, Fleiss' for
  more), and the verifier's precision and recall per reason code and for acceptance as a whole,
  estimated from the rows people decided (consensus ``accept`` or ``defective``), each weighted
  by its stratum's size over the decided rows in it (post-stratification: the weights hold for any
  mix of queue items and rows labelled on their own), with 95% Wilson intervals over Kish's
  effective sample size (``estimates.py``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, get_args

import duckdb
from pydantic import Field

from pipeline.catalog.errors import CatalogError
from pipeline.catalog.estimates import Estimate, cohen_kappa, fleiss_kappa, weighted_share
from pipeline.catalog.guard import parse_where
from pipeline.catalog.selection import SELECTABLE
from pipeline.core.codes import DESCRIPTIONS, Code
from pipeline.core.strict_model import StrictModel

Label = Literal["accept", "defective", "unsure"]
LABELS: tuple[str, ...] = get_args(Label)
Part = Literal["review", "accepted", "refused"]
Reason = Literal["review", "disagreement", "accepted", "refused"]

DEFAULT_SAMPLE = 100
"""Accepted rows ``queue`` samples when not told."""
DEFAULT_REFUSALS = 5
"""Refused rows ``queue`` samples per first refusal code when not told."""
MAX_ANNOTATOR = 100
"""Characters an annotator's name may have."""


class AuditLabel(StrictModel):
    """One label an annotator gave one package row (a row of ``audit_labels``)."""

    id: int
    run: int
    """The run of the row labelled."""
    package_row: int
    """The row labelled (``packages.row_id``)."""
    package_id: str | None
    annotator: str
    created: datetime
    label: Label
    """``accept``: the package is right as it stands; ``defective``: it is not; ``unsure``: the
    annotator cannot tell (counted in agreement, in no precision or recall)."""
    code: str | None
    """For ``defective`` (or ``unsure``), the reason code naming the defect, when the annotator names one."""
    comment: str | None


class QueueItem(StrictModel):
    """One row to label, why it is in the queue, and what it stands for."""

    row: int
    package_id: str | None
    run: int
    reason: Reason
    """``review``: a review note; ``disagreement``: a reader did not agree with a reading the
    verifier made; ``accepted`` / ``refused``: drawn in the sample of its stratum."""
    stratum: str
    weight: float
    """Rows of the population this item stands for: its stratum's size over the rows drawn from it."""
    status: str
    """The verifier's decision: ``accepted`` or ``rejected``."""
    codes: list[str]
    """Refusal codes, in verdict order."""
    review_codes: list[str]
    capability: str | None
    workflow: str | None
    profile: str
    request: str | None
    annotators: list[str]
    """Who has labelled this row so far."""


class Stratum(StrictModel):
    name: str
    part: Part
    size: int
    """Rows of the population in it."""
    sampled: int
    """Rows the queue draws from it."""


class AuditQueue(StrictModel):
    """The sampling plan and its items: review rows first, then the accepted sample, then refusals."""

    seed: int
    sample: int
    refusals: int
    where: str | None
    population: int
    """Rows with a package (under ``where``)."""
    strata: list[Stratum]
    items: list[QueueItem]
    hidden: int = 0
    """Items left out because ``annotator`` has labelled them already."""


class PairAgreement(StrictModel):
    first: str
    second: str
    items: int
    """Rows both labelled."""
    observed: float | None
    """Share of those rows given the same label."""
    kappa: float | None
    """Cohen's kappa of the two."""


class Agreement(StrictModel):
    """How much annotators agree, over the rows labelled by two or more (latest labels)."""

    method: Literal["cohen", "fleiss"] | None
    """``cohen`` when exactly two annotators labelled rows in common, ``fleiss`` for more; None
    when no row has two labels."""
    kappa: float | None
    items: int
    observed: float | None
    """Share of agreeing annotator pairs over those rows (raw agreement)."""
    annotators: int
    pairs: list[PairAgreement] = Field(default_factory=list)
    """Cohen's kappa of each pair of annotators with rows in common."""


class Accuracy(StrictModel):
    precision: Estimate
    recall: Estimate


class CodeAccuracy(StrictModel):
    """The verifier's accuracy on one reason code."""

    code: str
    description: str
    precision: Estimate
    """Of the rows refused with this code, the share people find defective."""
    recall: Estimate
    """Of the rows people find defective with this code, the share the verifier refuses."""
    recall_code: Estimate
    """Of those, the share it refuses with this very code."""


class Disagreement(StrictModel):
    """A row where people and the verifier decide differently."""

    row: int
    package_id: str | None
    status: str
    codes: list[str]
    label: str
    code: str | None
    annotators: int
    stratum: str


class AuditStats(StrictModel):
    where: str | None
    population: int
    labels: int
    """Labels given (every one, not only the latest)."""
    annotators: list[str]
    labelled_rows: int
    decided_rows: int
    """Labelled rows whose consensus is ``accept`` or ``defective``: what the estimates use."""
    undecided_rows: int
    """Labelled rows whose consensus is ``unsure`` or ``disputed``."""
    covered: float | None
    """Share of the population in strata with a decided row: the estimates speak for these only."""
    agreement: Agreement
    acceptance: Accuracy
    """Acceptance as a whole: precision = of accepted rows, the share people accept; recall = of
    rows people accept, the share the verifier accepts."""
    refusal: Accuracy
    """Refusal as a whole: precision = of refused rows, the share people find defective; recall =
    of rows people find defective, the share the verifier refuses."""
    codes: list[CodeAccuracy]
    disagreements: list[Disagreement]


@dataclass(frozen=True)
class LabelledRow:
    """What the estimators read of one decided row."""

    row: int
    stratum: str
    accepted: bool
    """The verifier's decision."""
    codes: tuple[str, ...]
    """Its refusal codes."""
    defective: bool
    """People's decision (the consensus of their latest labels)."""
    code: str | None = None
    """The defect's code people named, if any."""


# --------------------------------------------------------------------------- labels


def add_label(con: duckdb.DuckDBPyConnection, row: int, label: str, annotator: str, code: str | None,
              comment: str | None) -> AuditLabel:
    """Append one label after checking it: a row that holds a package, a label of ``LABELS``, a
    reason code of ``Code`` (none with ``accept``), a non-empty annotator name."""
    if label not in LABELS:
        raise CatalogError(f"label {label!r} is not one of: {', '.join(LABELS)}")
    name = (annotator or "").strip()
    if not name:
        raise CatalogError("the annotator's name is empty; pass --annotator NAME")
    if len(name) > MAX_ANNOTATOR or any(ch in name for ch in "\t\n\r"):
        raise CatalogError(f"annotator {name[:40]!r}: a name is one line of at most {MAX_ANNOTATOR} characters")
    code = code.strip() if code else None
    if code is not None and code not in {c.value for c in Code}:
        raise CatalogError(f"--code {code!r} is not a reason code; the codes: {', '.join(c.value for c in Code)}")
    if code is not None and label == "accept":
        raise CatalogError("--code names a defect: give it with --label defective or unsure, not accept")
    found = con.execute("SELECT run, id, package IS NOT NULL FROM packages WHERE row_id = ?", [row]).fetchone()
    if found is None:
        raise CatalogError(f"no package row {row}; `synth audit queue` lists rows to label")
    if not found[2]:
        raise CatalogError(f"row {row} holds no package (generation failed): there is nothing to judge")
    text = comment.strip() if comment else None
    stored = con.execute(
        "INSERT INTO audit_labels (run, package_row, package_id, annotator, created, label, code, comment) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
        [found[0], row, found[1], name, datetime.now(UTC), label, code, text or None]).fetchone()
    assert stored is not None
    return _label(stored)


def labels(con: duckdb.DuckDBPyConnection, row: int | None = None, annotator: str | None = None,
           latest: bool = False) -> list[AuditLabel]:
    """Labels in the order given; of one row and one annotator when given; ``latest``: each
    annotator's latest label of each row only."""
    sql = f"SELECT * FROM {'audit_latest' if latest else 'audit_labels'} WHERE TRUE"
    params: list[object] = []
    if row is not None:
        sql, params = sql + " AND package_row = ?", [*params, row]
    if annotator is not None:
        sql, params = sql + " AND annotator = ?", [*params, annotator]
    return [_label(r) for r in con.execute(sql + " ORDER BY id", params).fetchall()]


def consensus(con: duckdb.DuckDBPyConnection) -> dict[int, str]:
    """Every labelled row's ``audit_label`` (the majority of its annotators' latest labels:
    ``accept``, ``defective``, ``unsure`` or ``disputed``)."""
    return dict(con.execute("SELECT package_row, audit_label FROM audit_consensus").fetchall())


def _label(r: tuple[object, ...]) -> AuditLabel:
    fields = ("id", "run", "package_row", "package_id", "annotator", "created", "label", "code", "comment")
    return AuditLabel.model_validate(dict(zip(fields, r, strict=True)))


# --------------------------------------------------------------------------- the population


def population_sql(where: str | None, labelled: bool = False) -> str:
    """Every row with a package (under ``where``, the user's boolean over the ``SELECTABLE``
    columns) with its ``part``, ``stratum`` (module docstring), ``first_refusal`` code and what the
    queue shows; ``labelled``: only the rows with a label (what the figures read, a few rows of
    many). A row's refusal codes are ``refusal_codes``'s: listing them for every row costs more
    than all the rest."""
    condition = "" if where is None else f" AND (\n{parse_where(where)}\n)"
    labelled_rows = "IN (SELECT package_row FROM audit_labels)"
    only_findings = f" WHERE package_row {labelled_rows}" if labelled else ""
    only_rows = f" AND row_id {labelled_rows}" if labelled else ""
    return f"""
        WITH f AS (
            SELECT package_row,
                   arg_min(code, n) FILTER (WHERE kind = 'refusal') AS first_refusal,
                   bool_or(kind = 'review') AS reviewed,
                   bool_or(reading IS NOT NULL
                           AND coalesce(json_extract_string(reading, '$.answer'), '') <> 'agrees') AS disagreed
            FROM findings{only_findings} GROUP BY package_row),
        p AS (SELECT * FROM {SELECTABLE} AS packages WHERE package IS NOT NULL{only_rows}{condition}),
        r AS (
            SELECT p.row_id, p.id, p.run, p.status, p.capability, p.workflow, p.request, p.review_codes,
                   coalesce(p.service_profile, 'default') AS profile,
                   f.first_refusal,
                   coalesce(f.disagreed, false) AS disagreed,
                   coalesce(f.reviewed, false) OR coalesce(f.disagreed, false) AS reviewed
            FROM p LEFT JOIN f ON f.package_row = p.row_id)
        SELECT *,
               CASE WHEN reviewed THEN 'review' WHEN status = 'accepted' THEN 'accepted' ELSE 'refused' END AS part,
               CASE WHEN reviewed THEN 'review'
                    WHEN status = 'accepted' THEN 'accepted: ' || coalesce(capability, '-') || ' / '
                         || coalesce(workflow, '-') || ' / ' || profile
                    ELSE 'refused: ' || coalesce(first_refusal, '-') END AS stratum
        FROM r"""


def refusal_codes(con: duckdb.DuckDBPyConnection, rows: Iterable[int]) -> dict[int, list[str]]:
    """The refusal codes of each of ``rows`` that has any, in verdict order."""
    return dict(con.execute("""
        SELECT package_row, list(code ORDER BY n) FROM findings
        WHERE kind = 'refusal' AND package_row IN (SELECT unnest(?::BIGINT[])) GROUP BY package_row""",
                            [list(rows)]).fetchall())


def _strata(con: duckdb.DuckDBPyConnection, population: str) -> dict[str, tuple[Part, int]]:
    return {name: (part, size) for name, part, size in con.execute(
        f"SELECT stratum, any_value(part), count(*) FROM ({population}) GROUP BY stratum ORDER BY stratum").fetchall()}


def allocate(sizes: Mapping[str, int], total: int) -> dict[str, int]:
    """``total`` draws over strata of ``sizes``: one per stratum first when there are enough for
    all, the rest in proportion to size (largest remainders), never more than a stratum holds."""
    total = min(total, sum(sizes.values()))
    take = {h: 1 if total >= len(sizes) and n else 0 for h, n in sizes.items()}
    while (left := total - sum(take.values())) > 0:
        room = {h: sizes[h] - take[h] for h in sizes if sizes[h] > take[h]}
        whole = sum(sizes[h] for h in room)
        quota = {h: left * sizes[h] / whole for h in room}
        for h in room:
            take[h] += min(room[h], int(quota[h]))
        left = total - sum(take.values())
        for h in sorted(room, key=lambda h: (-(quota[h] - int(quota[h])), h))[:left]:
            if take[h] < sizes[h]:
                take[h] += 1
    return take


# --------------------------------------------------------------------------- the queue


def queue(con: duckdb.DuckDBPyConnection, sample: int = DEFAULT_SAMPLE, refusals: int = DEFAULT_REFUSALS,
          seed: int = 0, where: str | None = None, annotator: str | None = None) -> AuditQueue:
    """The sampling plan (module docstring): every review row, ``sample`` accepted rows stratified
    by capability × workflow × service profile, ``refusals`` refused rows per first refusal code;
    of the rows ``where`` selects. ``annotator``: leave out the rows that annotator has labelled."""
    if sample < 0 or refusals < 0:
        raise CatalogError("--sample and --refusals count rows: give 0 or more")
    population = population_sql(where)
    strata = _strata(con, population)
    take = allocate({h: n for h, (part, n) in strata.items() if part == "accepted"}, sample)
    take.update({h: min(n, refusals) for h, (part, n) in strata.items() if part == "refused"})
    take.update({h: n for h, (part, n) in strata.items() if part == "review"})
    most = max(take.values(), default=0)
    rows = con.execute(f"""
        SELECT * FROM (
            SELECT row_id, id, run, status, capability, workflow, request, review_codes, profile,
                   disagreed, part, stratum,
                   row_number() OVER (PARTITION BY stratum ORDER BY md5(CAST(? AS VARCHAR) || ':' || row_id), row_id)
                       AS draw
            FROM ({population}))
        WHERE draw <= ?""", [seed, most]).fetchall()
    who = _annotators(con)
    codes = refusal_codes(con, [r[0] for r in rows if r[-1] <= take.get(r[-2], 0)])
    items: list[QueueItem] = []
    hidden = 0
    for (row, package_id, run, status, capability, workflow, request, review_codes, profile, disagreed,
         part, stratum, draw) in rows:
        if draw > take.get(stratum, 0):
            continue
        if annotator is not None and annotator in who.get(row, []):
            hidden += 1
            continue
        reason: Reason = ("disagreement" if disagreed else "review") if part == "review" else part
        items.append(QueueItem(row=row, package_id=package_id, run=run, reason=reason, stratum=stratum,
                               weight=strata[stratum][1] / take[stratum], status=status, codes=codes.get(row, []),
                               review_codes=list(review_codes or []), capability=capability, workflow=workflow,
                               profile=profile, request=request, annotators=who.get(row, [])))
    order = {"review": 0, "accepted": 1, "refused": 2}
    items.sort(key=lambda i: (order[strata[i.stratum][0]], i.stratum, i.row))
    return AuditQueue(seed=seed, sample=sample, refusals=refusals, where=where,
                      population=sum(n for _, n in strata.values()),
                      strata=[Stratum(name=h, part=part, size=n, sampled=take.get(h, 0))
                              for h, (part, n) in strata.items()],
                      items=items, hidden=hidden)


def _annotators(con: duckdb.DuckDBPyConnection) -> dict[int, list[str]]:
    out: dict[int, list[str]] = defaultdict(list)
    for row, name in con.execute("SELECT package_row, annotator FROM audit_latest ORDER BY package_row, annotator"
                                 ).fetchall():
        out[row].append(name)
    return out


# --------------------------------------------------------------------------- the figures


def stats(con: duckdb.DuckDBPyConnection, where: str | None = None) -> AuditStats:
    """Agreement, the verifier's precision and recall, and the rows where people and the verifier
    decide differently, over the rows ``where`` selects (module docstring)."""
    strata = _strata(con, population_sql(where))
    labelled = con.execute(f"""
        SELECT r.row_id, r.id, r.status, r.stratum, c.audit_label, c.audit_code, c.annotators
        FROM ({population_sql(where, labelled=True)}) AS r JOIN audit_consensus AS c ON c.package_row = r.row_id
        ORDER BY r.row_id""").fetchall()
    chosen = {row for row, *_ in labelled}
    codes = refusal_codes(con, chosen)
    decided = [LabelledRow(row=row, stratum=stratum, accepted=status == "accepted", codes=tuple(codes.get(row, [])),
                           defective=label == "defective", code=code)
               for row, _, status, stratum, label, code, _ in labelled if label in ("accept", "defective")]
    sizes = {h: n for h, (_, n) in strata.items()}
    by_row: dict[int, dict[str, str]] = defaultdict(dict)
    for row, name, label in con.execute(
            "SELECT package_row, annotator, label FROM audit_latest ORDER BY package_row, annotator").fetchall():
        if row in chosen:
            by_row[row][name] = label
    given = sum(n for row, n in con.execute("SELECT package_row, count(*) FROM audit_labels GROUP BY package_row"
                                            ).fetchall() if row in chosen)
    weights = post_stratified_weights(decided, sizes)
    covered_rows = sum(sizes[h] for h in {r.stratum for r in decided})
    total = sum(sizes.values())
    acceptance, refusal, per_code = accuracy(decided, weights)
    return AuditStats(
        where=where, population=total, labels=given,
        annotators=sorted({name for names in by_row.values() for name in names}),
        labelled_rows=len(labelled), decided_rows=len(decided), undecided_rows=len(labelled) - len(decided),
        covered=covered_rows / total if total else None,
        agreement=agreement(list(by_row.values())), acceptance=acceptance, refusal=refusal, codes=per_code,
        disagreements=[Disagreement(row=row, package_id=package_id, status=status, codes=codes.get(row, []),
                                    label=label, code=code, annotators=annotators, stratum=stratum)
                       for row, package_id, status, stratum, label, code, annotators in labelled
                       if (status == "accepted" and label == "defective") or (status != "accepted" and label == "accept")])


def post_stratified_weights(rows: Sequence[LabelledRow], sizes: Mapping[str, int]) -> dict[int, float]:
    """Each decided row's weight: its stratum's size over the decided rows in that stratum."""
    per: dict[str, int] = defaultdict(int)
    for r in rows:
        per[r.stratum] += 1
    return {r.row: sizes[r.stratum] / per[r.stratum] for r in rows}


def accuracy(rows: Sequence[LabelledRow], weights: Mapping[int, float]
             ) -> tuple[Accuracy, Accuracy, list[CodeAccuracy]]:
    """Precision and recall of acceptance, of refusal, and of each reason code that the verifier
    raised or people named on ``rows``, each row counted with its weight."""

    def share(domain: Iterable[LabelledRow], hit: str) -> Estimate:
        chosen = list(domain)
        return weighted_share([_hit(r, hit) for r in chosen], [weights[r.row] for r in chosen])

    acceptance = Accuracy(precision=share((r for r in rows if r.accepted), "accept"),
                          recall=share((r for r in rows if not r.defective), "accepted"))
    refusal = Accuracy(precision=share((r for r in rows if not r.accepted), "defective"),
                       recall=share((r for r in rows if r.defective), "refused"))
    named = sorted({c for r in rows for c in r.codes} | {r.code for r in rows if r.defective and r.code})
    codes = []
    for code in named:
        found = [r for r in rows if r.defective and r.code == code]
        codes.append(CodeAccuracy(
            code=code, description=_description(code),
            precision=share((r for r in rows if code in r.codes), "defective"),
            recall=share(found, "refused"),
            recall_code=weighted_share([code in r.codes for r in found], [weights[r.row] for r in found])))
    return acceptance, refusal, codes


def _hit(r: LabelledRow, what: str) -> bool:
    return {"accept": not r.defective, "defective": r.defective, "accepted": r.accepted,
            "refused": not r.accepted}[what]


def _description(code: str) -> str:
    try:
        return DESCRIPTIONS[Code(code)]
    except ValueError:
        return ""


def agreement(rows: Sequence[Mapping[str, str]]) -> Agreement:
    """Agreement over ``rows`` (each: annotator → latest label): Cohen's kappa when exactly two
    annotators labelled rows in common, Fleiss' kappa over the rows of two or more labels when
    more did; and Cohen's kappa of every pair with rows in common."""
    shared = [r for r in rows if len(r) >= 2]
    names = sorted({n for r in shared for n in r})
    pairs: list[PairAgreement] = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            both = [(r[a], r[b]) for r in shared if a in r and b in r]
            if both:
                pairs.append(PairAgreement(first=a, second=b, items=len(both),
                                           observed=sum(x == y for x, y in both) / len(both),
                                           kappa=cohen_kappa(both)))
    agreeing = sum(sum(x == y for i, x in enumerate(labels) for y in labels[i + 1:])
                   for labels in (list(r.values()) for r in shared))
    compared = sum(len(r) * (len(r) - 1) // 2 for r in shared)
    observed = agreeing / compared if compared else None
    if not shared:
        return Agreement(method=None, kappa=None, items=0, observed=None, annotators=len(names))
    if len(names) == 2:
        return Agreement(method="cohen", kappa=pairs[0].kappa, items=len(shared), observed=observed,
                         annotators=2, pairs=pairs)
    return Agreement(method="fleiss", kappa=fleiss_kappa([list(r.values()) for r in shared]), items=len(shared),
                     observed=observed, annotators=len(names), pairs=pairs)
