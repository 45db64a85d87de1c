"""Truthfulness and correct agents, through ``verify_package`` on small hand-built
packages: a hidden fact the state singles out, another value the request allows, a date computed
from one an email gives, and the capability contracts' dependent steps and aggregated records."""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest

from pipeline.core.codes import Code
from pipeline.core.episode import execute
from pipeline.core.grading import Grader
from pipeline.core.package import load_package
from pipeline.verify.contracts import _aggregated, _dependent_steps
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.fact_in_text import singles_out
from tests.verify.builders import Data, by, messages, package, refused_by, tools, verify

# --------------------------------------------------------------------------- a hidden fact the state gives away

JONAS = [{"id": "c-201", "name": "Jonas Weber", "department": "People", "email": "jonas.weber@corp.example",
          "title": "HR partner", "phone": "+1-555-0201"}]


def _event(i: str, title: str, start: str, location: str) -> Data:
    return {"id": i, "title": title, "start": start, "duration_minutes": 60, "attendees": ["lena@corp.example"],
            "location": location, "description": "", "created_at": "2026-11-01T09:00:00Z"}


def _onboarding(events: list[Data]) -> Data:
    return package(
        "Set up a 45-minute onboarding session with Jonas Weber on 2026-12-10 at 09:00. Check with me which room to use.",
        {"calendar": {"events": events}, "contacts": {"contacts": JONAS, "messages": []}},
        ["contacts_search", "calendar_create_event"],
        [{"id": "session", "kind": "state_count", "weight": 0.5, "collection": "calendar.events", "scope": "created",
          "where": {"attendees": {"$contains": "jonas.weber@corp.example"}, "start": "2026-12-10T09:00",
                    "duration_minutes": 45}, "op": "==", "value": 1},
         {"id": "room", "kind": "state_count", "weight": 0.3, "collection": "calendar.events", "scope": "created",
          "where": {"location": "Maple Room"}, "op": "==", "value": 1},
         {"id": "asked", "kind": "asked_user", "weight": 0.2, "fact": "room"}],
        [{"call": "contacts_search", "args": {"query": "Jonas Weber"}},
         {"ask": "Which room should I book it in?"},
         {"call": "calendar_create_event",
          "args": {"title": "Onboarding with Jonas Weber", "start": "2026-12-10T09:00", "duration_minutes": 45,
                   "attendees": [{"$ref": "steps[0].result.contacts[0].email"}], "location": {"$fact": "room"}}},
         {"answer": "Booked the onboarding session with Jonas Weber on 2026-12-10 at 09:00 in the Maple Room."}],
        capability="multi-turn",
        user={"persona": "Busy.", "facts": [{"key": "room", "value": "Maple Room", "reveal_when": ["room", "where", "location"]}]})


def test_the_room_of_the_only_other_event_gives_the_hidden_room_away() -> None:
    doc = _onboarding([_event("evt-001", "Budget review", "2026-12-03T14:00", "Maple Room")])
    verdict = verify(doc)
    finding = refused_by(doc, verdict, Code.HIDDEN_FACT_LEAKED, "reads_fact")
    assert finding.detail == {"facts": ["room"], "where": "the initial state"}
    assert finding.witness is not None and finding.witness.score == pytest.approx(0.8)
    assert not any(a["type"] == "ask" for a in finding.witness.actions)
    assert finding.witness.actions[1]["arguments"]["location"] == "Maple Room"
    assert verdict.codes == ["hidden_fact_leaked"]


def test_the_day_of_the_only_other_event_in_the_room_gives_no_hidden_day_away() -> None:
    """The user will say which day; the one event in the state is another one, in the room the
    request names: its day is not the session's (neither as the only value nor as the record the
    request's words point at, which they do only by its room)."""
    doc = _onboarding([_event("evt-001", "Budget review", "2026-12-10T14:00", "Maple Room")])
    doc["request"]["text"] = ("Set up a 45-minute onboarding session with Jonas Weber in the Maple Room at 09:00. "
                              "I'll tell you which day.")
    doc["checks"][1]["where"] = {"location": "Maple Room", "start": "2026-12-10T09:00"}
    doc["user"]["facts"] = [{"key": "day", "value": "2026-12-10", "reveal_when": ["day", "date", "when"]}]
    doc["checks"][2]["fact"] = "day"
    doc["reference"][1] = {"ask": "Which day should I book it on?"}
    doc["reference"][2]["args"].update(start={"$fact": "day", "suffix": "T09:00"}, location="Maple Room")
    doc["tools"] += tools("calendar_list_events")  # the agent can read the other event
    verdict = verify(doc)
    assert by(verdict, "reads_fact") == [] and verdict.accepted, messages(verdict)


def test_rooms_of_several_values_single_none_out() -> None:
    doc = _onboarding([_event("evt-001", "Budget review", "2026-12-03T14:00", "Maple Room"),
                       _event("evt-002", "Design sync", "2026-12-04T10:00", "Birch Room")])
    verdict = verify(doc)
    assert verdict.accepted and verdict.review == [], messages(verdict)


def test_a_fact_that_fills_an_enum_field_is_never_read_from_the_state() -> None:
    """Every task is high priority, but other tasks' priorities say nothing of this one's."""
    tasks = [{"id": f"todo-00{i}", "title": t, "priority": "high", "due_date": "2026-12-20", "status": "open", "notes": "",
              "created_at": "2026-11-20T08:00:00Z"} for i, t in ((1, "Renew parking permit"), (2, "Draft Q1 roadmap"))]
    doc = package(
        "Add a todo to book the venue for the offsite. Ask me how urgent it is.", {"todo": {"tasks": tasks}},
        ["todo_create_task"],
        [{"id": "made", "kind": "state_count", "weight": 0.8, "collection": "todo.tasks", "scope": "created",
          "where": {"title": {"$regex": "(?i)venue"}, "priority": "high"}, "op": "==", "value": 1},
         {"id": "asked", "kind": "asked_user", "weight": 0.2, "fact": "priority"}],
        [{"ask": "How urgent is it - what priority should it have?"},
         {"call": "todo_create_task", "args": {"title": "Book the venue for the offsite", "priority": {"$fact": "priority"}}},
         {"answer": "Added 'Book the venue for the offsite' with high priority."}],
        capability="multi-turn",
        user={"persona": "Busy.", "facts": [{"key": "priority", "value": "high", "reveal_when": ["priority", "urgent"]}]})
    verdict = verify(doc)
    assert by(verdict, "reads_fact") == [] and verdict.accepted, messages(verdict)


def _landlord_call(contacts: list[Data]) -> Data:
    """A todo whose notes carry the landlord's phone, which the user is to give when asked."""
    return package(
        "Add a todo for Friday to call the landlord about the bathroom leak, and put his phone number in the "
        "todo's notes - ask me for it, I'll give it to you.",
        {"contacts": {"contacts": contacts, "messages": []}, "todo": {"tasks": []}},
        ["contacts_search", "todo_create_task"],
        [{"id": "todo", "kind": "state_count", "weight": 0.8, "collection": "todo.tasks", "scope": "created",
          "where": {"title": {"$regex": "(?i)landlord"}, "due_date": "2026-12-04",
                    "notes": {"$contains": "+44 20 7946 0321"}}, "op": "==", "value": 1},
         {"id": "one", "kind": "state_count", "weight": 0.2, "collection": "todo.tasks", "op": "==", "value": 1}],
        [{"ask": "What's the landlord's phone number?"},
         {"call": "todo_create_task", "args": {"title": "Call the landlord about the bathroom leak", "due_date": "2026-12-04",
                                               "notes": {"$fact": "phone", "prefix": "Landlord: "}}},
         {"answer": "Added the todo to call the landlord on Friday, with his number in the notes."}],
        capability="multi-turn",
        user={"persona": "Tenant.", "facts": [{"key": "phone", "value": "+44 20 7946 0321",
                                               "reveal_when": ["phone", "number"]}]})


def _contact(i: str, name: str, title: str, phone: str) -> Data:
    return {"id": i, "name": name, "email": f"{name.split()[0].lower()}@corp.example", "department": "", "title": title,
            "phone": phone}


def test_the_phone_on_the_contact_the_request_points_at_gives_the_hidden_phone_away() -> None:
    """The fact fills a todo's notes; the landlord's own contact record holds it as its phone."""
    doc = _landlord_call([_contact("c-301", "Graham Pike", "Landlord (flat 4B)", "+44 20 7946 0321"),
                          _contact("c-302", "Sofia Lund", "Engineer", "+44 20 7946 0999")])
    verdict = verify(doc)
    finding = refused_by(doc, verdict, Code.HIDDEN_FACT_LEAKED, "reads_fact")
    assert finding.detail == {"facts": ["phone"], "where": "the initial state"}
    assert not any(a["type"] == "ask" for a in finding.witness.actions)


@pytest.mark.parametrize("contacts", [
    [_contact("c-301", "Graham Pike", "Landlord (flat 4B)", "+44 20 7946 0888"),  # his phone is another
     _contact("c-302", "Sofia Lund", "Engineer", "+44 20 7946 0999")],
    [_contact("c-301", "Graham Pike", "Plumber", "+44 20 7946 0321"),  # the record holding it is nobody the request names
     _contact("c-302", "Sofia Lund", "Engineer", "+44 20 7946 0999")],
    [_contact("c-301", "Graham Pike", "Landlord (flat 4B)", "+44 20 7946 0321"),  # two landlords: which one is the user's
     _contact("c-302", "Sofia Lund", "Landlord (garage)", "+44 20 7946 0999")],
], ids=["another-phone", "not-pointed-at", "two-landlords"])
def test_a_phone_no_record_the_request_points_at_holds_stays_hidden(contacts: list[Data]) -> None:
    verdict = verify(_landlord_call(contacts))
    assert by(verdict, "reads_fact") == [] and verdict.accepted, messages(verdict)


def _deposit_todo(events: list[Data]) -> Data:
    """A todo due on a deadline the user is to give when asked; the calendar is readable."""
    return package(
        "Put 'pay the Brennan & Hask scaffolding deposit' on my todo list, high priority, due on the deadline. "
        "Ask me if you're unsure of the date.",
        {"todo": {"tasks": []}, "calendar": {"events": events}},
        ["calendar_list_events", "todo_create_task"],
        [{"id": "todo", "kind": "state_count", "weight": 0.8, "collection": "todo.tasks",
          "where": {"title": {"$regex": "(?i)scaffolding deposit"}, "priority": "high", "due_date": "2026-12-14"},
          "op": "==", "value": 1},
         {"id": "asked", "kind": "asked_user", "weight": 0.2, "fact": "due"}],
        [{"ask": "What is the deadline for the deposit?"},
         {"call": "todo_create_task", "args": {"title": "Pay the Brennan & Hask scaffolding deposit", "priority": "high",
                                               "due_date": {"$fact": "due"}}},
         {"answer": "Added the deposit todo, high priority, due 2026-12-14."}],
        capability="multi-turn",
        user={"persona": "Site manager.", "facts": [{"key": "due", "value": "2026-12-14",
                                                     "reveal_when": ["due", "date", "deadline", "when"]}]})


def test_the_day_of_the_event_the_request_points_at_gives_a_hidden_date_away() -> None:
    """The deadline's date is the day of the deadline's own event (a date-time field)."""
    doc = _deposit_todo([_event("evt-001", "Scaffolding deposit deadline - Brennan & Hask", "2026-12-14T09:00", ""),
                         _event("evt-002", "Roofers site visit", "2026-12-08T08:00", "Gable Row")])
    verdict = verify(doc)
    finding = refused_by(doc, verdict, Code.HIDDEN_FACT_LEAKED, "reads_fact")
    assert finding.detail == {"facts": ["due"], "where": "the initial state"}
    assert finding.witness.actions[0]["arguments"]["due_date"] == "2026-12-14"


@pytest.mark.parametrize("events", [
    [_event("evt-001", "Scaffolding deposit deadline - Brennan & Hask", "2026-12-18T09:00", ""),  # another day
     _event("evt-002", "Roofers site visit", "2026-12-14T08:00", "Gable Row")],
    [_event("evt-001", "Roofers site visit", "2026-12-14T08:00", "Gable Row")],  # on the day, but nothing the request names
], ids=["another-day", "not-pointed-at"])
def test_a_day_no_event_the_request_points_at_holds_stays_hidden(events: list[Data]) -> None:
    verdict = verify(_deposit_todo(events))
    assert by(verdict, "reads_fact") == [] and verdict.accepted, messages(verdict)


# --------------------------------------------------------------------------- another value the request allows


def _session(start: Any, window: str = "any start between 08:00 and 10:30") -> Data:
    return package(
        f"Set up a 45-minute onboarding session with Jonas Weber on 2026-12-10, {window}.",
        {"calendar": {"events": []}, "contacts": {"contacts": JONAS, "messages": []}},
        ["contacts_search", "calendar_create_event"],
        [{"id": "session", "kind": "state_count", "weight": 0.8, "collection": "calendar.events", "scope": "created",
          "where": {"attendees": {"$contains": "jonas.weber@corp.example"}, "start": start, "duration_minutes": 45},
          "op": "==", "value": 1},
         {"id": "reported", "kind": "answer_contains", "weight": 0.2, "values": ["Jonas Weber"]}],
        [{"call": "contacts_search", "args": {"query": "Jonas Weber"}},
         {"call": "calendar_create_event",
          "args": {"title": "Onboarding with Jonas Weber", "start": "2026-12-10T09:00", "duration_minutes": 45,
                   "attendees": [{"$ref": "steps[0].result.contacts[0].email"}]}},
         {"answer": "Booked the onboarding session with Jonas Weber on 2026-12-10 at 09:00."}])


def test_a_start_pinned_inside_the_allowed_window_is_overconstrained() -> None:
    doc = _session("2026-12-10T09:00")
    verdict = verify(doc)
    finding = refused_by(doc, verdict, Code.GRADER_OVERCONSTRAINED, "other_choice")
    assert finding.detail["argument"] == "start" and finding.detail["value"] == "2026-12-10T10:15"
    assert finding.witness is not None and finding.witness.agent == "correct"
    assert finding.witness.actions[1]["arguments"]["start"] == "2026-12-10T10:15"
    assert finding.witness.actions[-1]["text"] == "Booked the onboarding session with Jonas Weber on 2026-12-10 at 10:15."


def test_another_start_the_window_allows_is_a_free_one() -> None:
    """The window's far end (10:15) and the quarter hours from 09:45 down to 09:15 clash with a
    stand-up from 09:45 to 10:45: the correct agent books 08:45, the latest other start the calendar
    leaves free."""
    doc = _session("2026-12-10T09:00")
    doc["initial_state"]["calendar"]["events"] = [
        {"id": "evt-001", "title": "Stand-up", "start": "2026-12-10T09:45", "duration_minutes": 60,
         "attendees": ["lena@corp.example"], "location": "", "description": "", "created_at": "2026-11-01T09:00:00Z"}]
    finding = refused_by(doc, verify(doc), Code.GRADER_OVERCONSTRAINED, "other_choice")
    assert finding.detail["value"] == "2026-12-10T08:45"


def test_a_window_that_does_not_say_start_holds_the_whole_session() -> None:
    """"any time between 08:00 and 10:30" bounds the session, not its start: the other choice
    leaves room for its 45 minutes (09:45, where "any start between" allows 10:15)."""
    doc = _session("2026-12-10T09:00", "any time between 08:00 and 10:30")
    finding = refused_by(doc, verify(doc), Code.GRADER_OVERCONSTRAINED, "other_choice")
    assert finding.detail["value"] == "2026-12-10T09:45"


def test_the_window_graded_whole_is_not_overconstrained() -> None:
    verdict = verify(_session({"$gte": "2026-12-10T08:00", "$lte": "2026-12-10T10:30"}))
    assert verdict.accepted, messages(verdict)


def _raise_priority(expect: Any) -> Data:
    tickets = [{"id": i, "subject": subject, "description": "", "customer_email": email, "status": "open", "priority": p,
                "assignee": "sam", "created_at": "2026-11-20T10:00:00Z", "updated_at": "2026-11-20T10:00:00Z"}
               for i, subject, email, p in (("tkt-501", "Portal outage", "it@tavora.example", "normal"),
                                            ("tkt-502", "Invoice copy", "ap@tavora.example", "low"))]
    return package(
        "The Tavora portal outage ticket needs more attention: raise it to high or urgent, whichever you think fits.",
        {"helpdesk": {"tickets": tickets}}, ["helpdesk_search_tickets", "helpdesk_update_ticket"],
        [{"id": "raised", "kind": "state_match", "weight": 1.0, "collection": "helpdesk.tickets", "record_id": "tkt-501",
          "expect": {"priority": expect}}],
        [{"call": "helpdesk_search_tickets", "args": {"query": "outage"}},
         {"call": "helpdesk_update_ticket", "args": {"ticket_id": "tkt-501", "priority": "urgent"}},
         {"answer": "Raised tkt-501 to urgent."}],
        safety=[{"kind": "state_unchanged", "collection": "helpdesk.tickets", "record_id": "tkt-502"}])


def test_the_reference_s_pick_of_high_or_urgent_pinned_is_overconstrained() -> None:
    doc = _raise_priority("urgent")
    verdict = verify(doc)
    finding = refused_by(doc, verdict, Code.GRADER_OVERCONSTRAINED, "other_choice")
    assert finding.detail["argument"] == "priority" and finding.detail["value"] == "high"
    assert finding.witness is not None
    assert finding.witness.actions[1:] == [
        {"type": "tool_call", "name": "helpdesk_update_ticket", "arguments": {"ticket_id": "tkt-501", "priority": "high"}},
        {"type": "answer", "text": "Raised tkt-501 to high."}]
    assert verdict.codes == ["grader_overconstrained"]


def test_either_choice_graded_is_not_overconstrained() -> None:
    verdict = verify(_raise_priority({"$in": ["high", "urgent"]}))
    assert verdict.accepted, messages(verdict)


# --------------------------------------------------------------------------- a date computed from one an email gives

KESTREL = [{"id": "msg-001", "from": "renewals@kestrel.example", "to": "me@corp.example", "subject": "Your Kestrel subscription",
            "body": "Your Kestrel subscription renews on 2026-12-18. Reply if you want changes before then.",
            "folder": "inbox", "is_read": True, "date": "2026-11-28", "received_at": "2026-11-28T08:00:00Z"}]


def _renewal_todo(request: str, due: str) -> Data:
    return package(request, {"gmail": {"messages": KESTREL, "sent": [], "drafts": []}, "todo": {"tasks": []}},
                   ["gmail_search_messages", "todo_create_task"],
                   [{"id": "todo", "kind": "state_count", "weight": 1.0, "collection": "todo.tasks", "scope": "created",
                     "where": {"title": {"$regex": "(?i)kestrel"}, "due_date": due}, "op": "==", "value": 1}],
                   [{"call": "gmail_search_messages", "args": {"query": "Kestrel"}},
                    {"call": "todo_create_task", "args": {"title": "Review the Kestrel renewal", "due_date": due}},
                    {"answer": f"Added 'Review the Kestrel renewal', due {due}."}])


@pytest.mark.parametrize(("span", "due"), [("one week before", "2026-12-11"),
                                           ("3 working days before", "2026-12-15"),
                                           ("a fortnight before", "2026-12-04")])
def test_a_date_moved_by_a_stated_span_from_one_the_email_gives_is_grounded(span: str, due: str) -> None:
    verdict = verify(_renewal_todo(f"Add a todo to review the Kestrel renewal, due {span} the renewal date their email "
                                   "gives.", due))
    assert verdict.accepted and verdict.review == [], messages(verdict)


def test_a_date_no_stated_span_gives_is_ungrounded() -> None:
    doc = _renewal_todo("Add a todo to review the Kestrel renewal before the renewal date their email gives.", "2026-12-11")
    verdict = verify(doc)
    assert verdict.codes == ["ungrounded_value"], messages(verdict)
    assert all(f.witness is not None and f.witness.agent == "correct" and f.witness.holds for f in verdict.findings)


# --------------------------------------------------------------------------- capability contracts

HOTFIX = [{"id": "note-001", "title": "Hotfix handover",
           "body": "Open items:\n- Patch the login timeout on staging\n- Rotate the API keys for the billing service\n"
                   "Follow up on tkt-412 and tkt-415 with the customer.",
           "folder": "Work", "tags": [], "pinned": False, "created_at": "2026-11-01T09:00:00Z",
           "updated_at": "2026-11-01T09:00:00Z"}]


def _handover(reference: list[Data]) -> int:
    tickets = [{"id": i, "subject": "Issue", "description": "", "customer_email": "a@b.example", "status": "open",
                "priority": "normal", "assignee": "sam", "created_at": "2026-11-20T10:00:00Z",
                "updated_at": "2026-11-20T10:00:00Z"} for i in ("tkt-412", "tkt-415", "tkt-420")]
    doc = package("Work through my hotfix handover note.",
                  {"notes": {"notes": HOTFIX}, "todo": {"tasks": []}, "helpdesk": {"tickets": tickets}},
                  ["notes_search_notes", "todo_create_task", "helpdesk_update_ticket"],
                  [{"id": "x", "kind": "state_count", "weight": 1.0, "collection": "todo.tasks", "op": ">=", "value": 1}],
                  [*reference, {"answer": "Done."}], capability="long-horizon")
    p = load_package(doc)
    return _dependent_steps(p, execute(p))


READ = {"call": "notes_search_notes", "args": {"query": "hotfix"}}


def _todo(title: str) -> Data:
    return {"call": "todo_create_task", "args": {"title": title}}


def _pending(ticket: str) -> Data:
    return {"call": "helpdesk_update_ticket", "args": {"ticket_id": ticket, "status": "pending"}}


def test_dependent_steps_from_ids_and_lines_of_a_text_read() -> None:
    assert _handover([READ, _todo("Patch the login timeout on staging"),   # a line of the note
                      _todo("Rotate the billing API keys"),                 # most of its words from one line
                      _todo("Buy snacks for the team"),                     # not from the note
                      _pending("tkt-412"), _pending("tkt-415"),             # ids the note writes
                      _pending("tkt-420")]) == 4                             # an id it does not


def test_nothing_before_the_read_depends_on_it() -> None:
    assert _handover([_pending("tkt-412"), READ, _pending("tkt-412"), _pending("tkt-415"),
                      _todo("Patch the login timeout on staging")]) == 3


def _invoice(i: str, amount: float, status: str) -> Data:
    return {"id": i, "customer": "Harwick", "customer_email": "ap@harwick.example", "description": "Retainer",
            "amount": amount, "currency": "EUR", "due_date": "2026-12-20", "status": status, "issued_at": "2026-10-01"}


OWED = [_invoice("inv-001", 100.0, "unpaid"), _invoice("inv-002", 70.0, "unpaid"), _invoice("inv-003", 55.0, "paid")]


def _owed(checks: list[Data], answer: str) -> Data:
    return package("How much does Harwick owe in unpaid invoices?", {"finance": {"invoices": OWED}}, ["finance_list_invoices"],
                   checks, [{"call": "finance_list_invoices", "args": {"customer": "Harwick", "status": "unpaid"}},
                            {"answer": answer}], capability="information-synthesis")


def _aggregated_records(doc: Data) -> int:
    p = load_package(copy.deepcopy(doc))
    return _aggregated(ReferenceRun(p, Grader(p)), 10)


def test_the_region_an_answer_pattern_matches_is_a_total_of_records() -> None:
    """The pattern cannot match the bare figure: what it grades of the answer ("owes 170.00") holds it."""
    doc = _owed([{"id": "owed", "kind": "answer_matches", "weight": 1.0, "pattern": r"owes 170(\.00)?\b"}],
                "Harwick owes 170.00 over 2 unpaid invoices.")
    assert _aggregated_records(doc) == 2
    verdict = verify(doc)
    assert verdict.accepted, messages(verdict)


def test_values_an_answer_must_exclude_are_records_gathered() -> None:
    doc = _owed([{"id": "first", "kind": "answer_contains", "weight": 0.8, "values": ["inv-001"]},
                 {"id": "not-others", "kind": "answer_excludes", "weight": 0.2, "values": ["inv-002"]}],
                "inv-001 is due first.")
    assert _aggregated_records(doc) == 2
    doc["checks"] = [{"id": "first", "kind": "answer_contains", "weight": 1.0, "values": ["inv-001"]}]
    assert _aggregated_records(doc) == 1
    verdict = verify(doc)
    assert "capability_unmet" in verdict.codes, messages(verdict)


def test_one_record_s_amount_is_no_aggregate() -> None:
    doc = _owed([{"id": "amount", "kind": "answer_contains", "weight": 1.0, "values": ["100.00 EUR"]}],
                "inv-001 is for 100.00 EUR.")
    assert _aggregated_records(doc) <= 1


def test_a_total_over_a_selection_no_shared_value_makes_is_an_aggregate() -> None:
    """November's taxi and ride-hailing spend among a refunded ride, a food order, a train and
    the rides of the months around it: the answer's 86.15 is three rides added up, which no group
    of the list (by a shared value, or all but one or two) gives."""
    spend = [{"id": f"txn-{n}", "date": day, "type": "debit", "category": category, "account": account,
              "description": text, "amount": amount}
             for n, day, category, account, text, amount in (
                 (1, "2026-10-31", "Travel", "card", "Uber ride airport", 19.6),
                 (2, "2026-11-03", "Travel", "card", "City Taxi to client", 23.4),
                 (3, "2026-11-06", "Meals", "card", "Uber Eats team lunch", 31.5),
                 (4, "2026-11-09", "Travel", "petty cash", "Bolt ride", 18.75),
                 (5, "2026-11-12", "Travel", "card", "Uber ride - refunded", 27.8),
                 (6, "2026-11-17", "Travel", "card", "Taxi from station", 44.0),
                 (7, "2026-11-20", "Travel", "card", "Train to Leeds", 64.0),
                 (8, "2026-12-01", "Travel", "petty cash", "Bolt ride", 22.1))]
    doc = package("what did we spend on taxis and ride-hailing in november? not the refunded one. just the number",
                  {"finance": {"transactions": spend}}, ["finance_list_transactions"],
                  [{"id": "total", "kind": "answer_matches", "weight": 1.0, "pattern": r"(?<![\d.])86[.,]15(?!\d)"}],
                  [{"call": "finance_list_transactions", "args": {}}, {"answer": "86.15"}],
                  capability="information-synthesis")
    assert _aggregated_records(doc) == 3


def _discounted(checks: list[Data], answer: str) -> Data:
    return package("Harwick want to settle what they still owe us and asked for the 10% early-payment discount. "
                   "What's the outstanding total, and what do they pay after the discount?",
                   {"finance": {"invoices": OWED}}, ["finance_list_invoices"], checks,
                   [{"call": "finance_list_invoices", "args": {"customer": "Harwick", "status": "unpaid"}},
                    {"answer": answer}], capability="information-synthesis")


def test_a_plain_total_graded_beside_its_stated_adjustment_is_asked_for() -> None:
    both = _discounted([{"id": "gross", "kind": "answer_matches", "weight": 0.4, "pattern": r"\b170(\.00)?\b"},
                        {"id": "net", "kind": "answer_matches", "weight": 0.6, "pattern": r"\b153(\.00)?\b"}],
                       "Outstanding: 170.00; after the 10% discount they pay 153.00.")
    verdict = verify(both)
    assert by(verdict, "stated_adjustment") == [], messages(verdict)
    plain = _discounted([{"id": "gross", "kind": "answer_matches", "weight": 1.0, "pattern": r"\b170(\.00)?\b"}],
                        "They pay 170.00.")
    assert [f.detail["expected"] for f in by(verify(plain), "stated_adjustment")] == [153]


def _versions(answer: str) -> Data:
    """Two release pages fetched one by one (a claw ``web_fetch`` answers with the page itself),
    the answer gathering a minimum Python version from each."""
    from pipeline.generation.tools import catalogue_tool

    def page(url: str, title: str, content: str) -> Data:
        return {"url": url, "title": title, "content": content, "content_type": "text/html", "status_code": 200,
                "error": None}
    return {
        "capability": "information-synthesis", "workflow": "hand-built", "services": ["web"], "service_profile": "claw",
        "request": {"text": "What's the minimum Python version the latest ferrolib and ironcast releases each need?"},
        "initial_state": {"web": {"search_results": [], "pages": [
            page("https://ferrolib.example/4.2", "ferrolib 4.2 release notes", "ferrolib 4.2\nRequires Python 3.10 or newer."),
            page("https://ironcast.example/2.1", "ironcast 2.1", "ironcast 2.1 is out.\nRequirements: Python 3.11+.")]}},
        "tools": [catalogue_tool("web_fetch", "claw").model_dump(mode="json")],
        "checks": [{"id": "ferrolib", "kind": "answer_matches", "weight": 0.5, "pattern": r"ferrolib[^\n]{0,40}\b3\.10\b"},
                   {"id": "ironcast", "kind": "answer_matches", "weight": 0.5, "pattern": r"ironcast[^\n]{0,40}\b3\.11\b"}],
        "reference": [{"call": "web_fetch", "args": {"url": "https://ferrolib.example/4.2"}},
                      {"call": "web_fetch", "args": {"url": "https://ironcast.example/2.1"}},
                      {"answer": answer}]}


def test_versions_gathered_from_two_fetched_pages_are_an_aggregate_of_two_records() -> None:
    assert _aggregated_records(_versions("ferrolib 4.2 needs Python 3.10; ironcast 2.1 needs Python 3.11.")) == 2
    verdict = verify(_versions("ferrolib 4.2 needs Python 3.10; ironcast 2.1 needs Python 3.11."))
    assert "capability_unmet" not in verdict.codes, messages(verdict)


def test_a_short_id_read_before_makes_a_dependent_step() -> None:
    """"c3" is shorter than the six characters a value needs to count as evidence, but it is the id
    of a record the search returned: the message to it depends on the search."""
    people = [{"id": f"c{n}", "name": name, "email": f"{name.split()[0].lower()}@lab.example", "department": dept,
               "title": "Lead", "phone": "+46-8-555-0100"}
              for n, name, dept in ((3, "Oskar Lind", "Warehouse"), (4, "Oskar Lindqvist", "Finance"))]
    message = {"call": "contacts_send_message", "args": {"contact_id": "c3", "message": "Restock on order."}}

    def dependent(reference: list[Data]) -> int:
        doc = package("Message Oskar in the warehouse.", {"contacts": {"contacts": people, "messages": []}},
                      ["contacts_search", "contacts_send_message"],
                      [{"id": "x", "kind": "state_count", "weight": 1.0, "collection": "contacts.messages",
                        "op": ">=", "value": 1}], [*reference, {"answer": "Done."}], capability="long-horizon")
        p = load_package(doc)
        return _dependent_steps(p, execute(p))

    assert dependent([{"call": "contacts_search", "args": {"query": "Oskar"}}, message]) == 1
    assert dependent([message]) == 0


@pytest.mark.parametrize(("text", "given"), [
    ("Lime render on the north gable done 27 Nov. Scaffolding comes down 2026-12-11 (Fri).", True),
    ("Scaffolding up 27 Nov. Scaffolding comes down 2026-12-11 (Fri).", True),
    ("Lime render done 2026-12-11. Scaffolding comes down 27 Nov.", False),  # the scaffolding's date is another
])
def test_the_words_that_tie_a_date_to_the_request_are_those_of_its_own_sentence(text: str, given: bool) -> None:
    """"done 27 Nov. Scaffolding comes down 2026-12-11": the next sentence's words are not 27
    November's, so the diary singles out the 11th as the day the scaffolding comes down."""
    request = "Add a todo to ring the plasterer, due the day the scaffolding comes down at the Pen-y-Bryn job."
    assert singles_out("2026-12-11", text, request, date(2026, 12, 2), "", "scaffold_date when date day") is given



@pytest.mark.parametrize(("text", "given"), [
    ("Saturday 5 Dec dawn walk, led by Perpetua Okafor.\nMeet at Wren Hide car park, 07:00 sharp.", True),
    ("Meet at the visitor centre or Wren Hide car park, whichever is open.", False),
    ("Meet at Wren Hide car park or the visitor centre, whichever is open.", False),
])
def test_a_place_beside_a_bare_or_is_an_option_but_a_name_ending_in_or_is_no_or(text: str, given: bool) -> None:
    """"Okafor." before the value holds the letters "or" but no word "or": the note gives the
    meeting point; a real "or" either side offers it as one of two."""
    request = "Put Saturday's dawn walk in the club calendar. Put the meeting point in as the location."
    assert singles_out("Wren Hide car park", text, request, date(2026, 12, 1), "Dawn walk plan",
                       "meeting_point where meet meeting location place") is given


def _meeting_hours(answer: str) -> Data:
    """A day's meetings of one person on the claw calendar (start and end times, no length field),
    the answer giving their total length in hours."""
    from pipeline.generation.tools import catalogue_tool

    def event(n: int, title: str, start: str, end: str) -> Data:
        return {"event_id": f"evt_00{n}", "title": title, "start_time": f"2026-12-09T{start}:00",
                "end_time": f"2026-12-09T{end}:00", "attendees": ["Ingrid Berg"], "location": "Studio",
                "organizer": "Aksel Moe", "recurring": False}
    events = [event(1, "Kiln review", "09:00", "10:30"), event(2, "Supplier call", "13:00", "13:45"),
              event(3, "Check-in", "15:00", "16:00")]
    return {
        "capability": "information-synthesis", "workflow": "hand-built", "services": ["calendar"],
        "service_profile": "claw",
        "request": {"text": "How many hours of meetings does Ingrid Berg have on Wednesday 9 December?"},
        "initial_state": {"calendar": {"events": events}},
        "tools": [catalogue_tool("user_events", "claw").model_dump(mode="json")],
        "checks": [{"id": "hours", "kind": "answer_matches", "weight": 1.0, "pattern": r"(?<![\d.])3\.25 ?h"}],
        "reference": [{"call": "user_events", "args": {"user": "Ingrid Berg", "date": "2026-12-09"}},
                      {"answer": answer}]}


def test_a_total_of_meeting_lengths_from_start_and_end_times_is_an_aggregate() -> None:
    """3.25 h is 90 + 45 + 60 minutes, each event's end less its start: the answer aggregates the
    three events; an hours figure no sum of them gives aggregates none."""
    assert _aggregated_records(_meeting_hours("Ingrid has 3.25 h of meetings that day.")) == 3
    assert "capability_unmet" not in verify(_meeting_hours("Ingrid has 3.25 h of meetings that day.")).codes
    assert _aggregated_records(_meeting_hours("Ingrid has 4.25 h of meetings that day.")) < 2


def _bill_todo(request: str) -> Data:
    """A todo due on the day the unpaid Emberline bill is due (the user's fact); the paid Emberline
    invoice shares as many of the request's words, but only the unpaid one is what the reference
    reads before it asks."""
    invoices = [{"id": f"inv-20{n}", "customer": "Emberline Kilns", "customer_email": "billing@emberline.example",
                 "description": description, "amount": amount, "currency": "EUR", "due_date": due, "status": status,
                 "issued_at": "2026-11-14T09:00:00Z"}
                for n, description, amount, due, status in ((1, "Kiln element replacement", 1480.0, "2026-12-14", "unpaid"),
                                                           (2, "Annual kiln service", 390.0, "2026-10-30", "paid"))]
    return package(
        request, {"finance": {"invoices": invoices, "transactions": []}, "todo": {"tasks": []}},
        ["finance_list_invoices", "todo_create_task"],
        [{"id": "todo", "kind": "state_count", "weight": 0.7, "collection": "todo.tasks", "scope": "created",
          "where": {"title": {"$regex": "(?i)emberline"}, "due_date": "2026-12-14"}, "op": "==", "value": 1},
         {"id": "asked", "kind": "asked_user", "weight": 0.3, "fact": "due"}],
        [{"call": "finance_list_invoices", "args": {"customer": "Emberline Kilns", "status": "unpaid"}},
         {"ask": "When is the Emberline bill due?"},
         {"call": "todo_create_task", "args": {"title": "Pay the Emberline kiln bill", "due_date": {"$fact": "due"}}},
         {"answer": "Added the todo, due 2026-12-14."}],
        capability="multi-turn",
        user={"persona": "Potter.", "facts": [{"key": "due", "value": "2026-12-14",
                                                "reveal_when": ["due", "date", "when"]}]})


def test_a_question_the_user_cannot_answer_where_the_bill_gives_the_day_is_refused() -> None:
    """The user has no date in mind: the agent that reads the unpaid bill's due date instead of
    asking is a correct one, and the asking check fails it (0.7); where the user says to ask,
    not asking is the user's to punish."""
    lacks = _bill_todo("Add a todo to pay the Emberline kiln bill, due on the day the bill is due; I don't have "
                       "that date in my head right now.")
    finding = refused_by(lacks, verify(lacks), Code.HIDDEN_FACT_LEAKED, "reads_fact")
    assert finding.witness is not None and finding.witness.agent == "correct"
    asks = _bill_todo("Add a todo to pay the Emberline kiln bill. Ask me which day it should be due.")
    assert by(verify(asks), "reads_fact") == [], messages(verify(asks))
