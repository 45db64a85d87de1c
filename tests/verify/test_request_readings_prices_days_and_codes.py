"""How the request's words are read, on small hand-built packages: a report whose records and
total a check grades as a whole list; a weekday the request rules out of a window; a count at a
price adjusted in the order the request states; a price up by a stated percentage, to the cent;
"enough that we'll have three times the reorder level on hand"; hours of a part of the day; an
event's end moving with its start; a verb before a company's name; a long code of capitals and
digits carried into a note."""

from __future__ import annotations

from datetime import date

import pytest

from pipeline.core.codes import Code
from pipeline.core.text_values import allowed_ranges, times_in
from pipeline.generation.tools import catalogue_tool
from pipeline.verify.carried import codes_in
from pipeline.verify.consistency import stated_counts
from tests.verify.builders import Data, by, messages, package, refused_by, verify

TODAY = date(2026, 12, 1)  # a Tuesday
MISMATCH = Code.REQUEST_CHECK_MISMATCH
UNDER = Code.GRADER_UNDERCONSTRAINED


def _claw(request: str, state: Data, tools: list[str], checks: list[Data], reference: list[Data],
          capability: str = "general") -> Data:
    return {"capability": capability, "workflow": "hand-built", "services": sorted(state), "service_profile": "claw",
            "request": {"text": request}, "initial_state": state,
            "tools": [catalogue_tool(n, "claw").model_dump(mode="json") for n in tools],
            "checks": checks, "reference": reference}


# --------------------------------------------------------------------------- a report graded as a whole list


def _report(checks: list[Data]) -> Data:
    spend = [{"transaction_id": t, "date": d, "description": x, "amount": a, "category": "meals", "vendor": v,
              "status": "completed"}
             for t, d, x, a, v in (("TXN-1", "2026-10-30", "Lunch", 300.0, "Orchard Catering"),
                                   ("TXN-2", "2026-11-04", "Breakfast", 420.0, "Orchard Catering"),
                                   ("TXN-3", "2026-11-15", "Cleaning", 95.0, "Orchid Cleaning"),
                                   ("TXN-4", "2026-11-18", "Workshop", 1180.5, "Orchard Catering"))]
    return _claw("File an expense report of everything Orchard Catering charged us last month.",
                 {"finance": {"transactions": spend, "submitted_reports": []}}, ["list_transactions", "submit_report"],
                 checks,
                 [{"call": "list_transactions", "args": {"start_date": "2026-11-01", "end_date": "2026-11-30"}},
                  {"call": "submit_report", "args": {"title": "Orchard Catering, November", "transactions": ["TXN-2", "TXN-4"],
                                                     "total_amount": 1600.5}},
                  {"answer": "Filed it: TXN-2 and TXN-4, 1,600.50."}], capability="information-synthesis")


def test_a_report_whose_list_and_total_a_state_match_grades_gathers_its_records() -> None:
    """The transactions (any order ``$in`` allows) and the total graded on the report it files are
    what the package gathers: the information-synthesis contract is met."""
    doc = _report([{"id": "ids", "kind": "state_match", "weight": 0.4, "collection": "finance.submitted_reports",
                    "expect": {"transactions": {"$in": [["TXN-2", "TXN-4"], ["TXN-4", "TXN-2"]]}}},
                   {"id": "total", "kind": "state_match", "weight": 0.4, "collection": "finance.submitted_reports",
                    "expect": {"total_amount": 1600.5}},
                   {"id": "one", "kind": "state_count", "weight": 0.2, "collection": "finance.submitted_reports",
                    "op": "==", "value": 1}])
    verdict = verify(doc)
    assert "capability_unmet" not in verdict.codes and verdict.accepted, messages(verdict)


def test_a_report_graded_by_its_title_only_gathers_nothing() -> None:
    doc = _report([{"id": "filed", "kind": "state_match", "weight": 1.0, "collection": "finance.submitted_reports",
                    "expect": {"title": {"$regex": "(?i)orchard"}}}])
    assert "capability_unmet" in verify(doc).codes


# --------------------------------------------------------------------------- a weekday ruled out of a window


@pytest.mark.parametrize(("text", "out"), [
    ("some afternoon between Tuesday and Thursday next week. Not Wednesday, she's out.", {2}),
    ("any day next week except on Fridays", {4}), ("next week works, Monday is out", {0}),
    ("any day next week, Tuesday doesn't work for me", {1}), ("any afternoon next week", set()),
])
def test_a_weekday_the_request_rules_out_leaves_the_window(text: str, out: set[int]) -> None:
    (window,) = [r for r in allowed_ranges(text, TODAY) if r.kind == "date"][:1]
    assert window.days_out == out
    assert all(not window.holds(f"2026-12-{7 + d:02d}") for d in out)


def _one_on_one(request: str) -> Data:
    events = [{"id": "evt-1", "title": "Vendor workshop", "start": "2026-12-08T12:00", "duration_minutes": 360,
               "attendees": ["bea@corp.example"], "location": "", "description": "", "created_at": "2026-11-20T09:00:00Z"}]
    return package(request, {"calendar": {"events": events}}, ["calendar_list_events", "calendar_create_event"],
                   [{"id": "booked", "kind": "state_count", "weight": 1.0, "collection": "calendar.events", "scope": "created",
                     "where": {"attendees": {"$contains": "bea@corp.example"}, "duration_minutes": 45,
                               "start": {"$regex": "^2026-12-10T1[2-6]"}}, "op": "==", "value": 1}],
                   [{"call": "calendar_list_events", "args": {}},
                    {"call": "calendar_create_event", "args": {"title": "1:1 Bea", "start": "2026-12-10T14:30",
                                                               "duration_minutes": 45, "attendees": ["bea@corp.example"]}},
                    {"answer": "Booked the 1:1 with Bea on Thursday 10 December at 14:30."}])


def test_another_afternoon_is_never_the_day_the_request_rules_out() -> None:
    """Tuesday clashes with her workshop and Wednesday is ruled out: Thursday, the reference's day,
    is the only one left, so no correct agent books another (the checks accept Thursday only)."""
    said = "Put a 45 min 1:1 with Bea on my calendar some afternoon between Tuesday and Thursday next week. Not Wednesday, she's out."
    verdict = verify(_one_on_one(said))
    assert verdict.accepted and not by(verdict, "other_choice", verdict.findings), messages(verdict)


# --------------------------------------------------------------------------- a count at a price, adjusted as stated


def _invoice(request: str, amount: float) -> Data:
    return package(request, {"finance": {"invoices": [], "transactions": []}}, ["finance_create_invoice"],
                   [{"id": "amount", "kind": "state_count", "weight": 1.0, "collection": "finance.invoices", "scope": "created",
                     "where": {"customer": "Lumen Studio", "amount": amount, "due_date": "2026-12-15"}, "op": "==",
                     "value": 1}],
                   [{"call": "finance_create_invoice", "args": {"customer": "Lumen Studio", "customer_email": "ap@lumen.example",
                                                                "description": "Consulting", "amount": amount,
                                                                "currency": "EUR", "due_date": "2026-12-15"}},
                    {"answer": f"Invoiced Lumen Studio EUR {amount:,.2f}."}])


SAID = ("Bill Lumen Studio (ap@lumen.example) for the consulting: twelve hours at €150/h, knock ten percent off the "
        "hours, then add the €45 travel fee on top (the fee isn't discounted). Due 15 December.")


def test_hours_at_a_rate_adjusted_in_the_stated_order_are_grounded() -> None:
    verdict = verify(_invoice(SAID, 1665))  # 12 × 150 = 1,800, less 10% = 1,620, plus 45
    assert "ungrounded_value" not in verdict.codes and verdict.accepted, messages(verdict)


def test_the_fee_discounted_too_is_a_guess() -> None:
    assert "ungrounded_value" in verify(_invoice(SAID, 1660.5)).codes  # (1,800 + 45) less 10%


PLAIN = ("Invoice Lumen Studio (ap@lumen.example) for the twelve private lessons in November, 65 a lesson. Knock "
         "the 10% club discount off the lessons first, then add the 25 piste-hire fee on top. Due 15 December.")


def test_a_rate_and_a_fee_without_a_currency_sign_are_grounded() -> None:
    """"65 a lesson" is a price, "the 25 piste-hire fee" an amount added: 12 × 65 = 780, less 10%
    = 702, plus 25 = 727; the fee discounted too (724.50) is still a guess."""
    verdict = verify(_invoice(PLAIN, 727))
    assert "ungrounded_value" not in verdict.codes and verdict.accepted, messages(verdict)
    assert "ungrounded_value" in verify(_invoice(PLAIN, 724.5)).codes


# --------------------------------------------------------------------------- a price up by a stated percentage


def _prices(request: str, new: float) -> Data:
    items = [{"id": "sku-1", "name": "HDMI cable 2m", "category": "Cables", "quantity": 80, "price": 7.99,
              "reorder_level": 15, "warehouse": "Leeds"}]
    return package(request, {"inventory": {"items": items, "orders": []}}, ["inventory_list_items", "inventory_update_item"],
                   [{"id": "price", "kind": "state_match", "weight": 1.0, "collection": "inventory.items",
                     "record_id": "sku-1", "expect": {"price": new}}],
                   [{"call": "inventory_list_items", "args": {"category": "Cables"}},
                    {"call": "inventory_update_item", "args": {"item_id": "sku-1", "price": new}},
                    {"answer": f"Raised it to {new}."}])


def test_a_price_up_a_stated_percentage_to_the_cent_is_no_mangled_number() -> None:
    verdict = verify(_prices("Put every item in the Cables category up by 8%, rounded to the nearest cent.", 8.63))
    assert "request_check_mismatch" not in verdict.codes and verdict.accepted, messages(verdict)


def test_a_field_doubled_without_a_word_for_it_is_still_a_mangled_number() -> None:
    """"The 4K docks keep running out, raise their reorder level" graded as 40: twice the level
    held (20), but no rate the request states doubles it, and 40 is the "4" of "4K" a power of ten off."""
    items = [{"id": "sku-9", "name": "USB-C dock, 4K dual", "category": "Peripherals", "quantity": 6, "price": 189.0,
              "reorder_level": 20, "warehouse": "Bergen"}]
    doc = package("The 4K dual USB-C docks keep running out. Raise their reorder level so we're not caught short.",
                  {"inventory": {"items": items, "orders": []}}, ["inventory_search_items", "inventory_update_item"],
                  [{"id": "level", "kind": "state_match", "weight": 1.0, "collection": "inventory.items",
                    "record_id": "sku-9", "expect": {"reorder_level": 40}}],
                  [{"call": "inventory_search_items", "args": {"query": "USB-C dock"}},
                   {"call": "inventory_update_item", "args": {"item_id": "sku-9", "reorder_level": 40}},
                   {"answer": "Raised it to 40."}])
    verdict = verify(doc)
    assert "request_check_mismatch" in verdict.codes, messages(verdict)


# --------------------------------------------------------------------------- a level to reach, worded as what we'll have


def _restock(request: str, quantity: int) -> Data:
    items = [{"id": "sku-610", "name": "Oat milk 1L", "category": "Dairy-free", "quantity": 14, "price": 21.0,
              "reorder_level": 20, "warehouse": "Cold room"}]
    return package(request, {"inventory": {"items": items, "orders": []}}, ["inventory_search_items", "inventory_create_order"],
                   [{"id": "order", "kind": "state_count", "weight": 1.0, "collection": "inventory.orders", "scope": "created",
                     "where": {"item_id": "sku-610", "quantity": quantity}, "op": "==", "value": 1}],
                   [{"call": "inventory_search_items", "args": {"query": "Oat milk"}},
                    {"call": "inventory_create_order", "args": {"item_id": "sku-610", "quantity": quantity,
                                                                "supplier": "Nordic Oats"}},
                    {"answer": f"Ordered {quantity} cases."}])


RESTOCK = ("Order oat milk from Nordic Oats: enough cases that, once it arrives, we'll have three times the "
           "reorder level on hand.")


def test_enough_to_have_three_times_the_level_on_hand_is_that_level_less_the_stock() -> None:
    doc = _restock(RESTOCK, 60)  # three times the level, ignoring the 14 held
    finding = refused_by(doc, verify(doc), MISMATCH, "stated_formula")
    assert "46" in finding.message
    assert verify(_restock(RESTOCK, 46)).accepted


def test_what_we_have_states_no_formula_without_enough() -> None:
    verdict = verify(_restock("We have twice the reorder level of soy milk; order 60 cases of oat milk from Nordic Oats.", 60))
    assert not by(verdict, "stated_formula"), messages(verdict)


# --------------------------------------------------------------------------- hours of a part of the day


@pytest.mark.parametrize(("text", "times"), [
    ("I need 9 to 11 in the morning to prep", ["09:00", "11:00"]),
    ("between 9 and 11 in the morning", ["09:00", "11:00"]), ("2 to 4 in the afternoon", ["14:00", "16:00"]),
    ("call her at 8 in the evening", ["20:00"]), ("3 people in the morning meeting", []),
])
def test_hours_of_a_part_of_the_day_are_times(text: str, times: list[str]) -> None:
    assert sorted(m.value for m in times_in(text)) == times


def test_hours_of_the_clock_are_no_counts_and_no_number_range() -> None:
    text = "I need 9 to 11 in the morning to prep for the review."
    assert stated_counts(text) == []
    assert not [r for r in allowed_ranges(text, TODAY) if r.kind == "number"]


def _prep(start: str, end: str) -> Data:
    events = [{"event_id": "evt_1", "title": "Vendor call", "start_time": "2026-12-10T09:30:00",
               "end_time": "2026-12-10T10:30:00", "attendees": ["me@corp.example"], "location": "",
               "organizer": "me@corp.example", "recurring": False}]
    return _claw("I need 9 to 11 in the morning to prep for the quarterly review. Any day from Tuesday to Thursday next "
                 "week is fine as long as nothing else is booked in that slot.", {"calendar": {"events": events}},
                 ["list_events", "create_event"],
                 [{"id": "block", "kind": "state_count", "weight": 0.8, "collection": "calendar.events",
                   "where": {"start_time": {"$regex": "^2026-12-(08|09)T09:00"}, "end_time": {"$regex": "^2026-12-(08|09)T11:00"}},
                   "op": "==", "value": 1},
                  {"id": "kept", "kind": "state_unchanged", "weight": 0.2, "collection": "calendar.events",
                   "where": {"event_id": "evt_1"}}],
                 [{"call": "list_events", "args": {"date": "2026-12-08", "days": 3}},
                  {"call": "create_event", "args": {"title": "Review prep", "start_time": start, "end_time": end}},
                  {"answer": "Blocked it."}])


def test_an_events_end_moves_with_its_start_to_a_free_day() -> None:
    """Another day the request allows for the block: Wednesday 09:00-11:00 (Thursday's slot clashes
    with the vendor call), the end moved with the start; the checks take it."""
    verdict = verify(_prep("2026-12-08T09:00:00", "2026-12-08T11:00:00"))
    assert verdict.accepted, messages(verdict)


# --------------------------------------------------------------------------- a verb before a company's name


_QUILL = [{"id": "cust-1", "name": "Esme Quill", "company": "Quill & Co", "email": "esme@quillco.example",
           "phone": "", "status": "active", "tier": "gold", "owner": "me", "notes": ""},
          {"id": "cust-2", "name": "Bram Quillon", "company": "Quillon Ltd", "email": "ap@quillon.example",
           "phone": "", "status": "active", "tier": "gold", "owner": "me", "notes": ""}]


def _quill_invoice(request: str) -> Data:
    """A package whose reference invoices Quill & Co 1,140 EUR after looking the customer up."""
    return package(request, {"crm": {"customers": _QUILL}, "finance": {"invoices": [], "transactions": []}},
                   ["crm_search_customers", "finance_create_invoice"],
                   [{"id": "billed", "kind": "state_count", "weight": 1.0, "collection": "finance.invoices",
                     "where": {"customer": "Quill & Co", "amount": 1140}, "op": "==", "value": 1}],
                   [{"call": "crm_search_customers", "args": {"query": "Quill"}},
                    {"call": "finance_create_invoice", "args": {
                        "customer": "Quill & Co", "customer_email": "esme@quillco.example", "description": "Consulting",
                        "amount": 1140, "currency": "EUR", "due_date": "2026-12-31"}},
                    {"answer": "Invoiced Quill & Co 1,140 EUR."}])


def test_a_verb_opening_the_sentence_before_a_companys_name_names_no_person() -> None:
    said = "Bill Quill & Co for the consulting: twelve hours at 95 euros an hour, due 31 December."
    assert "unknown_entity" not in verify(_quill_invoice(said)).codes
    assert "unknown_entity" in verify(_quill_invoice(said.replace("Bill Quill & Co",
                                                                  "Ask Bill Quill to approve, then bill Quill & Co"))).codes


def test_a_for_that_names_whose_a_thing_is_names_no_record_to_find() -> None:
    """"For the Harrow Mills board pack, …", "order ord-77 for Harrow Mills" and "for the Harrow Mills
    café" name the user's own business; "file a copy for Harrow Mills" names whom the work is for."""
    said = "invoice Quill & Co for the consulting: twelve hours at 95 euros an hour, due 31 December."
    assert "unknown_entity" not in verify(_quill_invoice("For the Harrow Mills board pack, " + said)).codes
    assert "unknown_entity" not in verify(_quill_invoice("Order ord-77 for Harrow Mills is done: " + said)).codes
    assert "unknown_entity" not in verify(_quill_invoice("Month end for the Harrow Mills café: " + said)).codes
    assert "unknown_entity" in verify(_quill_invoice("Also file a copy for Harrow Mills. Please " + said)).codes


# --------------------------------------------------------------------------- a long code carried into a note


def test_a_code_of_ten_letters_and_digits_or_more_is_a_code() -> None:
    assert codes_in("Tracking number: 1Z84E7W20391847762 (UPS).") == ["1Z84E7W20391847762"]
    assert codes_in("the Q4 2026 plan, version2beta and model AB12") == []


def _tracking(pattern: str) -> Data:
    mail = [{"id": "msg-1", "from": "dispatch@kestrel.example", "to": "me@corp.example", "subject": "Order KP-5521 shipped",
             "body": "Order KP-5521 left today. Tracking number: 1Z84E7W20391847762 (UPS).", "folder": "inbox",
             "is_read": False, "date": "2026-11-30", "received_at": "2026-11-30T15:02:00Z"}]
    todos = [{"id": "todo-1", "title": "Chase Kestrel shipment", "priority": "high", "due_date": "2026-12-04",
              "status": "open", "notes": "", "created_at": "2026-11-20T10:00:00Z"}]
    return package("Kestrel emailed that my order shipped. Put the tracking number into the notes of my "
                   "'Chase Kestrel shipment' todo.", {"gmail": {"messages": mail, "sent": []}, "todo": {"tasks": todos}},
                   ["gmail_search_messages", "todo_search_tasks", "todo_update_task"],
                   [{"id": "notes", "kind": "state_match", "weight": 1.0, "collection": "todo.tasks", "record_id": "todo-1",
                     "expect": {"notes": {"$regex": pattern}}}],
                   [{"call": "gmail_search_messages", "args": {"query": "Kestrel"}},
                    {"call": "todo_search_tasks", "args": {"query": "Kestrel"}},
                    {"call": "todo_update_task", "args": {"task_id": "todo-1", "notes": "UPS tracking: 1Z84E7W20391847762"}},
                    {"answer": "Added the tracking number 1Z84E7W20391847762."}], capability="cross-service")


def test_a_tracking_number_any_code_of_its_shape_passes_is_refused() -> None:
    doc = _tracking("1Z[0-9A-Z]{16}")
    assert refused_by(doc, verify(doc), UNDER, "misread_value")
    verdict = verify(_tracking("1Z84E7W20391847762"))
    assert not by(verdict, "misread_value"), messages(verdict)


def test_ending_up_at_one_and_a_half_times_the_minimum_is_a_level_to_reach() -> None:
    said = ("The olive totes are nearly gone. Place an order big enough that, with what's already on the shelf, "
            "we end up at one and a half times the reorder level.")
    doc = _restock(said, 30)  # 1.5 × 20, ignoring the 14 held
    finding = refused_by(doc, verify(doc), MISMATCH, "stated_formula")
    assert "16" in finding.message
    assert verify(_restock(said, 16)).accepted


# --------------------------------------------------------------------------- a hidden fact beside a date of narration


def _new_due_date(body: str) -> Data:
    invoices = [{"id": "inv-611", "customer": "Marrow & Vine", "customer_email": "ap@marrowvine.example",
                 "description": "Tasting menu", "amount": 3420.0, "currency": "GBP", "due_date": "2026-12-08",
                 "status": "unpaid", "issued_at": "2026-11-15T10:00:00Z"}]
    mail = [{"id": "msg-1", "from": "ap@marrowvine.example", "to": "me@corp.example", "subject": "Tasting menu invoice",
             "body": body, "folder": "inbox", "is_read": False, "date": "2026-11-30", "received_at": "2026-11-30T11:04:00Z"}]
    return package("I agreed a later due date for Marrow & Vine's tasting-menu invoice on the phone. Move it for me, "
                   "ask me for the new date.", {"finance": {"invoices": invoices, "transactions": []},
                                                "gmail": {"messages": mail, "sent": []}},
                   ["finance_list_invoices", "finance_update_invoice", "gmail_list_messages", "gmail_get_message"],
                   [{"id": "due", "kind": "state_match", "weight": 0.8, "collection": "finance.invoices",
                     "record_id": "inv-611", "expect": {"due_date": "2026-12-22"}},
                    {"id": "asked", "kind": "asked_user", "weight": 0.2, "fact": "due"}],
                   [{"call": "finance_list_invoices", "args": {"customer": "Marrow & Vine"}},
                    {"ask": "What is the new due date?"},
                    {"call": "finance_update_invoice", "args": {"invoice_id": "inv-611", "due_date": {"$fact": "due"}}},
                    {"answer": "inv-611 is now due on 2026-12-22."}],
                   capability="multi-turn",
                   user={"persona": "Bookkeeper.", "facts": [{"key": "due", "value": "2026-12-22",
                                                              "reveal_when": ["date", "due", "when"]}]})


def test_a_due_date_an_email_states_beside_the_morning_it_was_agreed_is_readable() -> None:
    """"as agreed on the phone this morning, the invoice will now be due on 2026-12-22": this
    morning ties to the request's words (agreed, phone), the 22nd to the fact's own (due)."""
    doc = _new_due_date("Hi, as agreed on the phone this morning, the tasting-menu invoice (inv-611) will now be due "
                        "on 2026-12-22 instead of the 8th. Thanks! Ada")
    finding = refused_by(doc, verify(doc), Code.HIDDEN_FACT_LEAKED, "reads_fact")
    assert finding.claim is not None and "states the fact plainly" in finding.claim.reading
    assert "whether the fact can be read" in finding.claim.reading


def test_a_date_an_email_gives_for_something_else_keeps_the_fact_hidden() -> None:
    doc = _new_due_date("Hi, as agreed on the phone this morning, our tasting for the spring menu is on 2026-12-22. "
                        "We'll send the new invoice terms separately. Ada")
    verdict = verify(doc)
    assert not by(verdict, "reads_fact"), messages(verdict)


# --------------------------------------------------------------------------- a price the request states, not a group


def _classes_invoice() -> Data:
    """Four glazing classes at €150, less 5%: 570; the customer's earlier invoices (450 in October,
    150 in November) total 600, which less 5% is 570 too."""
    invoices = [{"id": f"inv-00{n}", "customer": "Marsh Pottery", "customer_email": "accounts@marsh.example",
                 "description": text, "amount": amount, "currency": "EUR", "due_date": due, "status": "paid",
                 "issued_at": f"{due}T09:00:00Z"}
                for n, text, amount, due in [(1, "Glazing classes, October (3)", 450.0, "2026-10-20"),
                                             (2, "Glazing class, November (1)", 150.0, "2026-11-20")]]
    return package(
        "Invoice Marsh Pottery for the four glazing classes we ran in November at €150 a class, less the 5% loyalty "
        "discount, to the email on their earlier invoices, due 2026-12-31. Tell me the amount.",
        {"finance": {"invoices": invoices, "transactions": []}}, ["finance_list_invoices", "finance_create_invoice"],
        [{"id": "invoiced", "kind": "state_count", "weight": 0.8, "collection": "finance.invoices", "scope": "created",
          "where": {"customer": "Marsh Pottery", "customer_email": "accounts@marsh.example", "amount": 570,
                    "currency": "EUR", "due_date": "2026-12-31"}, "op": "==", "value": 1},
         {"id": "told", "kind": "answer_matches", "weight": 0.2, "pattern": "\\b570\\b"}],
        [{"call": "finance_list_invoices", "args": {"customer": "Marsh Pottery"}},
         {"call": "finance_create_invoice", "args": {"customer": "Marsh Pottery",
                                                     "customer_email": {"$ref": "steps[0].result.invoices[0].customer_email"},
                                                     "description": "Glazing classes, November (4 x 150 EUR, less 5%)",
                                                     "amount": 570, "currency": "EUR", "due_date": "2026-12-31"}},
         {"answer": "Invoiced Marsh Pottery 570 EUR (4 x 150 less 5%), due 2026-12-31."}])


def test_a_count_at_a_stated_price_is_no_total_over_the_records_read() -> None:
    """570 is what the request prices in words; that two records read total 600, less 5% the same,
    makes it no figure over records the request leaves out."""
    verdict = verify(_classes_invoice())
    assert verdict.accepted and by(verdict, "selected_records") == [], messages(verdict)


def _pipeline_note(request: str) -> Data:
    deals = [{"id": f"deal-{n}", "customer_id": "cust-501", "title": title, "amount": amount, "stage": "proposal",
              "owner": "lena.ortiz", "close_date": ""}
             for n, title, amount in [(701, "Showroom fit-out", 12000), (702, "Spring catalogue", 8500)]]
    return package(
        request, {"crm": {"customers": [], "deals": deals}, "notes": {"notes": []}},
        ["crm_list_deals", "notes_create_note"],
        [{"id": "note", "kind": "state_count", "weight": 1.0, "collection": "notes.notes", "scope": "created",
          "where": {"title": "Ferri pipeline", "body": {"$regex": "20[,.]?500"}}, "op": "==", "value": 1}],
        [{"call": "crm_list_deals", "args": {"customer_id": "cust-501"}},
         {"call": "notes_create_note", "args": {"title": "Ferri pipeline", "body": "Open deals: Showroom fit-out "
                                                "12,000; Spring catalogue 8,500. Combined amount: 20,500."}},
         {"answer": "Noted the combined amount of the open deals, 20,500, in 'Ferri pipeline'."}])


def test_a_combined_figure_asks_no_record_value_to_be_carried() -> None:
    """"The combined amount" is a figure over the deals: the reference's own listing of each deal's
    amount beside it is no value the request asks the note to carry."""
    verdict = verify(_pipeline_note("Put the combined amount of cust-501's open deals in a new note titled "
                                    "'Ferri pipeline'."))
    assert by(verdict, "misread_value") == [], messages(verdict)


@pytest.mark.parametrize(("text", "codes"), [
    ("Collection code: 7Q4-KX9. Bring photo ID.", ["7Q4-KX9"]),
    ("ref AB1-CD2-EF3.", ["AB1-CD2-EF3"]),
    ("the ABC-DEF team", []), ("COVID-19 rules apply", []), ("Room 2B-301", []),  # letters only; too short a group
])
def test_groups_of_capitals_and_digits_joined_by_hyphens_are_a_code(text: str, codes: list[str]) -> None:
    assert codes_in(text) == codes


def test_a_phone_number_read_in_a_text_has_the_other_numbers_of_that_text_as_look_alikes() -> None:
    """"New mobile number from today is +47 938 60 274. The hut landline (+47 755 20 110) is
    unchanged": an agent that misreads stores the landline."""
    from datetime import date

    from pipeline.verify.carried import _kind, look_alikes
    body = ("Hi both, my old phone died on the ridge. New mobile number from today is +47 938 60 274. "
            "The hut landline (+47 755 20 110) is unchanged. Mira")
    assert [_kind(v) for v in ("+47 938 60 274", "(01632) 960 452", "2026-12-01", "12 500", "+47 93")] == [
        "phone", "phone", "date", None, None]
    assert look_alikes("phone", "+47 938 60 274", [[{"id": "msg-1", "body": body}]], date(2026, 12, 1))[0] == \
        "+47 755 20 110"


def test_a_field_s_words_match_their_plural_in_the_request() -> None:
    from pipeline.verify.carried import _key_words
    assert {"quantity", "quantities"} <= _key_words("quantity") and {"phone", "phones"} <= _key_words("phone")


def test_a_date_time_with_seconds_is_a_date_read_by_its_day() -> None:
    """"Friday 11 December, arriving 09:00" gives the day of "2026-12-11T09:00:00": its look-alikes
    are other days at the same time, never the same day again."""
    from datetime import date

    from pipeline.verify.carried import _kind, look_alikes
    assert _kind("2026-12-11T09:00:00") == "date" and _kind("2026-12-11T09:00:00Z") is None
    body = "I can come on Friday 11 December, arriving 09:00, or else on Monday 14 December."
    found = look_alikes("date", "2026-12-11T09:00:00", [[{"id": "m1", "body": body}]], date(2026, 12, 1))
    assert found[0] == "2026-12-14T09:00:00" and all(v[:10] != "2026-12-11" for v in found)


def test_a_difference_the_request_asks_for_has_its_two_numbers_as_look_alikes() -> None:
    """"an order for exactly the shortfall" of "Pilsner 30L keg   ordered 30   delivered 18": 12,
    and an agent that copies writes 30 or 18; without words for a difference, nothing."""
    from pipeline.verify.carried import _difference_read
    note = [[{"image_path": "note.jpg", "text": "DELIVERY NOTE 0412\nPilsner 30L keg   ordered 30   delivered 18\n"
                                                 "IPA 20L keg   ordered 10   delivered 10"}]]
    assert _difference_read(12, note, "Order exactly the shortfall from them.") == (30, 18)
    assert _difference_read(12, note, "Order twelve more kegs from them.") == ()
    assert _difference_read(7, note, "Order exactly the shortfall from them.") == ()


def test_a_date_time_read_from_a_text_has_the_same_day_at_other_times_as_look_alikes() -> None:
    """"move Bamse's grooming to Thursday 10 December at 13:30": an agent that misreads the time
    writes another time a text read gives, else an hour later; a time no text gave has none."""
    from pipeline.verify.carried import _other_clocks
    siri = [{"id": "m1", "body": "Could we move Bamse's grooming to Thursday 10 December at 13:30 instead?"}]
    kari = [{"id": "m2", "body": "Can Nala come Thursday 10 December at 15:30 for a bath?"}]
    assert _other_clocks("2026-12-10T13:30", [siri, kari]) == ("2026-12-10T15:30", "2026-12-10T14:30")
    assert _other_clocks("2026-12-10T13:30", [siri]) == ("2026-12-10T14:30",)
    assert _other_clocks("2026-12-10T11:00", [siri]) == () and _other_clocks("2026-12-10", [siri]) == ()
