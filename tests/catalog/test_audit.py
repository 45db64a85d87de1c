"""The audit (pipeline/catalog/audit.py, estimates.py): labels, the queue, the figures, and the
estimators against samples whose truth is known."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pipeline.catalog.audit import LabelledRow, accuracy, agreement, allocate, post_stratified_weights
from pipeline.catalog.errors import CatalogError
from pipeline.catalog.estimates import cohen_kappa, fleiss_kappa, weighted_share, wilson
from pipeline.catalog.store import Catalog
from pipeline.core.codes import Code
from pipeline.core.outcomes import Finding, Reading, Verdict
from pipeline.core.package import TaskPackage
from tests.conftest import holding_witness, load_examples, refusal


def variant(package: TaskPackage, n: int) -> TaskPackage:
    """``package`` with its request text numbered ``n``: another package id."""
    request = package.request.model_copy(update={"text": f"{package.request.text} (#{n})"})
    return package.model_copy(update={"request": request}).with_id()


def fill(catalog: Catalog, accepted: int = 12, refused: int = 4) -> dict[str, list[int]]:
    """Rows: ``accepted`` accepted variants over the examples' workflows, ``refused`` refused with
    grader_counts_calls, one with a review note, one whose reader disagreed, one generation
    failure. Their row ids by kind."""
    from pipeline.core.outcomes import Failure, FailureCode

    examples = load_examples()
    run = catalog.start_run("audit", "offline")
    rows: dict[str, list[int]] = {"accepted": [], "refused": [], "review": [], "disagreement": [], "failure": []}
    slot = 0
    for n in range(accepted):
        p = variant(examples[n % len(examples)], n)
        rows["accepted"].append(catalog.record(run, slot, 1, p, Verdict.build(p.id, [], 1.0)))
        slot += 1
    for n in range(refused):
        p = variant(examples[0], 100 + n)
        verdict = Verdict.build(p.id, [refusal(Code.GRADER_COUNTS_CALLS)], 0.9)
        rows["refused"].append(catalog.record(run, slot, 1, p, verdict))
        slot += 1
    p = variant(examples[1], 200)
    note = Finding(code=Code.VACUOUS_SAFETY, message="a rule that forbids nothing")
    rows["review"].append(catalog.record(run, slot, 1, p, Verdict.build(p.id, [note], 1.0)))
    p = variant(examples[1], 201)
    read = Finding(code=Code.GRADER_UNDERCONSTRAINED, message="read otherwise", witness=holding_witness(),
                   reading=Reading(answer="disagrees", reason="the other reading"))
    rows["disagreement"].append(catalog.record(run, slot + 1, 1, p, Verdict.build(p.id, [read], 1.0)))
    failure = Failure(code=FailureCode.MALFORMED_OUTPUT, message="no JSON")
    rows["failure"].append(catalog.record(run, slot + 2, 1, None, None, failure=failure))
    return rows


@pytest.fixture
def filled(catalog: Catalog) -> tuple[Catalog, dict[str, list[int]]]:
    with catalog.batch():
        rows = fill(catalog)
    return catalog, rows


# --------------------------------------------------------------------------- labels


def test_labels_are_validated_and_the_latest_counts(filled: tuple[Catalog, dict[str, list[int]]]) -> None:
    catalog, rows = filled
    row = rows["refused"][0]
    first = catalog.add_label(row, "defective", " an annotator ", code="grader_counts_calls", comment="3 = 1")
    assert (first.annotator, first.label, first.code, first.comment) == ("an annotator", "defective",
                                                                         "grader_counts_calls", "3 = 1")
    catalog.add_label(row, "accept", "an annotator")
    assert [label.label for label in catalog.labels(row)] == ["defective", "accept"]
    assert [label.label for label in catalog.labels(row, latest=True)] == ["accept"]
    for args, message in [((999_999, "accept", "a"), "no package row"),
                          ((rows["failure"][0], "accept", "a"), "holds no package"),
                          ((row, "fine", "a"), "not one of"),
                          ((row, "accept", "  "), "empty"),
                          ((row, "accept", "a\nb"), "one line")]:
        with pytest.raises(CatalogError, match=message):
            catalog.add_label(*args)
    with pytest.raises(CatalogError, match="not a reason code"):
        catalog.add_label(row, "defective", "a", code="no_such_code")
    with pytest.raises(CatalogError, match="not accept"):
        catalog.add_label(row, "accept", "a", code="grader_counts_calls")
    assert len(catalog.labels()) == 2


def test_audit_label_is_the_majority_and_export_where_selects_on_it(
        filled: tuple[Catalog, dict[str, list[int]]], tmp_path: Path) -> None:
    from pipeline.interop.export import export_catalog

    catalog, rows = filled
    a, b, c = rows["accepted"][:3]
    catalog.add_label(a, "accept", "one")
    catalog.add_label(a, "accept", "two")
    catalog.add_label(a, "defective", "three")
    catalog.add_label(b, "accept", "one")
    catalog.add_label(b, "defective", "two")   # a tie: disputed
    catalog.add_label(c, "defective", "one", code="grader_underconstrained")
    got = dict(catalog.query("SELECT row_id, audit_label FROM packages_audit WHERE audit_label IS NOT NULL").rows)
    assert got == {a: "accept", b: "disputed", c: "defective"}
    summary = export_catalog(catalog, "jsonl", tmp_path / "d.jsonl", where="audit_label = 'defective'")
    assert summary.rows == 1
    summary = export_catalog(catalog, "jsonl", tmp_path / "a.jsonl", audited=True)
    assert (summary.rows, summary.audited) == (1, True)
    with pytest.raises(CatalogError, match="audit_label"):  # an unknown column lists the audit columns too
        export_catalog(catalog, "jsonl", tmp_path / "x.jsonl", where="no_such_column = 1")


# --------------------------------------------------------------------------- the queue


def test_queue_takes_every_review_row_and_samples_the_rest(filled: tuple[Catalog, dict[str, list[int]]]) -> None:
    catalog, rows = filled
    plan = catalog.audit_queue(sample=5, refusals=2, seed=3)
    assert plan.population == 12 + 4 + 2  # the generation failure has nothing to judge
    by_reason: dict[str, list[int]] = {}
    for item in plan.items:
        by_reason.setdefault(item.reason, []).append(item.row)
    assert by_reason["review"] == rows["review"] and by_reason["disagreement"] == rows["disagreement"]
    assert len(by_reason["accepted"]) == 5 and set(by_reason["accepted"]) <= set(rows["accepted"])
    assert len(by_reason["refused"]) == 2
    refused = [i for i in plan.items if i.reason == "refused"]
    assert {i.weight for i in refused} == {2.0} and refused[0].codes == ["grader_counts_calls"]
    sizes = {s.name: s for s in plan.strata}
    for item in plan.items:
        assert item.weight == sizes[item.stratum].size / sizes[item.stratum].sampled
    # one seed, one sample; another seed, (here) another
    assert catalog.audit_queue(sample=5, refusals=2, seed=3) == plan
    assert {i.row for i in catalog.audit_queue(sample=5, refusals=2, seed=4).items} != {i.row for i in plan.items}
    # narrowed by --where; an annotator's labelled rows hidden
    narrowed = catalog.audit_queue(sample=50, where="status = 'rejected'")
    assert {i.reason for i in narrowed.items} == {"refused"} and narrowed.population == 4
    catalog.add_label(rows["review"][0], "accept", "one")
    mine = catalog.audit_queue(sample=5, refusals=2, seed=3, annotator="one")
    assert mine.hidden == 1 and rows["review"][0] not in {i.row for i in mine.items}


def test_queue_where_is_vetted(filled: tuple[Catalog, dict[str, list[int]]]) -> None:
    catalog, _ = filled
    with pytest.raises(CatalogError, match="without ';'"):
        catalog.audit_queue(where="true; DROP TABLE packages")
    with pytest.raises(CatalogError, match="the packages columns are"):
        catalog.audit_queue(where="nope = 1")
    with pytest.raises(CatalogError, match="not files|Permission|disabled"):
        catalog.audit_queue(where="EXISTS (SELECT * FROM read_csv('/etc/passwd'))")


def test_allocate_is_proportional_with_one_per_stratum_when_it_can() -> None:
    assert allocate({"a": 80, "b": 15, "c": 5}, 10) == {"a": 7, "b": 2, "c": 1}
    assert allocate({"a": 80, "b": 15, "c": 5}, 2) == {"a": 2, "b": 0, "c": 0}
    assert allocate({"a": 3, "b": 1}, 100) == {"a": 3, "b": 1}
    assert sum(allocate({str(i): i + 1 for i in range(30)}, 77).values()) == 77


# --------------------------------------------------------------------------- the figures


def test_stats_from_the_catalog(filled: tuple[Catalog, dict[str, list[int]]]) -> None:
    catalog, rows = filled
    refused, accepted = rows["refused"], rows["accepted"]
    catalog.add_label(refused[0], "defective", "one", code="grader_counts_calls")
    catalog.add_label(refused[0], "defective", "two", code="grader_counts_calls")
    catalog.add_label(refused[1], "accept", "one")
    catalog.add_label(refused[1], "accept", "two")
    catalog.add_label(accepted[0], "accept", "one")
    catalog.add_label(accepted[0], "defective", "two")   # disputed: undecided
    catalog.add_label(accepted[1], "defective", "one", code="grader_underconstrained")
    catalog.add_label(accepted[2], "unsure", "one")
    stats = catalog.audit_stats()
    assert (stats.labelled_rows, stats.decided_rows, stats.undecided_rows, stats.labels) == (5, 3, 2, 8)
    assert stats.annotators == ["one", "two"]
    assert stats.agreement.method == "cohen" and stats.agreement.items == 3
    assert stats.agreement.observed == pytest.approx(2 / 3)
    assert stats.refusal.precision.value == pytest.approx(0.5) and stats.refusal.precision.n == 2
    codes = {c.code: c for c in stats.codes}
    assert codes["grader_counts_calls"].precision.value == pytest.approx(0.5)
    assert codes["grader_underconstrained"].recall.value == 0.0
    assert {d.row for d in stats.disagreements} == {refused[1], accepted[1]}
    # the weights: a decided refused row stands for 4 / 2 rows, the one decided accepted row for
    # its stratum's 4 (12 accepted rows over the 3 examples' workflows)
    assert stats.refusal.recall.value == pytest.approx(2 / (2 + 4))
    narrowed = catalog.audit_stats(where="status = 'rejected'")
    assert narrowed.decided_rows == 2 and narrowed.population == 4


def test_kappas_against_worked_examples() -> None:
    # Cohen: 50 items, 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no -> 0.4
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    assert cohen_kappa([("a", "a")] * 3) is None and cohen_kappa([]) is None
    # Fleiss (1971) as worked on Wikipedia: 10 subjects, 14 raters, 5 categories -> 0.210
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    items = [[category for category, n in enumerate(row) for _ in range(n)] for row in table]
    assert fleiss_kappa(items) == pytest.approx(0.210, abs=5e-4)
    # two raters: Fleiss' statistic is close to Cohen's, and agreement() picks Cohen for two
    two = agreement([{"a": x, "b": y} for x, y in pairs])
    assert two.method == "cohen" and two.kappa == pytest.approx(0.4) and two.observed == pytest.approx(0.7)
    three = agreement([{"a": "x", "b": "x", "c": "y"}, {"a": "y", "b": "y", "c": "y"}, {"a": "x"}])
    assert three.method == "fleiss" and three.items == 2 and len(three.pairs) == 3


def test_wilson_interval() -> None:
    low, high = wilson(0.5, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)
    assert wilson(0.0, 10)[0] == 0.0 and wilson(1.0, 10)[1] == 1.0 and wilson(0.0, 10)[1] > 0.2
    estimate = weighted_share([True, False, False, False], [1, 1, 1, 1])
    assert estimate.value == 0.25 and estimate.n_effective == 4
    assert weighted_share([True, False], [3, 1]).n_effective == pytest.approx(16 / 10)


def _planted(rng: random.Random) -> tuple[list[LabelledRow], dict[str, int], dict[str, float]]:
    """A synthetic catalog with planted truth: accepted strata of different sizes and defect rates,
    refused strata per code of different precision; a sample of 8 per accepted stratum and 6 per
    code, labelled by the truth. Returns the sample, the strata sizes and the true figures."""
    accepted = {"a": (600, 0.05), "b": (250, 0.2), "c": (100, 0.4), "d": (50, 0.1)}
    refused = {"x": (300, 0.9), "y": (80, 0.5)}
    strata: dict[str, list[LabelledRow]] = {}
    row = 0
    for name, (size, rate) in {**accepted, **refused}.items():
        is_accepted = name in accepted
        codes = () if is_accepted else (name,)
        strata[name] = [LabelledRow(row=row + i, stratum=name, accepted=is_accepted, codes=codes,
                                    defective=rng.random() < rate) for i in range(size)]
        row += size
    population = [r for rows in strata.values() for r in rows]
    truth = {
        "acceptance_precision": _share([not r.defective for r in population if r.accepted]),
        "refusal_recall": _share([not r.accepted for r in population if r.defective]),
        "refusal_precision": _share([r.defective for r in population if not r.accepted]),
    }
    sizes = {name: len(rows) for name, rows in strata.items()}
    sample = [r for name, rows in strata.items() for r in rng.sample(rows, 8 if name in accepted else 6)]
    return sample, sizes, truth


def _share(values: list[bool]) -> float:
    return sum(values) / len(values)


def test_intervals_cover_the_planted_truth_at_about_their_rate() -> None:
    """Over 300 seeds the 95% intervals of acceptance precision, refusal precision and refusal
    recall (the one estimate that mixes strata of very different weights) cover the truth of the
    population they were sampled from at about 95%: not much less (too narrow), not all the time
    (uselessly wide)."""
    covered = {"acceptance_precision": 0, "refusal_recall": 0, "refusal_precision": 0}
    seeds = 300
    for seed in range(seeds):
        sample, sizes, truth = _planted(random.Random(seed))
        acceptance, refusal, _ = accuracy(sample, post_stratified_weights(sample, sizes))
        estimates = {"acceptance_precision": acceptance.precision, "refusal_recall": refusal.recall,
                     "refusal_precision": refusal.precision}
        for name, estimate in estimates.items():
            assert estimate.low is not None and estimate.high is not None
            covered[name] += estimate.low <= truth[name] <= estimate.high
    for name, hits in covered.items():
        assert 0.88 <= hits / seeds <= 0.995, (name, hits / seeds)


def test_catalog_connections_draw_no_progress_bar(filled: tuple[Catalog, dict[str, list[int]]]) -> None:
    # DuckDB draws its bar on stdout after two seconds of a query: it would corrupt `--json` output
    catalog, _ = filled
    from pipeline.catalog.connect import Access, connect

    for access in Access:
        con = connect(catalog.path, access, 5.0)
        try:
            assert con.execute("SELECT current_setting('enable_progress_bar')").fetchone() == (False,)
        finally:
            con.close()
