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


def _task(i: str, title: str, status: str, priority: str, due: str) -> dict[str, Any]:
    return {"id": i, "title": title, "priority": priority, "due_date": due, "status": status, "notes": "",
            "created_at": "2026-11-20T09:00:00Z"}


def _digest(body_pattern: str) -> dict[str, Any]:
    """An information-synthesis package: a note listing the open high-priority todos with their
    due dates, its body graded by ``body_pattern``."""
    from tests.verify.builders import package
    tasks = [_task("todo-001", "Renew the domain", "open", "high", "2026-12-04"),
             _task("todo-002", "Sign the lease", "open", "high", "2026-12-09"),
             _task("todo-003", "Order badges", "done", "high", "2026-11-30"),
             _task("todo-004", "Water the plants", "open", "low", "2026-12-05")]
    body = "- Renew the domain: due 2026-12-04\n- Sign the lease: due 2026-12-09"
    return package(
        "Put a note in my Weekly folder listing every open high-priority todo with its due date.",
        {"todo": {"tasks": tasks}, "notes": {"notes": []}}, ["todo_list_tasks", "notes_create_note"],
        [{"id": "digest", "kind": "state_count", "weight": 1.0, "collection": "notes.notes", "scope": "created",
          "where": {"folder": "Weekly", "body": {"$regex": body_pattern}}, "op": "==", "value": 1}],
        [{"call": "todo_list_tasks", "args": {"status": "open", "priority": "high"}},
         {"call": "notes_create_note", "args": {"title": "Open high-priority todos", "folder": "Weekly", "body": body}},
         {"answer": "Listed the two open high-priority todos in a Weekly note."}],
        capability="information-synthesis")


def test_a_note_graded_item_by_item_gathers_each_item() -> None:
    """A lookahead per item ("(?=.*domain…2026-12-04)(?=.*lease…2026-12-09)"): each item's line is
    graded (``DataPattern.matched_parts``), so the note gathers both records; a pattern that only
    looks for a word of the note's own gathers none."""
    items = r"(?is)^(?=.*domain[^\n]{0,40}2026-12-04)(?=.*lease[^\n]{0,40}2026-12-09)"
    verdict = verify_package(_digest(items))
    assert verdict.accepted, [f.message for f in verdict.findings]
    assert Code.CAPABILITY_UNMET.value in verify_package(_digest(r"(?i)due")).codes


def _settlement(request: str, answer: str) -> dict[str, Any]:
    from tests.verify.builders import package
    invoices = [{"id": f"inv-{n}", "customer": "Halden Marine", "amount": amount, "currency": "EUR", "status": status,
                 "due_date": "2026-12-20", "created_at": "2026-11-01T09:00:00Z"}
                for n, amount, status in ((1, 1200.0, "unpaid"), (2, 3400.0, "unpaid"), (3, 900.0, "paid"))]
    doc = package(request, {"finance": {"invoices": invoices}}, ["finance_list_invoices"],
                  [{"id": "amount", "kind": "answer_contains", "weight": 1.0, "values": [answer]}],
                  [{"call": "finance_list_invoices", "args": {"customer": "Halden Marine", "status": "unpaid"}},
                   {"answer": f"Zu überweisen: {answer} EUR."}], capability="information-synthesis")
    doc["request"]["language"] = "de"
    return doc


def test_a_total_with_a_stated_fee_is_an_aggregate_in_any_language() -> None:
    """(1,200 + 3,400) less 5%, plus a flat 25 EUR: 4,395.00. The fee is money the request states,
    read without its words (German here); an amount no group of records gives is no aggregate."""
    german = ("Halden Marine will alle offenen Rechnungen auf einmal begleichen: 5 % Rabatt auf die Summe, danach "
              "25 EUR Bankgebühr obendrauf. Welchen Betrag sollen sie überweisen?")
    assert verify_package(_settlement(german, "4,395.00")).accepted
    assert Code.CAPABILITY_UNMET.value in verify_package(_settlement(german, "4,411.00")).codes


def _roundup(phrases: list[str]) -> dict[str, Any]:
    """A note gathering the published billing articles, each graded by a phrase of its title."""
    from tests.verify.builders import package
    articles = [{"id": f"kb-00{n}", "title": title, "body": "Steps inside.", "category": category, "tags": [],
                 "status": status, "author": "kb-team", "updated_at": "2026-11-20T09:00:00Z"}
                for n, title, category, status in ((1, "Refund requests over the limit", "billing", "published"),
                                                   (2, "Changing the invoice currency", "billing", "published"),
                                                   (3, "Old invoice layout", "billing", "archived"),
                                                   (4, "Resetting a password", "account", "published"))]
    checks = [{"id": f"has-{n}", "kind": "state_count", "weight": round(1 / len(phrases), 6), "collection": "notes.notes",
               "scope": "created", "where": {"body": {"$regex": f"(?i){p}"}}, "op": "==", "value": 1}
              for n, p in enumerate(phrases)]
    return package(
        "Make a note that lists our published billing articles, one line each.",
        {"kb": {"articles": articles}, "notes": {"notes": []}}, ["kb_list_articles", "notes_create_note"], checks,
        [{"call": "kb_list_articles", "args": {}},
         {"call": "notes_create_note", "args": {"title": "Billing articles", "folder": "KB",
                                                "body": "- Refund requests over the limit\n- Changing the invoice currency"}},
         {"answer": "Listed the two published billing articles."}], capability="information-synthesis")


def test_a_phrase_of_a_title_graded_in_a_note_gathers_its_record() -> None:
    """"invoice currency" graded in the note is a phrase of the second article's title: the note
    gathers both articles; single words ("refund") name no record."""
    verdict = verify_package(_roundup(["refund requests", "invoice currency"]))
    assert Code.CAPABILITY_UNMET.value not in verdict.codes, [f.message for f in verdict.findings]
    assert Code.CAPABILITY_UNMET.value in verify_package(_roundup(["refund", "currency"])).codes


def test_an_event_on_a_day_a_note_gives_in_its_own_form_depends_on_the_note() -> None:
    """A rehearsal plan written the German way ("Do 03.12. 19:30 Probe"): each event created on a day
    the note gives depends on reading it; one on a day it does not give does not."""
    from pipeline.verify.contracts import _dependent_steps
    from tests.verify.builders import package, reference_run

    plan = {"id": "note-1", "title": "Probenplan", "body": "Do 03.12. 19:30 Probe\nDo 10.12. 19:30 Probe",
            "folder": "Chor", "tags": [], "pinned": False}

    def events(*days: str) -> int:
        doc = package("Trag die Proben aus dem Probenplan ein.", {"notes": {"notes": [plan]}, "calendar": {"events": []}},
                      ["notes_search_notes", "calendar_create_event"],
                      [{"id": "n", "kind": "state_count", "weight": 1.0, "collection": "calendar.events", "scope": "created",
                        "op": "==", "value": len(days)}],
                      [{"call": "notes_search_notes", "args": {"query": "Probenplan"}},
                       *({"call": "calendar_create_event", "args": {"title": "Probe", "start": f"{d}T19:30"}} for d in days),
                       {"answer": "Eingetragen."}])
        run = reference_run(doc)
        return _dependent_steps(run.package, run.trajectory)

    assert events("2026-12-03", "2026-12-10") == 2
    assert events("2026-12-04") == 0
