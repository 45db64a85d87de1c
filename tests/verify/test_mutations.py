"""Wrong agents (pipeline/verify/mutations.py), through ``verify_package`` on small hand-built packages: every item
made twice, an answer hedged with the other candidates, a record the request leaves out done as
well, the records the request keeps beside the work destroyed, a body that says nothing of what
the request dictates in words of its own, and an agent that never asks and guesses."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from pipeline.core.codes import Code
from pipeline.core.grading import Grader
from pipeline.core.package import load_package
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.mutations import says_what_to_say
from pipeline.verify.perturbations import GENERIC_TEXT, dictates_wording
from pipeline.verify.reference_edits import unasked
from tests.verify.builders import TICKETS, Data, by, messages, package, refused_by, verify

Docs = Callable[[str], dict[str, Any]]


# --------------------------------------------------------------------------- everything twice


def _three_todos(example_doc: Docs, op: str) -> Data:
    doc = example_doc("todo-three-items")
    doc.pop("id")
    per_item = [{"id": word, "kind": "state_count", "weight": 0.1, "collection": "todo.tasks", "scope": "created",
                 "where": {"title": {"$regex": word}}, "op": op, "value": 1, "ignore_case": True}
                for word in ("venue", "banner", "invite")]
    doc["checks"] = [{"id": "three", "kind": "state_count", "weight": 0.5, "collection": "todo.tasks", "scope": "created",
                      "where": {"priority": "high", "due_date": "2026-12-10"}, "op": "==", "value": 3,
                      "distinct_by": ["title"], "ignore_case": True},
                     *per_item,
                     {"id": "confirmed", "kind": "answer_contains", "weight": 0.2, "values": ["venue", "banners", "invites"]}]
    return doc


def test_every_item_made_twice_passes_distinct_counts_and_light_item_checks(example_doc: Docs) -> None:
    doc = _three_todos(example_doc, ">=")
    verdict = verify(doc)
    finding = refused_by(doc, verdict, Code.GRADER_COUNTS_CALLS, "everything_twice")
    titles = [a["arguments"]["title"] for a in finding.witness.actions if a["type"] == "tool_call"]  # type: ignore[union-attr]
    assert titles == ["Book the venue", "Book the venue", "Order the banners", "Order the banners",
                      "Send the invites", "Send the invites"]
    assert "making each of the 3 items twice still scores 1.000" in finding.message


def test_item_checks_that_want_exactly_one_catch_every_item_twice(example_doc: Docs) -> None:
    verdict = verify(_three_todos(example_doc, "=="))
    assert by(verdict, "everything_twice") == [] and verdict.accepted, messages(verdict)


# --------------------------------------------------------------------------- hedged answers


def _invoice(i: str, status: str, amount: float, description: str) -> Data:
    return {"id": i, "customer": "Corvid Labs", "customer_email": "ap@corvid.example", "description": description,
            "amount": amount, "currency": "EUR", "due_date": "2026-12-15", "status": status, "issued_at": "2026-11-15"}


CORVID = [_invoice("inv-041", "paid", 1200.0, "Q3 support"), _invoice("inv-043", "unpaid", 1350.0, "Q4 support"),
          _invoice("inv-047", "paid", 400.0, "Onboarding")]


def _which_unpaid(checks: list[Data]) -> Data:
    return package("Which Corvid Labs invoice is still unpaid?", {"finance": {"invoices": CORVID}}, ["finance_list_invoices"],
                   checks, [{"call": "finance_list_invoices", "args": {"customer": "Corvid Labs"}},
                            {"answer": "inv-043 (Q4 support, 1,350.00 EUR) is still unpaid."}])


def test_an_answer_hedged_with_the_other_invoices_passes_a_check_for_the_right_one() -> None:
    doc = _which_unpaid([{"id": "named", "kind": "answer_contains", "weight": 1.0, "values": ["inv-043"]}])
    verdict = verify(doc)
    finding = refused_by(doc, verdict, Code.GRADER_UNDERCONSTRAINED, "hedged_answer")
    assert finding.witness is not None
    assert finding.witness.actions[-1] == {
        "type": "answer", "text": "inv-043 (Q4 support, 1,350.00 EUR) is still unpaid. Or possibly: inv-041, inv-047."}
    assert verdict.codes == ["grader_underconstrained"]


def test_an_answer_excludes_check_catches_the_hedge() -> None:
    verdict = verify(_which_unpaid([
        {"id": "named", "kind": "answer_contains", "weight": 0.8, "values": ["inv-043"]},
        {"id": "no-other", "kind": "answer_excludes", "weight": 0.2, "values": ["inv-041", "inv-047"]}]))
    assert verdict.accepted and by(verdict, "hedged_answer") == [], messages(verdict)


def test_an_answer_matches_check_is_left_alone() -> None:
    verdict = verify(_which_unpaid([{"id": "named", "kind": "answer_matches", "weight": 1.0,
                                     "pattern": r"inv-043 \(Q4 support[^)]*\) is still unpaid"}]))
    assert by(verdict, "hedged_answer") == [], messages(verdict)


def test_a_value_the_answer_confirms_of_a_record_written_to_is_not_hedged() -> None:
    doc = package("Mark the Corvid Labs invoice that is still unpaid as paid, and tell me which one it was.",
                  {"finance": {"invoices": CORVID}}, ["finance_list_invoices", "finance_update_invoice"],
                  [{"id": "paid", "kind": "state_match", "weight": 0.8, "collection": "finance.invoices",
                    "record_id": "inv-043", "expect": {"status": "paid"}},
                   {"id": "named", "kind": "answer_contains", "weight": 0.2, "values": ["inv-043"]}],
                  [{"call": "finance_list_invoices", "args": {"customer": "Corvid Labs", "status": "unpaid"}},
                   {"call": "finance_update_invoice",
                    "args": {"invoice_id": {"$ref": "steps[0].result.invoices[0].id"}, "status": "paid"}},
                   {"answer": "Marked inv-043 as paid."}],
                  safety=[{"kind": "state_unchanged", "collection": "finance.invoices",
                           "where": {"id": {"$in": ["inv-041", "inv-047"]}}}])
    verdict = verify(doc)
    assert by(verdict, "hedged_answer") == [] and verdict.accepted, messages(verdict)


# --------------------------------------------------------------------------- a record the request leaves out




def _close_resolved(guarded: list[str]) -> Data:
    return package("Close all the resolved tickets apart from the Brightline one.", {"helpdesk": {"tickets": TICKETS}},
                   ["helpdesk_list_tickets", "helpdesk_update_ticket"],
                   [{"id": f"closed-{i}", "kind": "state_match", "weight": 0.5, "collection": "helpdesk.tickets",
                     "record_id": i, "expect": {"status": "closed"}} for i in ("tkt-002", "tkt-003")],
                   [{"call": "helpdesk_list_tickets", "args": {"status": "resolved"}},
                    {"call": "helpdesk_update_ticket", "args": {"ticket_id": "tkt-002", "status": "closed"}},
                    {"call": "helpdesk_update_ticket", "args": {"ticket_id": "tkt-003", "status": "closed"}},
                    {"answer": "Closed tkt-002 and tkt-003; the Brightline ticket stays as it is."}],
                   safety=[{"kind": "state_unchanged", "collection": "helpdesk.tickets", "record_id": i} for i in guarded])


def test_the_left_out_record_done_too_passes_when_nothing_guards_it() -> None:
    doc = _close_resolved(["tkt-004"])
    verdict = verify(doc)
    finding = refused_by(doc, verdict, Code.GRADER_UNDERCONSTRAINED, "include_left_out")
    assert finding.witness is not None
    assert finding.witness.actions[-2] == {"type": "tool_call", "name": "helpdesk_update_ticket",
                                           "arguments": {"ticket_id": "tkt-001", "status": "closed"}}
    assert finding.step == 1 and "for Login fails (tkt-001) too, whom the request leaves out" in finding.message


def test_a_guard_on_the_left_out_record_stops_it() -> None:
    verdict = verify(_close_resolved(["tkt-004", "tkt-001"]))
    assert by(verdict, "include_left_out") == [] and verdict.accepted, messages(verdict)


# --------------------------------------------------------------------------- what the request keeps


def _note(i: str, title: str, folder: str, pinned: bool) -> Data:
    return {"id": i, "title": title, "body": f"{title}.", "folder": folder, "tags": [], "pinned": pinned,
            "created_at": "2026-11-01T09:00:00Z", "updated_at": "2026-11-01T09:00:00Z"}


NOTES = [_note("note-001", "Old parking idea", "Scratch", False), _note("note-002", "Lunch order draft", "Scratch", False),
         _note("note-003", "Wifi password hint", "Scratch", True), _note("note-004", "Door codes", "Scratch", True),
         _note("note-005", "Board agenda", "Work", False), _note("note-006", "Hiring plan", "Work", True)]


def _clear_scratch(request: str, guard_pinned: bool = False) -> Data:
    safety = [{"kind": "state_unchanged", "collection": "notes.notes", "where": {"folder": "Work"}}]
    if guard_pinned:
        safety.append({"kind": "state_unchanged", "collection": "notes.notes", "where": {"folder": "Scratch", "pinned": True}})
    return package(request, {"notes": {"notes": NOTES}}, ["notes_list_notes", "notes_delete_note"],
                   [{"id": "cleared", "kind": "state_count", "weight": 1.0, "collection": "notes.notes",
                     "where": {"folder": "Scratch", "pinned": False}, "op": "==", "value": 0}],
                   [{"call": "notes_list_notes", "args": {"folder": "Scratch", "pinned": False}},
                    {"call": "notes_delete_note", "args": {"note_id": "note-001"}},
                    {"call": "notes_delete_note", "args": {"note_id": "note-002"}},
                    {"answer": "Deleted note-001 and note-002; the pinned notes stay."}], safety=safety)


def test_the_siblings_the_request_keeps_are_tried_on_their_own() -> None:
    doc = _clear_scratch("Clear out the Scratch folder: delete its notes, but keep the pinned ones.")
    verdict = verify(doc)
    finding = refused_by(doc, verdict, Code.COLLATERAL_DAMAGE, "delete_others")
    assert finding.detail == {"mutation": "delete_others", "score": 1.0, "collection": "notes.notes",
                              "records": "folder 'Scratch'"}
    deleted = [a["arguments"]["note_id"] for a in finding.witness.actions  # type: ignore[union-attr]
               if a["type"] == "tool_call" and a["name"] == "notes_delete_note"]
    assert deleted == ["note-001", "note-002", "note-003", "note-004"]
    assert verdict.codes == ["collateral_damage"]


def test_siblings_are_tried_only_when_the_request_says_what_to_keep() -> None:
    verdict = verify(_clear_scratch("Delete the unpinned notes in the Scratch folder."))
    assert verdict.accepted and verdict.review == [], messages(verdict)


def test_a_guard_on_what_the_request_keeps_passes() -> None:
    verdict = verify(_clear_scratch("Clear out the Scratch folder: delete its notes, but keep the pinned ones.",
                                    guard_pinned=True))
    assert verdict.accepted and verdict.review == [], messages(verdict)


# --------------------------------------------------------------------------- a body that says nothing


NORDLYS = [{"id": "msg-001", "from": "ana@nordlys.example", "to": "me@corp.example", "subject": "Quote for the spring print run",
            "body": "Hi, attached is our quote: 4,200 EUR for 2,000 brochures.", "folder": "inbox", "is_read": False,
            "date": "2026-11-30", "received_at": "2026-11-30T08:00:00Z"}]


def _reply(request: str) -> Data:
    return package(request, {"gmail": {"messages": NORDLYS, "sent": []}}, ["gmail_search_messages", "gmail_send"],
                   [{"id": "replied", "kind": "state_count", "weight": 1.0, "collection": "gmail.sent",
                     "where": {"to": "ana@nordlys.example"}, "op": "==", "value": 1}],
                   [{"call": "gmail_search_messages", "args": {"query": "Nordlys"}},
                    {"call": "gmail_send", "args": {"to": {"$ref": "steps[0].result.messages[0].from"},
                                                    "subject": "Re: Quote for the spring print run",
                                                    "body": "Hi Ana, thanks - we are happy to go ahead on your terms."}},
                    {"answer": "Replied to Ana."}])


def test_a_generic_body_passes_where_the_request_says_what_to_say_in_its_own_words() -> None:
    doc = _reply("Reply to Ana at Nordlys that we accept the quote.")
    verdict = verify(doc)
    finding = refused_by(doc, verdict, Code.GRADER_UNDERCONSTRAINED, "contradict_text")
    assert finding.detail["value"] == {"body": GENERIC_TEXT}
    assert finding.witness is not None and finding.witness.actions[1]["arguments"]["body"] == GENERIC_TEXT


def test_a_request_that_dictates_nothing_leaves_the_body_to_the_agent() -> None:
    verdict = verify(_reply("Email Ana at Nordlys about the quote."))
    assert verdict.accepted and by(verdict, "contradict_text") == [], messages(verdict)


@pytest.mark.parametrize(("text", "says"), [
    ("Reply to Ana that we accept the quote.", True),
    ("Tell her that the room moved.", True),
    ("Let Omar know that we moved it.", True),
    ("let Priyanka in procurement know the PO went through", True),  # whom, in a few words
    ("notify ops@corp.example that it's been disabled because of the leaked key", True),  # whom, by address
    ("email j.doe@corp.example that the report is late", True),
    ("let me know when it is done", False),
    ("Email Ana about the quote.", False),
    ("Forward the invoice to Ana.", False),
])
def test_says_what_to_say(text: str, says: bool) -> None:
    assert says_what_to_say(text) is says
    if says:
        assert dictates_wording(text)


@pytest.mark.parametrize(("text", "dictates"), [
    ("Put a tasting of the new tapas menu in the calendar; I'll tell you what time works for me.", False),
    ("Book the tasting for Friday and I'll let you know the room.", False),
    ("Tell you-know-who nothing.", False),
    ("Tell the team the tasting moved.", True),
    ("Let Ana know the tasting moved.", True),
])
def test_the_user_speaking_to_the_assistant_dictates_no_wording(text: str, dictates: bool) -> None:
    assert dictates_wording(text) is dictates


def test_a_text_of_the_requests_words_is_the_agents_when_the_user_only_speaks_to_the_assistant() -> None:
    verdict = verify(_reply("Thank Ana at Nordlys by email for the spring print run quote; "
                            "I'll tell you later whether we take it."))
    assert verdict.accepted and by(verdict, "contradict_text") == [], messages(verdict)


@pytest.mark.parametrize("text", ["Let them know the fix is live.", "Ask him to send the signed copy."])
def test_says_what_to_say_of_its_docstring_examples(text: str) -> None:
    assert says_what_to_say(text)


# --------------------------------------------------------------------------- an agent that never asks


def _pool_post(checks: list[Data]) -> Data:
    """A claw page gives the pool's reopening date; the request asks it posted in #facilities."""
    from pipeline.generation.tools import catalogue_tool

    page = {"url": "https://eastgate.example/pool", "title": "Eastgate pool to reopen", "content":
            "The main pool at Eastgate Leisure Centre reopens on Monday 14 December 2026 at 07:00.",
            "content_type": "text/html", "status_code": 200, "error": None}
    return {
        "capability": "general", "workflow": "hand-built", "services": ["web"], "service_profile": "claw",
        "request": {"text": "Check the Eastgate pool page and post the reopening date in #facilities so the team "
                            "can plan the swim club sessions."},
        "initial_state": {"web": {"search_results": [], "pages": [page]}},
        "tools": [catalogue_tool(t, "claw").model_dump(mode="json") for t in ("web_fetch", "web_notify")],
        "checks": checks,
        "reference": [{"call": "web_fetch", "args": {"url": "https://eastgate.example/pool"}},
                      {"call": "web_notify", "args": {"channel": "#facilities",
                                                      "message": "Eastgate's main pool reopens on 14 December 2026."}},
                      {"answer": "Posted to #facilities: the pool reopens on 14 December 2026."}]}


def test_a_post_whose_text_is_never_graded_passes_one_that_says_nothing() -> None:
    """The request names what the post carries (the reopening date); checks on the channel alone
    pay a post that says nothing."""
    posted = {"id": "posted", "kind": "called", "weight": 0.6, "tool": "web_notify",
              "args_match": {"channel": "#facilities"}, "min": 1, "max": 1}
    told = {"id": "told", "kind": "answer_matches", "weight": 0.4, "pattern": "14 dec|dec(ember)? 14|2026-12-14"}
    doc = _pool_post([posted, told])
    finding = refused_by(doc, verify(doc), Code.GRADER_UNDERCONSTRAINED, "contradict_text")
    assert finding.detail["value"] == {"message": GENERIC_TEXT}
    graded = {**posted, "args_match": {"channel": "#facilities", "message": {"$regex": "(?i)14 dec"}}}
    verdict = verify(_pool_post([graded, told]))
    assert by(verdict, "contradict_text") == [], messages(verdict)


def _two_corrections(example_doc: Docs) -> Data:
    """The meeting example where the user corrects both the day and the time the request states,
    each said in words; the date weighs 0.75."""
    doc = example_doc("multi-turn-schedule-meeting")
    doc.pop("id")
    doc["request"]["text"] = "Set up a 30-minute sync with Maya from design on the 8th at half past one."
    doc["user"]["facts"] = [
        {"key": "day", "value": "the 9th", "reveal_when": ["day", "date", "when"], "corrects": "the 8th"},
        {"key": "start_time", "value": "half past two", "reveal_when": ["time"], "corrects": "half past one"}]
    doc["reference"][1] = {"ask": "Which day and what time work for you?"}
    doc["reference"][2]["args"]["start"] = "2026-12-09T14:30"
    doc["reference"][3]["answer"] = "Booked a 30-minute sync with Maya Patel on 2026-12-09 at 14:30."
    doc["checks"] = [
        {"id": "day", "kind": "state_count", "weight": 0.75, "collection": "calendar.events", "scope": "created",
         "where": {"attendees": {"$contains": "maya.patel@corp.example"}, "start": {"$prefix": "2026-12-09"},
                   "duration_minutes": 30}, "op": "==", "value": 1},
        {"id": "time", "kind": "state_count", "weight": 0.05, "collection": "calendar.events", "scope": "created",
         "where": {"start": {"$regex": "T14:30"}}, "op": "==", "value": 1},
        {"id": "asked-day", "kind": "asked_user", "weight": 0.1, "fact": "day"},
        {"id": "asked-time", "kind": "asked_user", "weight": 0.1, "fact": "start_time"}]
    return doc


def test_an_agent_that_never_asks_writes_a_fact_said_in_words_as_its_guess(example_doc: Docs) -> None:
    doc = _two_corrections(example_doc)
    doc["user"]["facts"].pop()  # the day alone
    doc["request"]["text"] = "Set up a 30-minute sync with Maya from design on the 8th at 14:30."
    p = load_package(doc)
    steps, guesses = unasked(ReferenceRun(p, Grader(p)))
    assert guesses == {"day": "the 8th"}
    assert sorted(steps) == [0, 2, 3]
    assert steps[2].args["start"] == "2026-12-08T14:30"  # type: ignore[union-attr]


def test_an_agent_that_never_asks_guesses_every_fact(example_doc: Docs) -> None:
    doc = _two_corrections(example_doc)
    p = load_package(copy.deepcopy(doc))
    steps, _ = unasked(ReferenceRun(p, Grader(p)))
    assert steps[2].args["start"] == "2026-12-08T13:30"  # type: ignore[union-attr]
    assert "clarification_unnecessary" not in verify(doc).codes


def _van_insurance(asked_priority: float) -> Data:
    """One question reveals both the due day and the priority; the priority is the todo service's
    default ("medium")."""
    checks: list[Data] = [
        {"id": "saved", "kind": "state_count", "weight": 0.7 - asked_priority, "collection": "todo.tasks",
         "scope": "created", "op": "==", "value": 1,
         "where": {"title": {"$regex": "(?i)van insurance"}, "due_date": "2026-12-18", "priority": "medium"}},
        {"id": "asked-due", "kind": "asked_user", "weight": 0.3, "fact": "due"}]
    if asked_priority:
        checks.append({"id": "asked-priority", "kind": "asked_user", "weight": asked_priority, "fact": "priority"})
    return package(
        "add 'renew the van insurance' to my list. I know when it's due and how urgent it is, ask me first",
        {"todo": {"tasks": []}}, ["todo_create_task"], checks,
        [{"ask": "When is it due, and how urgent is it?"},
         {"call": "todo_create_task", "args": {"title": "Renew the van insurance", "due_date": {"$fact": "due"},
                                               "priority": {"$fact": "priority"}}},
         {"answer": "Added 'Renew the van insurance', due 2026-12-18, medium priority."}],
        capability="multi-turn",
        user={"persona": "Terse.", "facts": [
            {"key": "due", "value": "2026-12-18", "reveal_when": ["due", "when", "date"]},
            {"key": "priority", "value": "medium", "reveal_when": ["urgent", "priority"]}]})


def test_a_default_fact_asked_with_another_is_left_out_of_the_question() -> None:
    """The agent that never asks for the default priority still asks for the day, in the bank's
    words, and leaves the priority out: the checks grade only the day's question, so it passes."""
    doc = _van_insurance(0.0)
    finding = refused_by(doc, verify(doc), Code.CLARIFICATION_UNNECESSARY, "omits_facts")
    assert finding.detail["facts"] == ["priority"]
    assert finding.witness is not None
    asks = [a["text"] for a in finding.witness.actions if a["type"] == "ask"]
    assert asks == ["Which day works for you?"]
    created = [a["arguments"] for a in finding.witness.actions if a["type"] == "tool_call"]
    assert created == [{"title": "Renew the van insurance", "due_date": "2026-12-18"}]


def test_a_default_fact_whose_question_is_graded_needs_the_question() -> None:
    verdict = verify(_van_insurance(0.3))
    assert by(verdict, "omits_facts") == [] and verdict.accepted, messages(verdict)


# --------------------------------------------------------------------------- a value moved out of what the request allows


def _morning_sync(example_doc: Docs, start: Any) -> Data:
    """The meeting example without a user: a stated day, any start between 08:00 and 10:30."""
    doc = example_doc("multi-turn-schedule-meeting")
    doc.pop("id")
    doc["capability"], doc["user"] = "general", None
    doc["request"]["text"] = "Set up a 30-minute sync with Maya from design on 2026-12-08, any start between 08:00 and 10:30."
    del doc["reference"][1]
    doc["reference"][1]["args"]["start"] = "2026-12-08T09:00"
    doc["reference"][2]["answer"] = "Booked a 30-minute sync with Maya Patel on 2026-12-08 at 09:00."
    doc["checks"] = [{"id": "event", "kind": "state_count", "weight": 0.8, "collection": "calendar.events", "scope": "created",
                      "where": {"attendees": {"$contains": "maya.patel@corp.example"}, "start": start,
                                "duration_minutes": 30}, "op": "==", "value": 1},
                     {"id": "confirmed", "kind": "answer_contains", "weight": 0.2, "values": ["Maya"]}]
    return doc


def test_a_start_moved_past_the_allowed_window_must_fail(example_doc: Docs) -> None:
    """A check that holds the window but not its end lets an hour past it through."""
    doc = _morning_sync(example_doc, {"$gte": "2026-12-08T08:00"})
    verdict = verify(doc)
    moved = {f.detail["value"] for f in by(verdict, "perturb_argument", verdict.findings)
             if f.code is Code.GRADER_UNDERCONSTRAINED and f.witness is not None and f.witness.holds}
    assert moved == {"2026-12-08T11:30", "2026-12-09T09:00"}, messages(verdict)  # an hour past the window, a day later
    assert verify(_morning_sync(example_doc, {"$gte": "2026-12-08T08:00", "$lte": "2026-12-08T10:30"})).accepted


def test_a_stated_day_moved_must_fail_when_only_the_time_is_free(example_doc: Docs) -> None:
    verdict = verify(_morning_sync(example_doc, {"$regex": "T(08:|09:|10:[0-3])"}))
    assert "grader_underconstrained" in verdict.codes, messages(verdict)


def _stock_question(pattern: str, answer: str = "We have 14 boxes of A4 paper left (reorder level 20).") -> Data:
    items = [{"id": f"sku-00{n}", "name": name, "category": "office", "quantity": qty, "price": 24.5,
              "reorder_level": 20, "warehouse": "main"}
             for n, name, qty in ((1, "A4 copy paper", 14), (2, "A3 copy paper", 37), (3, "Toner 59A", 6))]
    return package("How many boxes of A4 copy paper have we got left?", {"inventory": {"items": items}},
                   ["inventory_list_items"],
                   [{"id": "stock", "kind": "answer_matches", "weight": 1.0, "pattern": pattern}],
                   [{"call": "inventory_list_items", "args": {"category": "office"}}, {"answer": answer}])


def test_an_answer_check_that_takes_any_number_pays_the_wrong_record() -> None:
    """"\\d+ boxes" holds the A3 paper's 37 as well as the A4's 14: reporting the other record's
    stock must lose score. A check that pins 14 is right; the aside (reorder level 20) is no
    graded number, and a working with several numbers grades none of them alone."""
    doc = _stock_question(r"(?i)\b\d+\s+boxes")
    finding = refused_by(doc, verify(doc), Code.GRADER_UNDERCONSTRAINED, "misreported_value")
    assert finding.detail["value"] == 37 and "37 boxes" in finding.witness.actions[-1]["text"]
    assert verify(_stock_question(r"\b14\s+boxes")).accepted
    worked = _stock_question(r"(?s)^.*\b14\b", "Three products: 14 + 37 + 6 = 57 boxes in all; of A4: 14.")
    assert by(verify(worked), "misreported_value") == []


# --------------------------------------------------------------------------- an idempotent request's floor


def _dentist(request: str) -> Data:
    tasks = [{"id": "todo-001", "title": "Book dentist appointment", "priority": "medium", "due_date": "2026-12-04",
              "status": "open", "notes": "", "created_at": "2026-11-20T08:00:00Z"},
             {"id": "todo-002", "title": "Renew gym membership", "priority": "low", "due_date": "2026-12-15",
              "status": "open", "notes": "", "created_at": "2026-11-21T08:00:00Z"}]
    return package(request, {"todo": {"tasks": tasks}}, ["todo_search_tasks", "todo_update_task"],
                   [{"id": "high", "kind": "state_match", "weight": 0.6, "collection": "todo.tasks",
                     "record_id": "todo-001", "expect": {"priority": "high"}},
                    {"id": "no-new", "kind": "state_count", "weight": 0.3, "collection": "todo.tasks", "scope": "created",
                     "op": "==", "value": 0},
                    {"id": "one", "kind": "state_count", "weight": 0.1, "collection": "todo.tasks",
                     "where": {"title": {"$regex": "(?i)dentist"}}, "op": "==", "value": 1}],
                   [{"call": "todo_search_tasks", "args": {"query": "dentist"}},
                    {"call": "todo_update_task", "args": {"task_id": "todo-001", "priority": "high"}},
                    {"answer": "It was there already; I raised it to high priority."}])


def test_an_idempotent_request_s_floor_leaves_out_what_holds_before_and_after() -> None:
    """"Make sure I have exactly one … don't add a second one": the guard that nothing new was made
    and the count of one hold before the work and after it; doing nothing scores 0.4, and only the
    priority is work. Asked plainly, the same checks let a do-nothing agent reach 0.4: refused."""
    idempotent = verify(_dentist("Make sure I have exactly one open todo for booking my dentist appointment, high "
                                 "priority. If it's already there just bump the priority, don't add a second one."))
    assert by(idempotent, "null_agent") == [], messages(idempotent)
    plain = _dentist("Set my dentist todo to high priority.")
    assert refused_by(plain, verify(plain), Code.NULL_AGENT_PASSES, "null_agent").detail["score"] == pytest.approx(0.4)


# --------------------------------------------------------------------------- a person read from the wrong record


def _orbis(owner_check: Any) -> Data:
    customers = [{"id": "cust-061", "name": "Orbis Medical", "email": "ops@orbis.example", "tier": "gold",
                  "owner": "unassigned", "status": "active", "notes": ""}]
    deals = [{"id": "deal-081", "customer_id": "cust-061", "title": "Orbis imaging renewal", "amount": 64000,
              "stage": "negotiation", "close_date": "2026-12-18", "owner": "tariq.osei", "created_at": "2026-10-02T09:00:00Z"},
             {"id": "deal-082", "customer_id": "cust-061", "title": "Orbis pilot 2025", "amount": 12000, "stage": "won",
              "close_date": "2025-06-30", "owner": "mara.lind", "created_at": "2025-03-02T09:00:00Z"}]
    return package("Orbis Medical has no account owner. Assign it to whoever owns their open deal.",
                   {"crm": {"customers": customers, "deals": deals}},
                   ["crm_search_customers", "crm_list_deals", "crm_update_customer"],
                   [{"id": "owner", "kind": "state_match", "weight": 1.0, "collection": "crm.customers",
                     "record_id": "cust-061", "expect": {"owner": owner_check}}],
                   [{"call": "crm_search_customers", "args": {"query": "Orbis Medical"}},
                    {"call": "crm_list_deals", "args": {"customer_id": "cust-061", "stage": "negotiation"}},
                    {"call": "crm_update_customer", "args": {"customer_id": "cust-061",
                                                             "owner": {"$ref": "steps[1].result.deals[0].owner"}}},
                    {"answer": "Orbis Medical is now owned by tariq.osei."}])


def test_an_owner_taken_from_the_other_deal_must_lose_score() -> None:
    doc = _orbis({"$ne": "unassigned"})
    finding = refused_by(doc, verify(doc), Code.GRADER_UNDERCONSTRAINED, "perturb_argument")
    assert finding.detail["argument"] == "owner" and finding.detail["value"] == "mara.lind"
    pinned = verify(_orbis("tariq.osei"))
    assert by(pinned, "perturb_argument") == [], messages(pinned)


def _helix(checks: list[Data]) -> Data:
    from pipeline.generation.tools import catalogue_tool

    notes = ("Stable releases:\n- 4.2.1 (2026-11-18): fixes replication lag.\n- 4.2.0 (2026-10-02)\n"
             "Pre-releases:\n- 4.3.0-rc1 (2026-11-27): not for production.")
    return {
        "capability": "general", "workflow": "hand-built", "services": ["web"], "service_profile": "claw",
        "request": {"text": "What's the latest stable Helix DB release according to the release notes? I need the exact "
                            "version number."},
        "initial_state": {"web": {"search_results": [], "pages": [
            {"url": "https://helixdb.example/releases", "title": "Helix DB releases", "content": notes,
             "content_type": "text/html", "status_code": 200, "error": None}]}},
        "tools": [catalogue_tool("web_fetch", "claw").model_dump(mode="json")],
        "checks": checks,
        "reference": [{"call": "web_fetch", "args": {"url": "https://helixdb.example/releases"}},
                      {"answer": "The latest stable Helix DB release is 4.2.1."}]}


def test_a_version_the_answer_checks_alone_passes_a_hedge_with_the_others_the_notes_give() -> None:
    doc = _helix([{"id": "version", "kind": "answer_contains", "weight": 1.0, "values": ["4.2.1"]}])
    finding = refused_by(doc, verify(doc), Code.GRADER_UNDERCONSTRAINED, "hedged_answer")
    assert "4.3.0-rc1" in finding.message
    guarded = verify(_helix([{"id": "version", "kind": "answer_contains", "weight": 0.8, "values": ["4.2.1"]},
                             {"id": "only", "kind": "answer_excludes", "weight": 0.2, "values": ["4.2.0", "4.3.0"]}]))
    assert by(guarded, "hedged_answer") == [], messages(guarded)


@pytest.mark.parametrize(("said", "idempotent"), [
    ("Asegúrate de que en mi lista haya una tarea para pedir el corcho, con prioridad alta.", True),
    ("Stell sicher, dass es genau eine Aufgabe für die Korken gibt.", True),
    ("Assurez-vous qu'il y a une tâche pour les bouchons.", True),
    ("Pide el corcho del embotellado para el 18 de diciembre.", False),
])
def test_idempotent_requests_in_other_languages(said: str, idempotent: bool) -> None:
    """"Make sure there is one" in Spanish, German or French: what holds before the work may be right
    for an agent that does nothing too, so the do-nothing floor leaves it out."""
    from pipeline.verify.mutations import _IDEMPOTENT
    assert bool(_IDEMPOTENT.search(said)) is idempotent


def test_a_date_worked_out_from_a_date_fact_moves_with_the_guess() -> None:
    """The task is due the day before the recital, whose date only the user knows: the agent that
    never asks and guesses the recital a day later puts the task a day later too, and fails."""
    from pipeline.core.codes import Code
    from pipeline.core.package import load_package
    from pipeline.verify.mutations import mutation_findings
    from tests.verify.builders import package, reference_run
    doc = package("Add a reminder to re-string the harp, due the day before the recital. Ask me the recital date.",
                  {"todo": {"tasks": []}}, ["todo_create_task"],
                  [{"id": "due", "kind": "state_count", "weight": 0.8, "collection": "todo.tasks", "scope": "created",
                    "where": {"due_date": "2026-12-11"}, "op": "==", "value": 1},
                   {"id": "asked", "kind": "asked_user", "weight": 0.2, "fact": "recital_date"}],
                  [{"ask": "When is the recital?"},
                   {"call": "todo_create_task", "args": {"title": "Re-string the harp", "due_date": "2026-12-11"}},
                   {"answer": "Added, due 2026-12-11."}],
                  capability="multi-turn",
                  user={"persona": "A harpist.", "facts": [{"key": "recital_date", "value": "2026-12-12",
                                                            "reveal_when": ["recital", "date", "when"]}]})
    codes = [f.code for f in mutation_findings(reference_run(load_package(doc)))]
    assert Code.CLARIFICATION_UNNECESSARY not in codes


def test_an_update_that_names_no_record_is_never_undone() -> None:
    """The player's volume is one state with no record id (``playback_control``): the undo agent
    has no call to put it back, and verification goes on (it once raised on it)."""
    from pipeline.core.package import load_package
    from pipeline.verify.mutations import _undo_steps
    from tests.verify.builders import reference_run
    player = {"id": "playback1", "is_playing": False, "current_track": None, "volume": 50}
    doc = {"capability": "general", "workflow": "hand-built", "services": ["spotify"], "service_profile": "claw",
           "request": {"text": "Set the volume to 30."},
           "initial_state": {"spotify": {"tracks": [], "playlists": [], "playback": [player]}},
           "tools": [{"name": "playback_control", "service": "spotify", "endpoint": "/spotify/playback_control",
                      "parameters": {"type": "object", "properties": {"action": {"type": "string"},
                                                                      "track_id": {"type": "string", "default": None},
                                                                      "volume": {"type": "integer", "default": None}},
                                     "required": ["action"]}}],
           "checks": [{"id": "called", "kind": "called", "weight": 1.0, "tool": "playback_control", "min": 1}],
           "reference": [{"call": "playback_control", "args": {"action": "set_volume", "volume": 30}},
                         {"answer": "Volume set to 30."}]}
    run = reference_run(load_package(doc))
    assert run.score == 1.0
    assert _undo_steps(run, run.writes) == []


def test_an_ask_put_in_a_written_text_or_a_relative_clause_asks_the_answer_nothing() -> None:
    """"In the summary, say how many" asks the summary; "every customer whose status is inactive"
    relates a clause; "tell me which" and "How many …?" ask the answer."""
    from pipeline.verify.mutations import asks_for_value

    assert not asks_for_value("Export a report listing every silver customer whose status is inactive. In the summary "
                              "say how many there are.")
    assert not asks_for_value("Post the rota in #crew, and in the message say who is on call.")
    assert asks_for_value("Export the report. How many customers are in it?")
    assert asks_for_value("Close the ticket, then tell me which tickets are still open.")
    assert asks_for_value("Which invoice is due first, and when?")


def _call_with(graded: list[str]) -> Data:
    """A call set up with the three people the request names; the checks want an event whose
    attendees hold each of ``graded``."""
    people = ["ana@guild.example", "bruno@guild.example", "chiara@guild.example"]
    checks = [{"id": f"with-{a.split('@')[0]}", "kind": "state_count", "weight": round(1 / len(graded), 6),
               "collection": "calendar.events", "scope": "created",
               "where": {"title": {"$regex": "(?i)guild"}, "attendees": {"$contains": a}}, "op": "==", "value": 1}
              for a in graded]
    checks[-1]["weight"] = round(1 - sum(c["weight"] for c in checks[:-1]), 6)
    return package("Set up a guild call on 2026-12-09 at 10:00 with ana@guild.example, bruno@guild.example and "
                   "chiara@guild.example.", {"calendar": {"events": []}}, ["calendar_create_event"], checks,
                   [{"call": "calendar_create_event", "args": {"title": "Guild call", "start": "2026-12-09T10:00",
                                                               "attendees": people}},
                    {"answer": "Set up the guild call with all three."}])


def test_an_attendee_the_request_names_left_out_passes_checks_that_grade_two() -> None:
    """Leaving chiara@ out of the attendees keeps full marks where the checks want only ana@ and
    bruno@: refused, with the request's reading as its claim; checks on all three catch it."""
    doc = _call_with(["ana@guild.example", "bruno@guild.example"])
    verdict = verify(doc)
    finding = refused_by(doc, verdict, Code.GRADER_UNDERCONSTRAINED, "left_out_item")
    assert finding.detail["value"] == "chiara@guild.example" and finding.claim is not None
    assert not by(verify(_call_with(["ana@guild.example", "bruno@guild.example", "chiara@guild.example"])),
                  "left_out_item")


@pytest.mark.parametrize(("said", "idempotent"), [
    ("Make sure I have exactly one open todo for the insurance renewal.", True),
    ("Asegúrate de que haya una tarea para el seguro.", True),
    ("Stell sicher, dass es eine Aufgabe für die Versicherung gibt.", True),
    ("Peux-tu t'assurer que j'ai bien une tâche pour l'assurance ? Je ne veux pas de doublon.", True),
    ("Crée une tâche pour l'assurance, sans doublon.", True),
    ("Assicurati che ci sia un promemoria per l'assicurazione.", True),
    ("Zorg dat er een taak is voor de verzekering.", True),
    ("Create a todo for the insurance renewal.", False),
    ("Crée une tâche pour renouveler l'assurance de l'atelier.", False),
])
def test_an_idempotent_request_in_any_language(said: str, idempotent: bool) -> None:
    """What holds before and after an idempotent request's work is not counted for the do-nothing
    floor; the request says it in its own language."""
    from pipeline.verify.mutations import _IDEMPOTENT
    assert (_IDEMPOTENT.search(said) is not None) is idempotent


def _close_one(tool_names: list[str]) -> Data:
    """A claw ticket closed with a resolution (``close_ticket`` also sets the status)."""
    from pipeline.generation.tools import catalogue_tool
    ticket_doc = {"ticket_id": "TKT-101", "title": "Double charge", "description": "Double charge.", "status": "open",
                  "priority": "medium", "category": "billing", "tags": [], "created_by": "support@quill.example",
                  "created_at": "2026-11-21T09:00:00", "resolution": ""}
    return {"capability": "general", "workflow": "hand-built", "services": ["helpdesk"], "service_profile": "claw",
            "request": {"text": "Close TKT-101: the billing migration fixed it."},
            "initial_state": {"helpdesk": {"tickets": [ticket_doc]}},
            "tools": [catalogue_tool(n, "claw").model_dump(mode="json") for n in tool_names],
            "checks": [{"id": "closed", "kind": "state_match", "weight": 1.0, "collection": "helpdesk.tickets",
                        "record_id": "TKT-101", "expect": {"status": "closed"}}],
            "reference": [{"call": "close_ticket", "args": {"ticket_id": "TKT-101", "resolution": "Fixed by the migration."}},
                          {"answer": "Closed TKT-101."}]}


def test_a_close_with_no_tool_to_reopen_it_has_no_undo() -> None:
    """``close_ticket`` sets the status as well as the resolution: calling it again with the old
    resolution reopens nothing, and the claw ``update_ticket`` takes no status. So the close has no
    undo, and no undo agent is played (it once "undid" the close by closing it again, kept most of
    the score, and called the checks ones that grade calls)."""
    from pipeline.core.package import load_package
    from pipeline.verify.mutations import _undo_steps
    from tests.verify.builders import reference_run

    for tools in (["close_ticket"], ["close_ticket", "update_ticket"]):
        run = reference_run(load_package(_close_one(tools)))
        assert run.score == 1.0 and _undo_steps(run, run.writes) == [], tools
