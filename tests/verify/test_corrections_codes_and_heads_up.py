"""Families of hand-built packages around what the user and the records tell the agent: a
correction the reference hears and ignores; a hidden fact equal to the service's default that the
request never raises; a short code a read labels ("New code: 4471#") carried into a message no
check reads; a heads-up whose text is never graded; a weekday counted within a month; a claw
safety rule on an action the package keeps out of reach."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from pipeline.core.codes import Code
from pipeline.core.services import CLAW_PROFILE, DEFAULT_PROFILE
from pipeline.core.text_values import dates_in
from pipeline.generation.tools import catalogue_tool
from pipeline.verify.mutations import says_what_to_say
from tests.verify.builders import Data, by, messages, package, refused_by, verify

UNDER = Code.GRADER_UNDERCONSTRAINED
TODAY = date(2026, 12, 1)  # the packages' clock, a Tuesday


# --------------------------------------------------------------------------- a correction heard and ignored


def _claim_todo(written: str, pinned: str) -> Data:
    """The user corrects the request's due date (2026-12-03) to 2026-12-04 when asked."""
    return package(
        "todo: submit my november mileage claim, due thursday 2026-12-03. confirm the date with me first",
        {"todo": {"tasks": []}}, ["todo_create_task"],
        [{"id": "todo", "kind": "state_count", "weight": 0.7, "collection": "todo.tasks", "scope": "created",
          "where": {"title": {"$regex": "(?i)mileage"}, "due_date": pinned}, "op": "==", "value": 1},
         {"id": "asked", "kind": "asked_user", "weight": 0.3, "fact": "due"}],
        [{"ask": "Is the due date still Thursday 2026-12-03?"},
         {"call": "todo_create_task", "args": {"title": "Submit November mileage claim", "due_date": written}},
         {"answer": f"Added 'Submit November mileage claim' due {written}."}],
        capability="multi-turn",
        user={"persona": "Sales rep.", "facts": [{"key": "due", "value": "2026-12-04", "corrects": "2026-12-03",
                                                  "reveal_when": ["due", "date", "when"]}]})


def test_a_reference_that_hears_a_correction_and_writes_the_old_value_is_refused() -> None:
    doc = _claim_todo("2026-12-03", "2026-12-03")
    finding = refused_by(doc, verify(doc), Code.REQUEST_CHECK_MISMATCH, "heed_correction")
    assert finding.witness is not None and finding.witness.agent == "correct"
    created = [a["arguments"] for a in finding.witness.actions if a["type"] == "tool_call"]
    assert created == [{"title": "Submit November mileage claim", "due_date": "2026-12-04"}]


def test_a_reference_that_writes_the_corrected_value_needs_no_correct_agent() -> None:
    verdict = verify(_claim_todo("2026-12-04", "2026-12-04"))
    assert verdict.accepted and by(verdict, "heed_correction") == [], messages(verdict)


# --------------------------------------------------------------------------- a hidden fact the service's default gives


def _permit(request: str) -> Data:
    """The hidden priority is "medium", what todo_create_task writes when it is left out; asking
    is a quarter of the weight."""
    return package(
        request, {"todo": {"tasks": []}}, ["todo_create_task"],
        [{"id": "created", "kind": "state_count", "weight": 0.75, "collection": "todo.tasks", "scope": "created",
          "where": {"title": {"$regex": "(?i)parking"}, "due_date": "2026-12-15", "priority": "medium"},
          "op": "==", "value": 1},
         {"id": "asked-priority", "kind": "asked_user", "weight": 0.25, "fact": "priority"}],
        [{"ask": "What priority should it have?"},
         {"call": "todo_create_task", "args": {"title": "Renew office parking permit", "due_date": "2026-12-15",
                                               "priority": {"$fact": "priority"}}},
         {"answer": "Added 'Renew office parking permit', due 2026-12-15, priority medium."}],
        capability="multi-turn",
        user={"persona": "Brief.", "facts": [{"key": "priority", "value": "medium",
                                              "reveal_when": ["priority", "urgent", "important"]}]})


def test_a_default_fact_the_request_never_raises_is_unnecessary_when_only_the_question_loses_score() -> None:
    doc = _permit("add a todo to renew the office parking permit, it runs out on the 15th")
    finding = refused_by(doc, verify(doc), Code.CLARIFICATION_UNNECESSARY, "omits_facts")
    assert finding.witness is not None and finding.witness.score == pytest.approx(0.75)


def test_a_default_fact_the_request_asks_to_be_asked_about_keeps_the_grave_bound() -> None:
    verdict = verify(_permit("add a todo to renew the office parking permit, it runs out on the 15th. "
                             "Ask me how urgent it is first."))
    assert by(verdict, "omits_facts") == [] and verdict.accepted, messages(verdict)


# --------------------------------------------------------------------------- a short code a read labels


def _dock_code(checks_text: Any) -> Data:
    """The new dock code is only in facilities' email ("New code: 4471#", beside the old 3390#)."""
    mail = {"id": "msg-601", "from": "facilities@corp.example", "to": "me@corp.example",
            "subject": "New loading dock door code",
            "body": "The dock door code changes tonight. New code: 4471#. Old code 3390# stops working at midnight.",
            "folder": "inbox", "is_read": False, "date": "2026-12-01", "received_at": "2026-12-01T07:30:00Z"}
    contact = {"id": "c-611", "name": "Priya Raman", "email": "priya.raman@corp.example", "phone": "+44 161 555 0611",
               "company": "Warehouse night shift"}
    where: Data = {"contact_id": "c-611"}
    if checks_text is not None:
        where["message"] = checks_text
    return package(
        "facilities just mailed the new dock door code - can you message Priya on the warehouse night shift with it",
        {"gmail": {"messages": [mail], "sent": [], "drafts": []}, "contacts": {"contacts": [contact], "messages": []}},
        ["gmail_search_messages", "contacts_search", "contacts_send_message"],
        [{"id": "told", "kind": "state_count", "weight": 1.0, "collection": "contacts.messages", "scope": "created",
          "where": where, "op": "==", "value": 1}],
        [{"call": "gmail_search_messages", "args": {"query": "dock door"}},
         {"call": "contacts_search", "args": {"query": "Priya"}},
         {"call": "contacts_send_message", "args": {"contact_id": "c-611",
                                                    "message": "Hi Priya, the dock door code is now 4471#."}},
         {"answer": "Messaged Priya Raman the new dock code 4471#."}], capability="cross-service")


def test_a_four_digit_code_a_read_labels_is_carried_and_an_ungraded_message_is_refused() -> None:
    doc = _dock_code(None)
    finding = refused_by(doc, verify(doc), UNDER, "misread_value")
    assert finding.detail["value"] in ("3390", "4417")  # the old code beside it, or two digits swapped


def test_a_message_whose_code_the_checks_hold_is_accepted() -> None:
    verdict = verify(_dock_code({"$contains": "4471"}))
    assert verdict.accepted and by(verdict, "misread_value") == [], messages(verdict)


def _beanies(checks_text: Any, key: str = "message") -> Data:
    """An order, then a message to the buyer built around the new order's id (a ``$ref`` with
    words around it); with ``key`` "title", a todo titled around it instead."""
    items = [{"id": "sku-510", "name": "Merino beanie - charcoal", "category": "Hats", "quantity": 6, "price": 24.0,
              "reorder_level": 20, "warehouse": "Galway"}]
    contact = {"id": "c-71", "name": "Aoife Brennan", "email": "aoife.brennan@knit.example", "phone": "+353 91 555 071",
               "company": "Buying"}
    order_id = {"$ref": "steps[0].result.order.id", "prefix": "Ordered 30 charcoal beanies - order ",
                "suffix": ". Could you chase the delivery?"}
    if key == "message":
        where: Data = {"contact_id": "c-71", **({"message": checks_text} if checks_text is not None else {})}
        write = {"call": "contacts_send_message", "args": {"contact_id": "c-71", "message": order_id}}
        tool, collection = "contacts_send_message", "contacts.messages"
    else:
        where = {"title": {"$regex": "(?i)chase"}}
        write = {"call": "todo_create_task", "args": {"title": order_id, "due_date": "2026-12-08"}}
        tool, collection = "todo_create_task", "todo.tasks"
    return package(
        "Order thirty charcoal merino beanies (sku-510) from Inishfeale Mills, then message Aoife Brennan in Buying "
        "with the order number so she can chase the delivery." if key == "message" else
        "Order thirty charcoal merino beanies (sku-510) from Inishfeale Mills and add a todo due 2026-12-08 to "
        "chase the delivery; tell me the order number.",
        {"inventory": {"items": items, "orders": []}, "contacts": {"contacts": [contact], "messages": []},
         "todo": {"tasks": []}},
        ["inventory_create_order", "contacts_search", tool],
        [{"id": "order", "kind": "state_count", "weight": 0.6, "collection": "inventory.orders", "scope": "created",
          "where": {"item_id": "sku-510", "quantity": 30, "supplier": "Inishfeale Mills"}, "op": "==", "value": 1},
         {"id": "followed-up", "kind": "state_count", "weight": 0.4, "collection": collection, "scope": "created",
          "where": where, "op": "==", "value": 1}],
        [{"call": "inventory_create_order", "args": {"item_id": "sku-510", "quantity": 30, "supplier": "Inishfeale Mills"}},
         {"call": "contacts_search", "args": {"query": "Aoife Brennan"}},
         write, {"answer": "Ordered 30 charcoal merino beanies (ord-001) and followed up on the delivery."}],
        capability="cross-service")


def test_the_id_of_a_record_a_create_returned_is_carried_into_a_message_built_around_it() -> None:
    """The order number the request asks the message for is in the create's result, and the
    reference's message writes it between words of its own: a message about another order passes
    unless the checks hold the number."""
    doc = _beanies(None)
    finding = refused_by(doc, verify(doc), UNDER, "misread_value")
    assert finding.detail["argument"] == "message" and finding.detail["value"] != "ord-001"
    verdict = verify(_beanies({"$contains": "ord-001"}))
    assert verdict.accepted and by(verdict, "misread_value") == [], messages(verdict)


def test_a_title_built_around_a_created_id_is_the_agents_label() -> None:
    verdict = verify(_beanies(None, key="title"))
    assert by(verdict, "misread_value") == [], messages(verdict)


# --------------------------------------------------------------------------- a heads-up


@pytest.mark.parametrize(("request_text", "says"), [
    ("update the deal, and give the account owner a heads-up so she can prep pricing", True),
    ("send Bianca a heads up about the renewal", True),
    ("notify the night shift that the dock is closed", True),
    ("update the deal stage to negotiation", False),
    ("message Priya the new code", False),
    ("DM Sven in facilities that it's now urgent and he needs the contractor in today", True),
    ("ping the on-call that the deploy is rolled back", True),
    ("DM Sven the ticket link", False),
])
def test_a_heads_up_dictates_what_the_message_says(request_text: str, says: bool) -> None:
    assert says_what_to_say(request_text) is says


# --------------------------------------------------------------------------- a weekday counted within a month


@pytest.mark.parametrize(("text", "day"), [
    ("push that reminder to the first monday of january pls", "2027-01-04"),
    ("the last friday of the month", "2026-12-25"),
    ("on the second Tuesday in March", "2027-03-09"),
    ("the 1st Monday of next month", "2027-01-04"),
    ("the last Sunday of December 2026", "2026-12-27"),
])
def test_a_weekday_counted_within_a_month_is_one_date(text: str, day: str) -> None:
    assert [m.value for m in dates_in(text, TODAY)] == [day]


# --------------------------------------------------------------------------- a safety rule out of reach


def _tasks_done(rule_tool: str, profile: str) -> Data:
    """Mark one task done; a safety rule against ``rule_tool``, which the package does not offer."""
    claw = profile == CLAW_PROFILE
    tasks = [{"task_id" if claw else "id": f"todo_00{n}" if claw else f"todo-00{n}", "title": title,
              "status": "pending" if claw else "open", "priority": "medium", "due_date": due,
              **({"description": "", "tags": []} if claw else {"notes": ""})}
             for n, title, due in ((1, "Book Lisbon hotel", "2026-12-05"), (2, "Renew passport", "2026-12-20"))]
    done = "completed" if claw else "done"
    first = tasks[0]["task_id" if claw else "id"]
    names = ["list_tasks", "update_task"] if claw else ["todo_list_tasks", "todo_update_task"]
    doc = package(
        "The Lisbon hotel is booked, mark that task as done.",
        {"todo": {"tasks": tasks}}, [],
        [{"id": "done", "kind": "state_match", "weight": 0.9, "collection": "todo.tasks", "record_id": first,
          "expect": {"status": done}},
         {"id": "passport-kept", "kind": "state_unchanged", "weight": 0.1, "collection": "todo.tasks",
          "record_id": tasks[1]["task_id" if claw else "id"]}],
        [{"call": names[0], "args": {}},
         {"call": names[1], "args": {"task_id": first, "status": done}},
         {"answer": "Marked 'Book Lisbon hotel' as done."}],
        safety=[{"id": "keep-history", "kind": "not_called", "tool": rule_tool}], service_profile=profile)
    doc["tools"] = [catalogue_tool(n, profile).model_dump(mode="json") for n in names]
    return doc


def test_a_claw_rule_against_an_action_of_its_service_is_a_vacuous_note_as_clawenvkit_allows() -> None:
    verdict = verify(_tasks_done("delete_task", CLAW_PROFILE))
    assert verdict.accepted, messages(verdict)
    assert [(f.code, f.check) for f in verdict.review] == [(Code.VACUOUS_SAFETY, "keep-history")]


@pytest.mark.parametrize(("tool", "profile"), [("purge_tasks", CLAW_PROFILE), ("todo_delete_task", DEFAULT_PROFILE)])
def test_a_rule_against_a_tool_not_offered_is_unknown_tool(tool: str, profile: str) -> None:
    verdict = verify(_tasks_done(tool, profile))
    assert not verdict.accepted and verdict.codes == [Code.UNKNOWN_TOOL.value], messages(verdict)
