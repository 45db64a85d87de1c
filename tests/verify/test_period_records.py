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


# --------------------------------------------------------------------------- a second period named only in an aside
def _rent(marked: str) -> Data:
    """Two rent invoices issued a month apart; the request settles December's and mentions
    November's only in an aside in parentheses. Each invoice is dated in the month after the one its text names."""
    invoices = [{"id": f"inv-{n}", "customer": "Harrow Lettings", "customer_email": "ar@harrow.example",
                 "description": f"Studio rent - {month}", "amount": 1800.0, "currency": "EUR",
                 "due_date": due, "status": "unpaid", "issued_at": issued}
                for n, month, due, issued in ((41, "November", "2026-12-10", "2026-12-01T08:00:00Z"),
                                              (42, "December", "2027-01-10", "2027-01-02T08:00:00Z"))]
    return {"capability": "general", "workflow": "hand-built", "services": ["finance"],
            "request": {"text": "Harrow's transfer for the December studio rent came in, can you set that one to "
                                "paid? (November's I'm sorting out with them myself.)"},
            "initial_state": {"finance": {"invoices": invoices}},
            "tools": [catalogue_tool(n).model_dump(mode="json")
                      for n in ("finance_list_invoices", "finance_update_invoice")],
            "checks": [{"id": "paid", "kind": "state_match", "weight": 0.7, "collection": "finance.invoices",
                        "record_id": marked, "expect": {"status": "paid"}},
                       {"id": "other-kept", "kind": "state_unchanged", "weight": 0.1, "collection": "finance.invoices",
                        "where": {"id": {"$ne": marked}}},
                       {"id": "said", "kind": "answer_contains", "weight": 0.2, "values": ["paid"]}],
            "reference": [{"call": "finance_list_invoices", "args": {"customer": "Harrow Lettings"}},
                          {"call": "finance_update_invoice", "args": {"invoice_id": marked, "status": "paid"}},
                          {"answer": f"Set {marked} to paid."}]}


def test_a_period_named_only_in_an_aside_is_not_the_one_asked_for() -> None:
    verdict = verify(_rent("inv-41"))  # November's, named only in the aside: the wrong month
    [found] = by(verdict, "period_record", verdict.findings)
    assert (found.detail["record"], found.detail["counterpart"]) == ("inv-41", "inv-42")
    assert found.witness is not None and found.witness.holds


def test_the_record_of_the_asked_period_is_accepted() -> None:
    verdict = verify(_rent("inv-42"))
    assert by(verdict, "period_record") == [] and verdict.accepted, messages(verdict)


def _rent_said_plainly(marked: str) -> Data:
    """The aside as a sentence of its own ("November's is still outstanding"), and October's
    invoice already paid: "paid", the value the update writes, selects nothing (the invoice to
    mark paid is an unpaid one)."""
    data = _rent(marked)
    data["request"]["text"] = ("Harrow finally paid the December studio rent. Can you mark that invoice as paid? "
                               "November's is still outstanding.")
    data["initial_state"]["finance"]["invoices"].insert(0, {
        "id": "inv-40", "customer": "Harrow Lettings", "customer_email": "ar@harrow.example",
        "description": "Studio rent - October", "amount": 1800.0, "currency": "EUR", "due_date": "2026-11-10",
        "status": "paid", "issued_at": "2026-11-01T08:00:00Z"})
    return data


def test_a_period_named_only_in_a_sentence_of_what_stays_is_not_the_one_asked_for() -> None:
    [found] = by(verify(_rent_said_plainly("inv-41")), "period_record", None)
    assert (found.detail["record"], found.detail["counterpart"]) == ("inv-41", "inv-42")
    verdict = verify(_rent_said_plainly("inv-42"))
    assert by(verdict, "period_record") == [] and verdict.accepted, messages(verdict)


# --------------------------------------------------------------------------- a total pinned to another month's one record
def _cloud_total(graded: float) -> Data:
    """One cloud charge in October, two in November (and one in December); asked on 1 December
    for November's total, the answer is graded on ``graded``."""
    rows = (("t-1", "2026-10-14", "Object storage", 980.0), ("t-2", "2026-11-03", "Compute", 410.0),
            ("t-3", "2026-11-21", "Object storage", 385.0), ("t-4", "2026-12-01", "Compute", 44.0))
    transactions = [{"id": tid, "date": day, "description": text, "amount": amount, "type": "debit",
                     "category": "Cloud", "account": "ops", "created_at": f"{day}T10:00:00Z"}
                    for tid, day, text, amount in rows]
    return {"capability": "information-synthesis", "workflow": "hand-built", "services": ["finance", "notes"],
            "request": {"text": "jot down what cloud cost us in november altogether, as a note called Cloud spend"},
            "initial_state": {"finance": {"transactions": transactions, "invoices": []}, "notes": {"notes": []}},
            "tools": [catalogue_tool(n).model_dump(mode="json")
                      for n in ("finance_list_transactions", "notes_create_note")],
            "checks": [{"id": "noted", "kind": "state_count", "weight": 0.8, "collection": "notes.notes",
                        "scope": "created", "where": {"title": {"$regex": "cloud"}, "body": {"$regex": rf"\b{graded:g}\b"}},
                        "op": "==", "value": 1, "ignore_case": True},
                       {"id": "one", "kind": "state_count", "weight": 0.2, "collection": "notes.notes",
                        "scope": "created", "op": "==", "value": 1}],
            "reference": [{"call": "finance_list_transactions", "args": {"category": "Cloud"}},
                          {"call": "notes_create_note", "args": {"title": "Cloud spend", "body": f"November: {graded:g}"}},
                          {"answer": f"Noted: cloud came to {graded:g} in November."}]}


def test_a_total_pinned_to_the_one_record_of_the_month_before_is_refused() -> None:
    verdict = verify(_cloud_total(980.0))  # October's only charge, where November's total (795) is asked
    found = [f for f in verdict.findings if f.code is Code.REQUEST_CHECK_MISMATCH and f.detail.get("kind")]
    assert [(f.detail["records"], f.detail["expected"]) for f in found] == [(["t-1"], 795)], messages(verdict)
    assert found[0].witness is not None and found[0].witness.holds


def test_the_total_of_the_month_asked_is_accepted() -> None:
    verdict = verify(_cloud_total(795.0))
    assert verdict.accepted, messages(verdict)
