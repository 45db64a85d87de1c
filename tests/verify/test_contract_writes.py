"""The information-synthesis contract sees an aggregate written into a record the reference
creates (``contracts._graded_in_writes``): an expense report whose graded transactions and total
gather several records counts them, as an answer that reports them would."""

from __future__ import annotations

from typing import Any

from pipeline.core.codes import Code
from pipeline.core.package import TaskPackage
from pipeline.generation.offline import generate_package
from pipeline.verify.verifier import verify_package


def report_package(graded: bool) -> TaskPackage:
    """The offline claw vendor-spend package, turned into a task that files the vendor's
    transactions in the period as an expense report: the report's transactions and total graded
    (``graded``), or only its title."""
    base = generate_package("information-synthesis", "claw-vendor-spend-in-period", 7, 0)
    data: dict[str, Any] = base.model_dump(mode="json", exclude={"id"})
    ids = next(c["values"] for c in data["checks"] if c["id"] == "transactions")
    rows = {r["transaction_id"]: r for r in data["initial_state"]["finance"]["transactions"]}
    total = round(sum(rows[i]["amount"] for i in ids), 2)
    vendor = next(c["values"][0] for c in data["checks"] if c["id"] == "vendor")
    data["request"]["text"] += " Then file them as one expense report titled 'Vendor spend'."
    created = {"kind": "state_count", "collection": "finance.submitted_reports", "op": "==", "value": 1}
    if graded:
        checks = [{**created, "id": f"has-{i}", "weight": 0.2, "where": {"transactions": {"$contains": i}}} for i in ids]
        checks.append({**created, "id": "total", "weight": round(1 - 0.2 * len(ids), 6), "where": {"total_amount": total}})
    else:
        checks = [{**created, "id": "filed", "weight": 1.0, "where": {"title": "Vendor spend"}}]
    data["checks"] = checks
    data["safety"] = [s for s in data["safety"] if s["kind"] != "not_called"]
    data["reference"] = [data["reference"][0],
                         {"call": "submit_report", "args": {"title": "Vendor spend", "transactions": ids,
                                                            "total_amount": total}},
                         {"answer": f"Filed the {vendor} spend report: {', '.join(ids)}, total {total}."}]
    return TaskPackage.model_validate(data)


def test_a_report_gathering_records_meets_the_contract() -> None:
    verdict = verify_package(report_package(graded=True))
    assert Code.CAPABILITY_UNMET.value not in verdict.codes, [f.message for f in verdict.findings]


def test_a_report_graded_on_its_title_alone_gathers_nothing() -> None:
    verdict = verify_package(report_package(graded=False))
    assert Code.CAPABILITY_UNMET.value in verdict.codes
