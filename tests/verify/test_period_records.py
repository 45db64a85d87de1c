"""The record of a neighbouring period (``pipeline/verify/period_records.py``), on a claw package
whose records are keyed by ``transaction_id``, for a month named from today ("last month")."""

from __future__ import annotations

from pipeline.core.codes import Code
from pipeline.generation.tools import catalogue_tool
from tests.verify.builders import Data, by, messages, verify

TRANSACTIONS = [
    {"transaction_id": tid, "date": day, "description": text, "amount": amount, "category": "software",
     "vendor": vendor, "status": "completed"}
    for tid, day, text, amount, vendor in (
        ("TXN-11", "2026-10-05", "Notion team plan (Oct)", 240.0, "Notion"),
        ("TXN-12", "2026-10-19", "Slack standard (Oct)", 150.0, "Slack"),
        ("TXN-13", "2026-11-05", "Notion team plan (Nov)", 264.0, "Notion"),
        ("TXN-14", "2026-11-19", "Slack standard (Nov)", 150.0, "Slack"))]


def _report(month: str, ids: list[str], total: float) -> Data:
    start, end = (("2026-10-01", "2026-10-31") if month == "10" else ("2026-11-01", "2026-11-30"))
    return {
        "capability": "general", "workflow": "hand-built", "services": ["finance"], "service_profile": "claw",
        "request": {"text": "file last month's software subscriptions as an expense report"},
        "initial_state": {"finance": {"transactions": TRANSACTIONS}},
        "tools": [catalogue_tool(n, "claw").model_dump(mode="json") for n in ("list_transactions", "submit_report")],
        "checks": [{"id": "total", "kind": "state_count", "weight": 0.6, "collection": "finance.submitted_reports",
                    "where": {"total_amount": total}, "op": "==", "value": 1},
                   *({"id": f"has-{t}", "kind": "state_count", "weight": 0.2, "collection": "finance.submitted_reports",
                      "where": {"transactions": {"$contains": t}}, "op": "==", "value": 1} for t in ids)],
        "reference": [{"call": "list_transactions", "args": {"start_date": start, "end_date": end}},
                      {"call": "submit_report", "args": {"title": "Software subscriptions", "transactions": ids,
                                                         "total_amount": total}},
                      {"answer": f"Filed the software report: {', '.join(ids)}, {total:.2f} in all."}]}


def test_last_months_report_built_from_the_month_before_is_refused() -> None:
    """Said on 1 December: last month is November; the reference files October's charges."""
    verdict = verify(_report("10", ["TXN-11", "TXN-12"], 390.0))
    found = by(verdict, "period_record", verdict.findings)
    assert {(f.code, f.detail["record"], f.detail["counterpart"]) for f in found} == {
        (Code.REQUEST_CHECK_MISMATCH, "TXN-11", "TXN-13"), (Code.REQUEST_CHECK_MISMATCH, "TXN-12", "TXN-14")}
    assert all("writes the id of" in f.message and f.witness is not None and f.witness.holds for f in found)


def test_last_months_report_from_last_month_is_accepted() -> None:
    verdict = verify(_report("11", ["TXN-13", "TXN-14"], 414.0))
    assert by(verdict, "period_record") == [] and verdict.accepted, messages(verdict)
