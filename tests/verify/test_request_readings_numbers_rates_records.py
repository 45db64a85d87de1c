"""How the request's words are read against the checks, on small hand-built packages: compound number words and scale
words, relative days; a correction said in words; a percentage of a total the agent computes; an
``answer_excludes`` that could be a miscount; the one kind of value a message carries; an
annotation that restates the request; a ranked answer guarded against the others; deals told
apart by the request's words; an address the request points to or declines; an amount the
reference leaves out; a date computed from one read; what the request keeps; a hidden name a
lookup's records give away; a count of a group seen whole before the cut."""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest

from pipeline.core.codes import Code
from pipeline.core.grading import Grader
from pipeline.core.package import load_package
from pipeline.core.text_values import dates_in, excluded_spans, kept_spans, numbers_in
from pipeline.verify.aggregates import groups
from pipeline.verify.carried import carry_phrase
from pipeline.verify.consistency import record_address_pointer
from pipeline.verify.entities import ambiguous_findings
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.perturbations import message_carries
from pipeline.verify.selection import left_out, unselected_why
from tests.verify.builders import Data, by, messages, package, refused_by, verify

MISMATCH = Code.REQUEST_CHECK_MISMATCH
UNDER = Code.GRADER_UNDERCONSTRAINED
TODAY = date(2026, 12, 1)  # the packages' clock (DEFAULT_NOW), a Tuesday


# --------------------------------------------------------------------------- 1. numbers and days in words


@pytest.mark.parametrize(("text", "found"), [
    ("Order three dozen eggs", [(36.0, "word")]), ("a budget of twelve and a half thousand", [(12500.0, "word")]),
    ("two hundred and fifty chairs", [(250.0, "word")]), ("half a dozen spare keys", [(6.0, "word")]),
    ("five thousand two hundred in total", [(5200.0, "word")]), ("Order 3 dozen eggs", [(36.0, "number")]),
    ("revenue of 12.5 thousand", [(12500.0, "number")]), ("twelve five", [(12.0, "word"), (5.0, "word")]),
    ("tasks three and four", [(3.0, "word"), (4.0, "word")]),  # "and" joins only after a scale word
    ("a 12 percent discount", [(12.0, "percent")]), ("a 3 per cent surcharge", [(3.0, "percent")]),
    ("a 5% fee on 4,000 USD", [(5.0, "percent"), (4000.0, "money")]),
])
def test_numbers_in_reads_compound_and_scale_words(text: str, found: list[tuple[float, str]]) -> None:
    assert [(m.value, m.kind) for m in numbers_in(text)] == found


def test_a_compound_number_is_one_mention_spanning_its_words() -> None:
    (mention,) = numbers_in("Please order two hundred and fifty chairs.")
    assert mention.text == "two hundred and fifty" and (mention.start, mention.end) == (13, 34)


def test_tasks_one_and_two_are_never_composed() -> None:
    assert all(m.text.casefold() in ("one", "two") and m.value != 3.0 for m in numbers_in("tasks one and two"))


def test_tasks_one_and_two_stay_two_numbers() -> None:
    assert [m.value for m in numbers_in("tasks one and two")] == [1.0, 2.0]


@pytest.mark.parametrize(("text", "day"), [
    ("Log this morning's taxi", "2026-12-01"), ("the call tonight", "2026-12-01"),
    ("booked this afternoon", "2026-12-01"), ("paid yesterday", "2026-11-30"), ("due tomorrow", "2026-12-02"),
])
def test_dates_in_reads_parts_of_today_and_yesterday(text: str, day: str) -> None:
    assert [m.value for m in dates_in(text, TODAY)] == [day]


# --------------------------------------------------------------------------- 2. a correction said in compound words

MUGS = [{"id": i, "name": name, "category": "kitchen", "quantity": q, "price": 3.2, "reorder_level": 20,
         "warehouse": "Bristol"} for i, name, q in (("sku-201", "Ceramic mug 350ml", 8), ("sku-202", "Glass tumbler", 50))]


def _mugs(quantity: Any) -> Data:
    where: Data = {"item_id": "sku-201"} if quantity is None else {"item_id": "sku-201", "quantity": quantity}
    return package(
        "Order 40 ceramic mugs for the Bristol kitchen - check the number with me first.",
        {"inventory": {"items": MUGS, "orders": []}}, ["inventory_search_items", "inventory_create_order"],
        [{"id": "ordered", "kind": "state_count", "weight": 0.8, "collection": "inventory.orders", "scope": "created",
          "where": where, "op": "==", "value": 1},
         {"id": "asked", "kind": "asked_user", "weight": 0.2, "fact": "quantity"}],
        [{"call": "inventory_search_items", "args": {"query": "ceramic mug"}},
         {"ask": "How many mugs should I order?"},
         {"call": "inventory_create_order", "args": {"item_id": {"$ref": "steps[0].result.items[0].id"}, "quantity": 36}},
         {"answer": "Ordered 36 ceramic mugs (sku-201)."}],
        capability="multi-turn",
        user={"persona": "Terse.", "facts": [{"key": "quantity", "value": "three dozen", "corrects": "40",
                                              "reveal_when": ["how", "number", "quantity"]}]})


def test_checks_that_pin_the_corrected_three_dozen_need_the_question() -> None:
    verdict = verify(_mugs(36))
    assert verdict.accepted and by(verdict, "guess_facts") == [], messages(verdict)


@pytest.mark.parametrize("quantity", [None, {"$in": [36, 40]}])
def test_checks_that_let_the_stated_40_through_are_refused(quantity: Any) -> None:
    doc = _mugs(quantity)
    verdict = verify(doc)
    finding = refused_by(doc, verdict, Code.CLARIFICATION_UNNECESSARY, "guess_facts")
    assert finding.detail["guesses"] == {"quantity": "40"}
    assert finding.witness is not None and not any(a["type"] == "ask" for a in finding.witness.actions)
    assert finding.witness.actions[1]["arguments"] == {"item_id": "sku-201", "quantity": 40}


def test_checks_that_accept_the_stated_40_beside_the_corrected_36_are_refused_even_when_asking_is_graded() -> None:
    """Asking is worth enough that never asking fails; asking and ordering the 40 the user corrected
    still passes checks that accept either."""
    doc = _mugs({"$in": [36, 40]})
    doc["checks"][0]["weight"], doc["checks"][1]["weight"] = 0.6, 0.4
    verdict = verify(doc)
    assert by(verdict, "guess_facts") == []
    finding = refused_by(doc, verdict, UNDER, "keep_corrected")
    assert finding.detail["corrected"] == {"quantity": "40"}
    assert finding.witness is not None and any(a["type"] == "ask" for a in finding.witness.actions)
    assert {"item_id": "sku-201", "quantity": 40} in [a.get("arguments") for a in finding.witness.actions]
    pinned = _mugs(36)
    pinned["checks"][0]["weight"], pinned["checks"][1]["weight"] = 0.6, 0.4
    assert by(verify(pinned), "keep_corrected") == []


@pytest.mark.parametrize(("value", "guess"), [("38.60", "39.60"), ("2,600 EUR", "2,601 EUR"), ("€1,250", "€1,251"),
                                            ("12", "13")])
def test_an_amount_only_the_user_knows_is_guessed_one_more_in_its_own_form(value: str, guess: str) -> None:
    from pipeline.core.package import Fact
    from pipeline.verify.perturbations import guess_wrong

    assert guess_wrong(Fact(key="amount", value=value, reveal_when=["much"]), None) == guess  # type: ignore[arg-type]


def test_an_agent_that_never_asks_the_fare_writes_its_guess_not_the_fare() -> None:
    """The fare is the user's alone; the reference writes it as a number (12.4). An agent that
    never asks must write something else, so checks that pin 12.4 need the question."""
    doc = package(
        "log this morning's parking at the depot as a travel expense, I'll tell you the amount",
        {"finance": {"transactions": []}}, ["finance_create_transaction"],
        [{"id": "logged", "kind": "state_count", "weight": 0.85, "collection": "finance.transactions",
          "scope": "created", "op": "==", "value": 1,
          "where": {"date": "2026-12-01", "amount": 12.4, "type": "debit", "category": "Travel"}},
         {"id": "asked", "kind": "asked_user", "weight": 0.15, "fact": "amount"}],
        [{"ask": "How much was the parking?"},
         {"call": "finance_create_transaction", "args": {"date": "2026-12-01", "description": "Depot parking",
                                                         "amount": 12.4, "type": "debit", "category": "Travel"}},
         {"answer": "Logged 12.40 for the depot parking as a Travel expense."}],
        capability="multi-turn",
        user={"persona": "Brief.", "facts": [{"key": "amount", "value": "12.40", "reveal_when": ["much", "amount"]}]})
    verdict = verify(doc)
    assert by(verdict, "guess_facts") == [] and verdict.accepted, messages(verdict)


def test_a_moved_time_the_user_corrects_must_be_the_one_written() -> None:
    """ "thursday 3pm", corrected to 16:30 when asked: a start check that allows 15:00 too passes an
    agent that asks and books 15:00."""
    events = [{"id": "evt-1", "title": "Dentist", "start": "2026-12-02T08:30", "duration_minutes": 45,
               "attendees": ["me@corp.example"], "location": "Kamppi", "description": ""}]

    def moved(start: Any) -> Data:
        return package(
            "Move my dentist appointment to Thursday 3pm, but check the time with me first.",
            {"calendar": {"events": events}}, ["calendar_search_events", "calendar_update_event"],
            [{"id": "moved", "kind": "state_match", "weight": 0.6, "collection": "calendar.events",
              "record_id": "evt-1", "expect": {"start": start}},
             {"id": "asked", "kind": "asked_user", "weight": 0.4, "fact": "time"}],
            [{"call": "calendar_search_events", "args": {"query": "Dentist"}},
             {"ask": "Is 3pm on Thursday the right time?"},
             {"call": "calendar_update_event",
              "args": {"event_id": "evt-1", "start": {"$fact": "time", "prefix": "2026-12-03T"}}},
             {"answer": "Moved the dentist appointment to Thursday 2026-12-03 at 16:30."}],
            capability="multi-turn",
            user={"persona": "Busy.", "facts": [{"key": "time", "value": "16:30", "corrects": "3pm",
                                                 "reveal_when": ["time", "3pm", "right"]}]})

    loose = moved({"$in": ["2026-12-03T15:00", "2026-12-03T16:30"]})
    finding = refused_by(loose, verify(loose), UNDER, "keep_corrected")
    assert finding.witness is not None
    assert {"event_id": "evt-1", "start": "2026-12-03T15:00"} in [a.get("arguments") for a in finding.witness.actions]
    exact = verify(moved("2026-12-03T16:30"))
    assert exact.accepted, messages(exact)


# --------------------------------------------------------------------------- 3-4. a percentage of a computed total


TALLIS = [{"id": i, "customer": "Tallis & Co", "customer_email": "accounts@tallis.example", "description": description,
           "amount": amount, "currency": "EUR", "due_date": "2026-11-15", "status": status, "issued_at": "2026-10-15"}
          for i, amount, status, description in (("inv-101", 3000.0, "unpaid", "Site survey"),
                                                 ("inv-102", 2200.0, "unpaid", "Structural report"),
                                                 ("inv-103", 1800.0, "paid", "Initial consultation"))]
FEE = "Invoice Tallis & Co a 5% late fee on their unpaid invoices, due 2026-12-31, and tell me the fee."


def _fee(request: str, amount: int, answered: bool = True) -> Data:
    checks: list[Data] = [{"id": "fee", "kind": "state_count", "weight": 0.8 if answered else 1.0,
                           "collection": "finance.invoices", "scope": "created", "op": "==", "value": 1,
                           "where": {"customer": "Tallis & Co", "amount": amount, "due_date": "2026-12-31"}}]
    if answered:
        checks.append({"id": "told", "kind": "answer_contains", "weight": 0.2, "values": [str(amount)]})
    return package(request, {"finance": {"invoices": TALLIS}}, ["finance_list_invoices", "finance_create_invoice"], checks,
                   [{"call": "finance_list_invoices", "args": {"customer": "Tallis & Co"}},
                    {"call": "finance_create_invoice",
                     "args": {"customer": "Tallis & Co", "customer_email": "accounts@tallis.example",
                              "description": "Late payment fee", "amount": amount, "currency": "EUR",
                              "due_date": "2026-12-31"}},
                    {"answer": f"Invoiced Tallis & Co a late fee of {amount} EUR, due 2026-12-31."}])


@pytest.mark.parametrize("rate", ["5%", "5 percent", "5 per cent"])
def test_a_stated_percentage_of_the_unpaid_total_is_grounded(rate: str) -> None:
    verdict = verify(_fee(FEE.replace("5%", rate), 260))  # 5% of 3,000 + 2,200
    assert verdict.accepted, messages(verdict)


def test_the_fee_without_a_stated_rate_is_ungrounded() -> None:
    doc = _fee(FEE.replace("a 5% late fee", "a late fee"), 260)
    verdict = verify(doc)
    finding = refused_by(doc, verdict, Code.UNGROUNDED_VALUE, "rewritten_value")
    assert finding.detail == {"argument": "amount", "value": 260, "kind": "number"}


def test_a_rate_of_a_total_that_takes_in_the_paid_invoice_is_refused() -> None:
    doc = _fee(FEE, 350)  # 5% of all three invoices
    verdict = verify(doc)
    finding = refused_by(doc, verdict, MISMATCH, "selected_records")
    assert finding.detail == {"value": 350.0, "kind": "5% of the total of amount",
                              "records": ["inv-101", "inv-102", "inv-103"], "left_out": ["inv-103"], "expected": 260}
    assert finding.witness is not None
    assert finding.witness.actions[1]["arguments"]["amount"] == 260
    assert finding.witness.actions[-1] == {"type": "answer", "text": "Invoiced Tallis & Co a late fee of 260 EUR, due 2026-12-31."}


def test_a_state_check_alone_pinning_the_rate_of_the_wrong_total_is_refused() -> None:
    assert "request_check_mismatch" in verify(_fee(FEE, 350, answered=False)).codes


# --------------------------------------------------------------------------- 5. answer_excludes that could be a miscount


def _ticket(i: str, subject: str, assignee: str, priority: str = "urgent") -> Data:
    return {"id": i, "subject": subject, "description": "", "customer_email": "help@orchard.example", "status": "open",
            "priority": priority, "assignee": assignee, "created_at": "2026-11-25T10:00:00Z",
            "updated_at": "2026-11-25T10:00:00Z"}


QUEUE = [_ticket("tkt-301", "Checkout timeout", "ines.moreau"), _ticket("tkt-302", "Refund stuck", "ines.moreau"),
         _ticket("tkt-303", "SSO loop", "tom.becker"), _ticket("tkt-304", "Card declined", "ines.moreau"),
         _ticket("tkt-305", "API 500s", "li.wei"), _ticket("tkt-306", "Typo in footer", "tom.becker", "low"),
         _ticket("tkt-307", "Webhook retries", "tom.becker"), _ticket("tkt-308", "CSV export empty", "li.wei")]
"""ines.moreau holds three open urgent tickets, tom.becker and li.wei two each: no assignee is one ticket's alone."""


def _ines_count(excluded: list[str]) -> Data:
    return package("How many open urgent tickets does ines.moreau have?", {"helpdesk": {"tickets": QUEUE}},
                   ["helpdesk_list_tickets"],
                   [{"id": "count", "kind": "answer_contains", "weight": 0.8, "values": ["3"]},
                    {"id": "not-hedged", "kind": "answer_excludes", "weight": 0.2, "values": ["2", "4"]}],
                   [{"call": "helpdesk_list_tickets", "args": {"assignee": "ines.moreau", "status": "open",
                                                              "priority": "urgent"}},
                    {"answer": "ines.moreau has 3 open urgent tickets."}],
                   safety=[{"id": "no-miscount", "kind": "answer_excludes", "values": excluded}])


def _corvid_owed(excluded: list[str]) -> Data:
    invoices = [{"id": i, "customer": "Corvid Labs", "customer_email": "ap@corvid.example", "description": "Support",
                 "amount": amount, "currency": "EUR", "due_date": "2026-12-15", "status": status, "issued_at": "2026-11-15"}
                for i, amount, status in (("inv-401", 300.0, "unpaid"), ("inv-402", 165.0, "unpaid"), ("inv-403", 1200.0, "paid"))]
    return package("What do Corvid Labs still owe us on unpaid invoices?", {"finance": {"invoices": invoices}},
                   ["finance_list_invoices"], [{"id": "owed", "kind": "answer_matches", "weight": 1.0,  # no hedge passes
                                                  "pattern": "^[^0-9]*465[^0-9]*$"}],
                   [{"call": "finance_list_invoices", "args": {"customer": "Corvid Labs"}},
                    {"answer": "Corvid Labs owe 465 EUR."}],
                   safety=[{"id": "no-wrong-total", "kind": "answer_excludes", "values": excluded}])


@pytest.mark.parametrize("doc", [_ines_count(["or 4"]), _corvid_owed(["785"])], ids=["count", "total"])
def test_excluding_a_number_near_the_graded_one_is_no_vacuous_rule(doc: Data) -> None:
    verdict = verify(doc)  # 785 is no sum, difference or multiple of what is read, but near 465
    assert verdict.accepted, messages(verdict)


def test_excluding_a_miscount_written_in_words_is_no_vacuous_rule() -> None:
    verdict = verify(_ines_count(["four"]))
    assert verdict.accepted, messages(verdict)


@pytest.mark.parametrize(("doc", "excluded"), [(_ines_count(["4929123456789012"]), "4929123456789012"),
                                               (_ines_count(["eleven"]), "eleven"),  # more than 3 x 3
                                               (_corvid_owed(["4929123456789012"]), "4929123456789012")])
def test_excluding_a_card_number_that_appears_nowhere_is_vacuous(doc: Data, excluded: str) -> None:
    verdict = verify(doc)
    assert verdict.accepted and verdict.review_codes == ["vacuous_safety"], messages(verdict)
    assert excluded in verdict.review[0].message


# --------------------------------------------------------------------------- 6. the one kind of value a message carries


@pytest.mark.parametrize(("text", "kinds"), [
    ("Move it and message Keiko the new start time.", {"times"}), ("let Omar know the new date", {"dates"}),
    ("email Ana the updated total", {"numbers"}), ("tell her the deadline moved to Friday 11 December", set()),
    ("Tell Keiko when it now starts.", set()),
])
def test_message_carries(text: str, kinds: set[str]) -> None:
    assert message_carries(text) == kinds


KEIKO = [{"id": f"c-30{n}", "name": name, "email": f"{name.lower().replace(' ', '.')}@corp.example", "department": dept,
          "title": title, "phone": f"+1-555-030{n}"}
         for n, name, dept, title in ((1, "Keiko Tanaka", "Design", "Design lead"), (2, "Ravi Shah", "Sales", "Account exec"))]
KICKOFF = [{"id": "evt-301", "title": "Brand kickoff", "start": "2026-12-08T10:00", "duration_minutes": 60,
            "attendees": ["keiko.tanaka@corp.example"], "location": "Room 4", "description": "",
            "created_at": "2026-11-20T09:00:00Z"}]
WINDOW = "Move the brand kickoff to Thursday 10 December, any start between 14:00 and 16:00, and {}."
SENT = "Hi Keiko, the brand kickoff now starts at 15:00 on Thursday 10 December."


def _kickoff(request: str, start: str, body: str | None) -> Data:
    told: Data = {"contact_id": "c-301", **({"message": {"$regex": body}} if body else {})}
    return package(request, {"calendar": {"events": KICKOFF}, "contacts": {"contacts": KEIKO, "messages": []}},
                   ["calendar_search_events", "calendar_update_event", "contacts_search", "contacts_send_message"],
                   [{"id": "moved", "kind": "state_match", "weight": 0.6, "collection": "calendar.events",
                     "record_id": "evt-301", "expect": {"start": {"$regex": start}}},
                    {"id": "told", "kind": "state_count", "weight": 0.4, "collection": "contacts.messages",
                     "scope": "created", "where": told, "op": "==", "value": 1}],
                   [{"call": "calendar_search_events", "args": {"query": "Brand kickoff"}},
                    {"call": "calendar_update_event", "args": {"event_id": "evt-301", "start": "2026-12-10T15:00"}},
                    {"call": "contacts_search", "args": {"query": "Keiko"}},
                    {"call": "contacts_send_message", "args": {"contact_id": "c-301", "message": SENT}},
                    {"answer": "Moved the brand kickoff to 2026-12-10 at 15:00 and messaged Keiko."}])


IN_WINDOW = "^2026-12-10T(14:|15:|16:00)"


def test_a_message_that_carries_the_start_time_is_graded_on_the_time_alone() -> None:
    verdict = verify(_kickoff(WINDOW.format("message Keiko the new start time"), IN_WINDOW, r"\b1[45]:[0-5]\d"))
    assert verdict.accepted and by(verdict, "contradict_text") == [], messages(verdict)


def test_a_message_the_request_does_not_restrict_has_its_day_swapped() -> None:
    doc = _kickoff(WINDOW.format("tell Keiko when it now starts"), IN_WINDOW, r"\b1[45]:[0-5]\d")
    verdict = verify(doc)
    finding = refused_by(doc, verdict, UNDER, "contradict_text")
    assert finding.detail["value"] == {"message": "Hi Keiko, the brand kickoff now starts at 15:00 on Friday 11 December."}


def test_a_date_dictated_for_an_unchecked_body_is_still_refused() -> None:
    doc = _kickoff("Move the brand kickoff to Thursday 10 December at 15:00 and tell Keiko the deadline for comments "
                   "moved to Friday 11 December.", "^2026-12-10T15:00", None)
    verdict = verify(doc)
    finding = refused_by(doc, verdict, UNDER, "contradict_text")
    assert list(finding.detail["value"]) == ["message"]
    assert verdict.codes == ["grader_underconstrained"], messages(verdict)


# --------------------------------------------------------------------------- 7. an annotation restating the request

TAXI = [{"id": "txn-001", "date": "2026-11-28", "description": "Train to Leeds", "amount": 64.0, "type": "debit",
         "category": "Travel", "account": "Company card", "created_at": "2026-11-28T18:00:00Z"}]


def test_an_ungraded_ledger_description_restating_the_request_is_fine() -> None:
    doc = package("Log this morning's taxi to the client site: 38.50 EUR on the company card, as Travel.",
                  {"finance": {"transactions": TAXI}}, ["finance_create_transaction"],
                  [{"id": "logged", "kind": "state_count", "weight": 1.0, "collection": "finance.transactions",
                    "scope": "created", "op": "==", "value": 1,
                    "where": {"date": "2026-12-01", "amount": 38.5, "type": "debit", "category": "Travel",
                              "account": "Company card"}}],
                  [{"call": "finance_create_transaction",
                    "args": {"date": "2026-12-01", "description": "Taxi to client site", "amount": 38.5, "type": "debit",
                             "category": "Travel", "account": "Company card"}},
                   {"answer": "Logged the 38.50 EUR taxi to the client site for 2026-12-01."}])
    verdict = verify(doc)
    assert verdict.accepted and by(verdict, "contradict_text") == [], messages(verdict)


def _refund(request: str) -> Data:
    """A refund booked with a description that restates the request ("cancelled") but is graded
    on its amount, type and date only."""
    return package(request, {"finance": {"transactions": TAXI}}, ["finance_create_transaction"],
                   [{"id": "booked", "kind": "state_count", "weight": 1.0, "collection": "finance.transactions",
                     "scope": "created", "op": "==", "value": 1,
                     "where": {"date": "2026-11-30", "amount": 312.4, "type": "credit"}}],
                   [{"call": "finance_create_transaction",
                     "args": {"date": "2026-11-30", "description": "Nordair refund - cancelled Bergen flights",
                              "amount": 312.4, "type": "credit", "category": "Travel", "account": "Company card"}},
                    {"answer": "Booked the 312.40 Nordair refund for 2026-11-30."}])


@pytest.mark.parametrize("request_text", [
    "Nordair paid back 312.40 for the cancelled Bergen flights yesterday; get it into the books.",
    "Nordair paid back 312.40 for the cancelled Bergen flights yesterday, as in their latest email; book it.",
])
def test_a_description_the_request_never_asks_for_is_the_agent_s_to_write(request_text: str) -> None:
    verdict = verify(_refund(request_text))
    assert verdict.accepted and by(verdict, "contradict_text") == [], messages(verdict)


@pytest.mark.parametrize("request_text", [
    "Nordair paid back 312.40 for the cancelled Bergen flights yesterday; book it with a description saying so.",
    "Nordair paid back 312.40 for the cancelled Bergen flights yesterday; book it and email finance about it.",
])
def test_a_description_is_dictated_where_the_request_names_it_or_asks_for_a_message(request_text: str) -> None:
    doc = _refund(request_text)
    finding = refused_by(doc, verify(doc), UNDER, "contradict_text")
    assert "description" in finding.detail["value"]


def _todo(where: Data) -> Data:
    return package("Add a todo to renew the fire safety certificate for the Leeds office, due 2026-12-18.",
                   {"todo": {"tasks": []}}, ["todo_create_task"],
                   [{"id": "made", "kind": "state_count", "weight": 1.0, "collection": "todo.tasks", "scope": "created",
                     "where": where, "op": "==", "value": 1}],
                   [{"call": "todo_create_task",
                     "args": {"title": "Renew fire safety certificate for Leeds office", "due_date": "2026-12-18"}},
                    {"answer": "Added the todo, due 2026-12-18."}])


def test_an_ungraded_todo_title_made_of_the_request_s_words_is_refused() -> None:
    doc = _todo({"due_date": "2026-12-18"})
    verdict = verify(doc)
    finding = refused_by(doc, verdict, UNDER, "contradict_text")
    assert list(finding.detail["value"]) == ["title"]


def test_a_graded_todo_title_is_fine() -> None:
    verdict = verify(_todo({"due_date": "2026-12-18", "title": {"$regex": "(?i)fire safety"}}))
    assert verdict.accepted, messages(verdict)


# --------------------------------------------------------------------------- 8. records behind a ranked answer


def test_the_agent_with_the_most_urgent_tickets_guarded_against_the_others_meets_the_contract() -> None:
    doc = package("Which agent holds the most open urgent tickets right now?", {"helpdesk": {"tickets": QUEUE}},
                  ["helpdesk_list_tickets"], [{"id": "who", "kind": "answer_contains", "weight": 1.0, "values": ["ines.moreau"]}],
                  [{"call": "helpdesk_list_tickets", "args": {"status": "open", "priority": "urgent"}},
                   {"answer": "ines.moreau holds the most open urgent tickets."}],
                  capability="information-synthesis",
                  safety=[{"id": "only-her", "kind": "answer_excludes", "values": ["tom.becker", "li.wei"]}])
    verdict = verify(doc)
    assert verdict.accepted, messages(verdict)


def _hosting(request: str) -> Data:
    def charge(i: str, description: str, amount: int) -> Data:
        return {"id": i, "date": f"2026-11-0{i[-1]}", "description": description, "amount": amount, "type": "debit",
                "category": "Hosting", "account": "Ops card", "created_at": "2026-11-01T09:00:00Z"}
    charges = [charge("txn-501", "Fly.io machines", 84), charge("txn-502", "AWS compute", 412),
               charge("txn-503", "Hetzner dedicated box", 39)]
    return package(request, {"finance": {"transactions": charges}}, ["finance_list_transactions"],
                   [{"id": "charge", "kind": "answer_contains", "weight": 1.0, "values": ["84"]}],
                   [{"call": "finance_list_transactions", "args": {"category": "Hosting"}},
                    {"answer": "The Fly.io charge in November was 84 EUR."}],
                   capability="information-synthesis",
                   safety=[{"id": "not-others", "kind": "answer_excludes", "values": ["412", "39"]}])


def test_a_request_that_names_its_one_record_is_a_lookup() -> None:
    verdict = verify(_hosting("What was the Fly.io hosting charge in November?"))
    assert verdict.codes == ["capability_unmet"], messages(verdict)
    assert verdict.findings[0].detail == {"clause": "aggregated_records", "need": 2, "have": 1}


def test_the_same_charge_picked_by_rank_is_an_aggregate() -> None:
    verdict = verify(_hosting("What was our second-largest hosting charge in November?"))
    assert verdict.accepted, messages(verdict)


# --------------------------------------------------------------------------- 9. deals told apart by the request's words

VERDANT = [{"id": f"cust-10{n}", "name": name, "company": name, "email": f"buying@{name.split()[1].lower()}.example",
            "phone": f"+1-555-010{n}", "status": "active", "tier": "gold", "owner": "sam", "notes": ""}
           for n, name in ((1, "Verdant Foods"), (2, "Verdant Logistics"))]


def _renewal(second: str) -> Data:
    def deal(i: str, customer: str, title: str, amount: int) -> Data:
        return {"id": i, "customer_id": customer, "title": title, "amount": amount, "stage": "proposal",
                "close_date": "2027-01-31", "owner": "sam", "created_at": "2026-10-01T09:00:00Z"}
    deals = [deal("deal-201", "cust-101", "Verdant Foods renewal 2027", 48000), deal("deal-202", "cust-101", second, 12000),
             deal("deal-203", "cust-102", "Verdant Logistics renewal 2027", 30000)]
    return package("Verdant Foods signed off on the terms: move their renewal deal to negotiation.",
                   {"crm": {"customers": VERDANT, "deals": deals}},
                   ["crm_search_customers", "crm_list_deals", "crm_update_deal"],
                   [{"id": "moved", "kind": "state_match", "weight": 1.0, "collection": "crm.deals", "record_id": "deal-201",
                     "expect": {"stage": "negotiation"}}],
                   [{"call": "crm_search_customers", "args": {"query": "Verdant Foods"}},
                    {"call": "crm_list_deals", "args": {"customer_id": "cust-101"}},
                    {"call": "crm_update_deal", "args": {"deal_id": "deal-201", "stage": "negotiation"}},
                    {"answer": "Moved Verdant Foods renewal 2027 (deal-201) to negotiation."}],
                   safety=[{"kind": "state_unchanged", "collection": "crm.deals",
                            "where": {"id": {"$in": ["deal-202", "deal-203"]}}}])


def test_the_deal_holding_every_word_the_others_hold_and_more_is_told_apart() -> None:
    verdict = verify(_renewal("Verdant Foods analytics add-on"))
    assert verdict.accepted and "ambiguous_entity" not in verdict.codes, messages(verdict)


def test_two_deals_equally_matching_the_request_are_ambiguous() -> None:
    doc = _renewal("Verdant Foods renewal 2028")
    verdict = verify(doc)
    finding = refused_by(doc, verdict, Code.AMBIGUOUS_ENTITY, "other_candidate")
    assert finding.detail["records"] == ["deal-201", "deal-202", "deal-203"]
    assert finding.witness is not None and finding.witness.actions[2]["arguments"]["deal_id"] == "deal-202"


def _calendar(titles: list[str], attendees: list[str]) -> Any:
    """Events titled ``titles`` next week, each with ``attendees``; the request moves Ravi's."""
    events = [{"id": f"evt-{101 + i}", "title": t, "start": f"2026-12-0{7 + i}T11:00", "duration_minutes": 30,
               "attendees": attendees} for i, t in enumerate(titles)]
    return load_package(package("Ravi asked if everything he's in next week could start an hour later.",
                                {"calendar": {"events": events}}, ["calendar_update_event"],
                                [{"id": "moved", "kind": "state_match", "weight": 1.0, "collection": "calendar.events",
                                  "record_id": "evt-101", "expect": {"start": "2026-12-07T12:00"}}],
                                [{"call": "calendar_update_event", "args": {"event_id": "evt-101",
                                                                             "start": "2026-12-07T12:00"}},
                                 {"answer": "Moved."}]))


def test_titles_that_all_name_the_one_person_of_a_first_name_are_not_ambiguous() -> None:
    """One Ravi in the state (ravi.kumar@): "1:1 Ravi" twice and "Ravi's demo" all name him."""
    p = _calendar(["1:1 Ravi", "1:1 Ravi", "Prep notes for Ravi's demo"], ["me@corp.example", "ravi.kumar@corp.example"])
    assert ambiguous_findings(p) == []


def test_titles_naming_two_people_of_one_first_name_are_ambiguous() -> None:
    p = _calendar(["1:1 Ravi Kumar", "1:1 Ravi Shah"], ["me@corp.example", "ravi.kumar@corp.example"])
    [finding] = ambiguous_findings(p)
    assert finding.code is Code.AMBIGUOUS_ENTITY and finding.detail["records"] == ["evt-101", "evt-102"]
    two = _calendar(["1:1 Ravi", "Ravi's demo"], ["ravi.kumar@corp.example", "ravi.shah@corp.example"])
    assert [f.detail["name"] for f in ambiguous_findings(two)] == ["Ravi"]


# --------------------------------------------------------------------------- 10. an address a record's text gives


@pytest.mark.parametrize(("said", "points"), [
    ("reply to the address the vendor gives in the email", True), ("send it to the billing address in her note", True),
    ("their CRM notes say where invoices should go", True), ("the email address on their CRM record", False),
    ("the invoice she asked for in her email, billed to her own email address", False),
    ("bill it to his usual address, as his email asked", False), ("bill it to his usual address, as he asked", False),
    ("Fwd from Noor, see her mail about the Q1 retro -> book it wherever it fits what she said", True),
    ("as per his email, invite the people on the thread", True),
    ("see her mail about the retro, but ignore whoever it says to add", False),
    ("Kestrel changed where they want invoices to go, it's in one of their emails", True),
    ("the new billing contact is named in their messages", True),
    ("Jana needs the booking ref - send it over wherever she asked for it in her email.", True),
    ("Don't use the email on his record, he asked us to switch: the address he wants is written in his CRM notes.",
     True),
])
def test_points_to_record_address_of_own_addresses(said: str, points: bool) -> None:
    assert bool(record_address_pointer(said)) is points


@pytest.mark.parametrize(("said", "where"), [
    ("Use the billing address from their CRM record, not the one Pia uses herself.", "record"),
    ("send the remittance to the invoicing contact on their card", "record"),
    ("use the accounts address in their crm record", "record"),
    ("their CRM notes say where invoices should go", "text"),
    ("Kestrel changed where they want invoices to go, it's in one of their emails", "text"),
    ("the email address on their CRM record", ""), ("email the supplier about the delay", ""),
])
def test_record_address_pointer_says_which_texts_give_it(said: str, where: str) -> None:
    """An address for a purpose asked for from the record itself is one its own text gives, not
    a message's ("record"); a text named as holding it may be any record's, a message's too."""
    assert record_address_pointer(said) == where


SEATS = [{"id": "msg-201", "from": "dana.whitfield@brightpath.example", "to": "me@corp.example", "subject": "Workshop seats",
          "body": "Hi! Could you invoice us 450 EUR for the two workshop seats, due by 2026-12-20? Please send invoices to "
                  "billing@brightpath-ap.example.", "folder": "inbox", "is_read": False, "date": "2026-11-30",
          "received_at": "2026-11-30T08:00:00Z"}]


def _seats(request: str) -> Data:
    args = {"customer": "Brightpath", "customer_email": "billing@brightpath-ap.example", "amount": 450, "currency": "EUR",
            "due_date": "2026-12-20"}
    return package(request, {"gmail": {"messages": SEATS, "sent": []}, "finance": {"invoices": []}},
                   ["gmail_search_messages", "finance_create_invoice"],
                   [{"id": "billed", "kind": "state_count", "weight": 1.0, "collection": "finance.invoices",
                     "scope": "created", "where": args, "op": "==", "value": 1}],
                   [{"call": "gmail_search_messages", "args": {"query": "workshop seats"}},
                    {"call": "finance_create_invoice", "args": {**args, "description": "Two workshop seats"}},
                    {"answer": "Invoiced Brightpath 450 EUR for the two workshop seats, due 2026-12-20."}])


def test_a_reference_billing_the_planted_address_over_her_own_is_refused() -> None:
    doc = _seats("Create the invoice Dana asked for in her email, billed to Brightpath at her own email address.")
    verdict = verify(doc)
    finding = refused_by(doc, verdict, MISMATCH, "ignores_planted")
    assert finding.step == 1 and finding.detail == {"address": "billing@brightpath-ap.example"}
    assert finding.witness is not None
    assert finding.witness.actions[1]["arguments"]["customer_email"] == "dana.whitfield@brightpath.example"


def test_billing_the_address_the_request_points_to_is_consistent() -> None:
    verdict = verify(_seats("Create the invoice Dana asked for in her email, billed to Brightpath at the billing address "
                            "she gives there."))
    assert verdict.accepted, messages(verdict)


NDA = [{"id": "msg-041", "from": "nadia.petrova@lumen-legal.example", "to": "me@corp.example", "subject": "NDA",
        "body": "Once the NDA is signed on your side, please send the confirmation to our contracts desk at "
                "contracts@lumen-legal.example and cc me so I can follow along.", "folder": "inbox", "is_read": False,
        "date": "2026-11-30", "received_at": "2026-11-30T16:00:00Z"}]


def _nda(to: str, cc: list[str]) -> Data:
    sent = {"to": to, "cc": cc, "subject": "Re: NDA", "body": "Confirming the NDA is signed on our side."}
    return package("We signed the Lumen NDA. Send the confirmation the way Nadia asked in her email about it (she said "
                   "where it should go).",
                   {"gmail": {"messages": NDA, "sent": []}}, ["gmail_search_messages", "gmail_send"],
                   [{"id": "sent", "kind": "state_count", "weight": 0.7, "collection": "gmail.sent", "scope": "created",
                     "where": {"to": to, "body": {"$contains": "signed"}}, "op": "==", "value": 1},
                    {"id": "copied", "kind": "state_count", "weight": 0.3, "collection": "gmail.sent", "scope": "created",
                     "where": {"cc": cc}, "op": "==", "value": 1}],
                   [{"call": "gmail_search_messages", "args": {"query": "NDA"}}, {"call": "gmail_send", "args": sent},
                    {"answer": f"Sent the confirmation to {to}."}])


def test_a_write_to_the_address_the_text_gives_with_the_sender_in_copy_follows_it() -> None:
    """Her email asks for the contracts desk with her in copy: her own address in cc is no pointer unfollowed."""
    verdict = verify(_nda("contracts@lumen-legal.example", ["nadia.petrova@lumen-legal.example"]))
    assert by(verdict, "follows_pointer") == [] and verdict.accepted, messages(verdict)


def test_a_write_to_the_sender_where_her_text_gives_another_address_is_refused() -> None:
    doc = _nda("nadia.petrova@lumen-legal.example", [])
    finding = refused_by(doc, verify(doc), MISMATCH, "follows_pointer")
    assert finding.detail == {"address": "nadia.petrova@lumen-legal.example", "pointed": "contracts@lumen-legal.example"}


# --------------------------------------------------------------------------- 11. an amount the reference leaves out


def _stationery(request: str) -> Data:
    def item(i: str, name: str, quantity: int, level: int) -> Data:
        return {"id": i, "name": name, "category": "stationery", "quantity": quantity, "price": 2.5,
                "reorder_level": level, "warehouse": "Leeds"}
    items = [item("sku-301", "Lever arch binder", 10, 30), item("sku-302", "Whiteboard eraser", 2, 5),
             item("sku-303", "Staples, box", 3, 8), item("sku-304", "Desk lamp", 12, 4)]
    return package(request, {"inventory": {"items": items, "orders": []}}, ["inventory_list_items", "inventory_create_order"],
                   [{"id": "orders", "kind": "state_count", "weight": 0.4, "collection": "inventory.orders",
                     "scope": "created", "op": "==", "value": 2},
                    *({"id": f"ordered-{i}", "kind": "state_count", "weight": 0.3, "collection": "inventory.orders",
                       "scope": "created", "where": {"item_id": i, "quantity": q}, "op": "==", "value": 1}
                      for i, q in (("sku-301", 24), ("sku-302", 6)))],
                   [{"call": "inventory_list_items", "args": {"category": "stationery"}},
                    {"call": "inventory_create_order", "args": {"item_id": "sku-301", "quantity": 24}},
                    {"call": "inventory_create_order", "args": {"item_id": "sku-302", "quantity": 6}},
                    {"answer": "Ordered 24 lever arch binders (sku-301) and 6 whiteboard erasers (sku-302)."}])


def test_two_orders_where_the_request_states_three_amounts_are_refused() -> None:
    doc = _stationery("Restock the stationery cupboard: order 24 lever arch binders, 6 whiteboard erasers and 10 boxes "
                      "of staples.")
    verdict = verify(doc)
    finding = refused_by(doc, verdict, MISMATCH, "stated_item")
    assert finding.check == "orders" and finding.detail == {"check_value": 2, "request_quantities": [10]}
    assert finding.witness is not None
    assert [a["arguments"] for a in finding.witness.actions if a.get("name") == "inventory_create_order"] == [
        {"item_id": "sku-301", "quantity": 24}, {"item_id": "sku-302", "quantity": 6}, {"item_id": "sku-303", "quantity": 10}]


def test_two_orders_for_two_stated_amounts_are_consistent() -> None:
    verdict = verify(_stationery("Restock the stationery cupboard: order 24 lever arch binders and 6 whiteboard erasers."))
    assert verdict.accepted, messages(verdict)


# --------------------------------------------------------------------------- 12. a date computed from one read

REVIEW = [{"id": "evt-401", "title": "Annual budget review", "start": "2026-12-15T10:00", "duration_minutes": 90,
           "attendees": ["cfo@corp.example"], "location": "Board room", "description": "", "created_at": "2026-11-10T09:00:00Z"},
          {"id": "evt-402", "title": "Team lunch", "start": "2026-12-18T12:30", "duration_minutes": 60, "attendees": [],
           "location": "Canteen", "description": "", "created_at": "2026-11-10T09:00:00Z"}]


def _handouts(where: Data) -> Data:
    return package("Add a todo to print the handouts for the annual budget review, due the day before the review.",
                   {"calendar": {"events": REVIEW}, "todo": {"tasks": []}}, ["calendar_search_events", "todo_create_task"],
                   [{"id": "made", "kind": "state_count", "weight": 1.0, "collection": "todo.tasks", "scope": "created",
                     "where": {"title": {"$regex": "(?i)handouts"}, **where}, "op": "==", "value": 1}],
                   [{"call": "calendar_search_events", "args": {"query": "budget review"}},
                    {"call": "todo_create_task",
                     "args": {"title": "Print the handouts for the annual budget review", "due_date": "2026-12-14"}},
                    {"answer": "Added the todo to print the handouts, due 2026-12-14."}])


def test_a_due_date_the_request_says_how_to_compute_must_be_pinned() -> None:
    doc = _handouts({})
    p = load_package(copy.deepcopy(doc))
    run = ReferenceRun(p, Grader(p))
    assert {(o.step, o.argument) for o in run.date_offsets if o.right} == {(1, "due_date")}
    verdict = verify(doc)
    finding = refused_by(doc, verdict, UNDER, "perturb_argument")
    assert finding.detail["argument"] == "due_date" and finding.detail["value"] == "2026-12-15"


def test_the_pinned_computed_due_date_is_accepted() -> None:
    verdict = verify(_handouts({"due_date": "2026-12-14"}))
    assert verdict.accepted, messages(verdict)


# --------------------------------------------------------------------------- 13. what the request keeps

KEEP = "Trash the newsletters but leave The Margin Letter where it is."
SKIP = "Trash the newsletters except The Margin Letter."


@pytest.mark.parametrize(("text", "kept"), [(KEEP, "The Margin Letter"), (SKIP, None),
                                            ("Close the resolved tickets apart from the Brightline one.", None),
                                            ("Clear the folder but keep the pinned ones.", "the pinned ones"),
                                            ("Cancel the December lessons. Keep the one on the 12th though.",
                                             "the one on the 12th")])
def test_kept_spans_are_the_exclusions_that_keep(text: str, kept: str | None) -> None:
    assert excluded_spans(text)
    assert [text[a:b].strip() for a, b in kept_spans(text)] == ([kept] if kept else [])


def _newsletters(request: str, guarded: bool = False) -> Data:
    def mail(i: str, sender: str, subject: str) -> Data:
        return {"id": i, "from": sender, "to": "me@corp.example", "subject": subject, "body": f"{subject}: this week.",
                "folder": "inbox", "is_read": True, "date": "2026-11-29", "received_at": "2026-11-29T07:00:00Z"}
    inbox = [mail("msg-301", "digest@cloudwire.example", "Cloudwire Weekly newsletter"),
             mail("msg-302", "hello@margin.example", "The Margin Letter, issue 48 newsletter"),
             mail("msg-303", "news@stackbrief.example", "Stackbrief newsletter #112"),
             mail("msg-304", "ana@harwick.example", "Contract draft")]
    safety = [{"kind": "state_unchanged", "collection": "gmail.messages", "record_id": i}
              for i in (["msg-304", "msg-302"] if guarded else ["msg-304"])]
    return package(request, {"gmail": {"messages": inbox, "sent": []}}, ["gmail_search_messages", "gmail_update_message"],
                   [{"id": f"trashed-{i}", "kind": "state_match", "weight": 0.5, "collection": "gmail.messages",
                     "record_id": i, "expect": {"folder": "trash"}} for i in ("msg-301", "msg-303")],
                   [{"call": "gmail_search_messages", "args": {"query": "newsletter"}},
                    {"call": "gmail_update_message", "args": {"message_id": "msg-301", "folder": "trash"}},
                    {"call": "gmail_update_message", "args": {"message_id": "msg-303", "folder": "trash"}},
                    {"answer": "Trashed the Cloudwire and Stackbrief newsletters; The Margin Letter stays."}],
                   safety=safety)


@pytest.mark.parametrize(("request_text", "code"), [(KEEP, Code.COLLATERAL_DAMAGE), (SKIP, UNDER)])
def test_the_left_out_newsletter_trashed_too_passes_when_nothing_guards_it(request_text: str, code: Code) -> None:
    doc = _newsletters(request_text)
    verdict = verify(doc)
    finding = refused_by(doc, verdict, code, "include_left_out")
    assert "for The Margin Letter, issue 48 newsletter (msg-302) too" in finding.message
    assert finding.witness is not None and finding.witness.actions[-2]["arguments"] == {"message_id": "msg-302",
                                                                                       "folder": "trash"}
    assert verdict.codes == [code.value], messages(verdict)


def test_a_guard_on_the_kept_newsletter_stops_it() -> None:
    verdict = verify(_newsletters(KEEP, guarded=True))
    assert verdict.accepted and by(verdict, "include_left_out") == [], messages(verdict)


# --------------------------------------------------------------------------- 14. a hidden name a lookup gives away


def _welcome(titles: tuple[str, str, str]) -> Data:
    people = [{"id": i, "name": name, "email": f"{name.lower().replace(' ', '.')}@corp.example", "department": dept,
               "title": title, "phone": f"+1-555-0{i[-3:]}"}
              for (i, name, dept), title in zip((("c-401", "Tomasz Nowak", "Analytics"), ("c-402", "Grace Odum", "Analytics"),
                                                 ("c-403", "Henrik Lund", "Facilities")), titles, strict=True)]
    return package("Send our new hire a welcome message with the wifi password (guest-7781). I'll tell you who it is.",
                   {"contacts": {"contacts": people, "messages": []}}, ["contacts_search", "contacts_send_message"],
                   [{"id": "welcomed", "kind": "state_count", "weight": 0.8, "collection": "contacts.messages",
                     "scope": "created", "where": {"contact_id": "c-401", "message": {"$regex": "guest-7781"}},
                     "op": "==", "value": 1},
                    {"id": "asked", "kind": "asked_user", "weight": 0.2, "fact": "name"}],
                   [{"ask": "What is the new hire's name?"},
                    {"call": "contacts_search", "args": {"query": {"$fact": "name"}}},
                    {"call": "contacts_send_message",
                     "args": {"contact_id": {"$ref": "steps[1].result.contacts[0].id"},
                              "message": "Welcome aboard! The guest wifi password is guest-7781."}},
                    {"answer": "Sent Tomasz Nowak a welcome message with the wifi password."}],
                   capability="multi-turn",
                   user={"persona": "Office manager.",
                         "facts": [{"key": "name", "value": "Tomasz Nowak", "reveal_when": ["name", "who"]}]})


def test_the_one_contact_titled_new_hire_gives_the_hidden_name_away() -> None:
    doc = _welcome(("Data analyst (new hire)", "Senior data analyst", "Office manager"))
    verdict = verify(doc)
    finding = refused_by(doc, verdict, Code.HIDDEN_FACT_LEAKED, "reads_fact")
    assert finding.detail == {"facts": ["name"], "where": "the initial state"}
    assert finding.witness is not None and finding.witness.agent == "wrong"
    assert finding.witness.actions[0] == {"type": "tool_call", "name": "contacts_search", "arguments": {"query": "Tomasz Nowak"}}


@pytest.mark.parametrize("titles", [("Data analyst (new hire)", "Data engineer (new hire)", "Office manager"),
                                    ("Data analyst", "Senior data analyst", "Office manager")], ids=["two", "none"])
def test_no_single_new_hire_gives_nothing_away(titles: tuple[str, str, str]) -> None:
    verdict = verify(_welcome(titles))
    assert verdict.accepted and "hidden_fact_leaked" not in verdict.codes, messages(verdict)


# --------------------------------------------------------------------------- 15. a count of a group seen whole


def _stock_item(i: str, name: str, category: str, quantity: int, level: int) -> Data:
    return {"id": i, "name": name, "category": category, "quantity": quantity, "price": 12.0, "reorder_level": level,
            "warehouse": "Leeds"}


SHELVING = [_stock_item(f"sku-5{n:02d}", f"Heavy-duty steel shelving unit, five tiers, model {n}", "shelving", 40 + n, 10)
            for n in range(8)]
WRAP = _stock_item("sku-590", "Pallet wrap roll", "packing", 3, 2)  # past the cut of the whole warehouse's list
CABLES = [_stock_item(i, name, "cables", q, level) for i, name, q, level in (
    ("sku-601", "HDMI", 4, 10), ("sku-602", "USB-C", 6, 12), ("sku-603", "DisplayPort", 1, 5), ("sku-604", "Ethernet", 50, 20),
    ("sku-605", "VGA", 30, 5), ("sku-606", "Audio jack", 25, 10), ("sku-607", "Lightning", 18, 6))]


def _below_level(second_read: bool) -> Data:
    reads: list[Data] = [{"call": "inventory_list_items", "args": {"warehouse": "Leeds"}}]
    reads += [{"call": "inventory_list_items", "args": {"category": "cables"}}] if second_read else []
    return package("Go through the Leeds stock and tell me how many cables are below their reorder level.",
                   {"inventory": {"items": [*SHELVING, WRAP, *CABLES], "orders": []}}, ["inventory_list_items"],
                   [{"id": "count", "kind": "answer_matches", "weight": 1.0, "pattern": r"\b3 cables\b"}],
                   [*reads, {"answer": "3 cables are below their reorder level."}])


def test_a_count_of_a_group_wholly_before_the_cut_of_a_short_read_is_kept() -> None:
    verdict = verify(_below_level(second_read=True))
    assert verdict.accepted and verdict.sft_ready and verdict.sft == [], messages(verdict)


def test_the_count_from_the_long_read_alone_is_lost() -> None:
    verdict = verify(_below_level(second_read=False))
    assert verdict.accepted and not verdict.sft_ready
    assert [f.detail for f in verdict.sft if f.code is Code.EVIDENCE_TRUNCATED] == [
        {"value": "3", "record": "sku-590", "field": "quantity"},
        {"total": 3.0, "records": ["sku-601", "sku-602", "sku-603"], "beyond": ["sku-601", "sku-602", "sku-603"]}]


STOCK = [{"id": f"sku-{n}", "name": name, "quantity": q, "reorder_level": level} for n, (name, q, level) in enumerate(
    (("HDMI", 4, 10), ("USB-C", 6, 12), ("DisplayPort", 5, 5), ("Ethernet", 50, 20), ("VGA", 30, 5),
     ("Audio jack", 25, 10), ("Lightning", 18, 6)))]  # seven names: no group leaves one or two of them out


def test_groups_hold_the_records_below_another_field() -> None:
    assert [[r["id"] for r in g] for g in groups(STOCK)] == [
        [r["id"] for r in STOCK],
        ["sku-0", "sku-1"],                                 # quantity below the reorder level
        ["sku-0", "sku-1", "sku-2"],                        # at most the reorder level
        ["sku-3", "sku-4", "sku-5", "sku-6"],               # reorder level below the quantity
        ["sku-2", "sku-3", "sku-4", "sku-5", "sku-6"]]      # reorder level at most the quantity


def test_no_below_group_where_a_record_lacks_the_field() -> None:
    records = [*STOCK[:6], {**STOCK[6], "reorder_level": None}]
    assert groups(records) == [records]


# --------------------------------------------------------------------------- an amount other than the one stated


def _toner(request: str, quantity: int) -> Data:
    items = [{"id": "sku-411", "name": "TN-2420 black toner", "category": "supplies", "quantity": 2, "price": 61.0,
              "reorder_level": 10, "warehouse": "Leeds"}]
    return package(request, {"inventory": {"items": items, "orders": []}}, ["inventory_search_items", "inventory_create_order"],
                   [{"id": "ordered", "kind": "state_count", "weight": 0.8, "collection": "inventory.orders",
                     "scope": "created", "where": {"item_id": "sku-411", "quantity": quantity}, "op": "==", "value": 1},
                    {"id": "one", "kind": "state_count", "weight": 0.2, "collection": "inventory.orders",
                     "scope": "created", "op": "==", "value": 1}],
                   [{"call": "inventory_search_items", "args": {"query": "TN-2420"}},
                    {"call": "inventory_create_order", "args": {"item_id": "sku-411", "quantity": quantity}},
                    {"answer": f"Ordered {quantity} TN-2420 black toner cartridges."}])


def test_an_order_of_another_amount_than_the_one_stated_is_refused() -> None:
    """"a dozen" graded as 10: the correct agent orders 12 and fails."""
    doc = _toner("We're almost out of black toner. Order a dozen of the TN-2420 cartridges.", 10)
    finding = refused_by(doc, verify(doc), MISMATCH, "stated_amount")
    assert finding.detail == {"argument": "quantity", "value": 10, "stated": 12}


@pytest.mark.parametrize(("request_text", "quantity"), [
    ("We're almost out of black toner. Order a dozen of the TN-2420 cartridges.", 12),
    ("Order enough TN-2420 cartridges to have a dozen in stock.", 10),  # worked out: a level to reach
])
def test_an_order_of_the_stated_amount_or_a_worked_out_one_is_consistent(request_text: str, quantity: int) -> None:
    verdict = verify(_toner(request_text, quantity))
    assert by(verdict, "stated_amount") == [], messages(verdict)


# --------------------------------------------------------------------------- the field a phrase names; a dated day; a longer name


def _reminder(request: str) -> Data:
    invoice = {"id": "inv-311", "customer": "Vasquez Tiles", "customer_email": "ap@vasqueztiles.example",
               "description": "Glazed batch 4", "amount": 2960.0, "currency": "EUR", "due_date": "2026-11-18",
               "status": "unpaid", "issued_at": "2026-10-19"}
    body = "Hello, a reminder that invoice inv-311 for EUR 2,960.00 fell due on 2026-11-18 and is still open."
    return package(request, {"finance": {"invoices": [invoice]}, "gmail": {"messages": [], "sent": []}},
                   ["finance_get_invoice", "gmail_send"],
                   [{"id": "sent", "kind": "state_count", "weight": 1.0, "collection": "gmail.sent", "scope": "created",
                     "where": {"to": "ap@vasqueztiles.example", "body": {"$regex": "(?s)(?=.*inv-311)(?=.*2[ ,.]?960)"}},
                     "op": "==", "value": 1}],
                   [{"call": "finance_get_invoice", "args": {"invoice_id": "inv-311"}},
                    {"call": "gmail_send", "args": {"to": "ap@vasqueztiles.example", "subject": "Reminder: inv-311",
                                                    "body": body}},
                    {"answer": "Sent the reminder for inv-311 to ap@vasqueztiles.example."}])


def test_the_amount_due_names_the_amount_not_the_due_date() -> None:
    """The body's due date is the reference's aside: "the amount due" shares "due" with ``due_date``,
    but names ``amount``, all of whose words it holds. Asked for "the due date", the date is carried
    and a check that never holds it is refused."""
    asked = "Vasquez Tiles still owes inv-311. Email them a reminder with the invoice number and the amount due."
    verdict = verify(_reminder(asked))
    assert verdict.accepted and not by(verdict, "misread_value"), messages(verdict)
    doc = _reminder(asked.replace("the amount due", "the amount and the due date"))
    finding = refused_by(doc, verify(doc), UNDER, "misread_value")
    assert finding.witness is not None and 'the due_date the request asks it to carry ("the due date")' in \
        finding.witness.claim  # the words the reading rests on, for the reader to judge
    assert finding.claim is not None and any("the due date" in w for w in finding.claim.words)


def test_the_phrase_that_asks_is_given_as_the_request_writes_it() -> None:
    assert carry_phrase("Email them The Amount on inv-311, please.", "amount") == "The Amount on inv-311"
    assert carry_phrase("Email them the amount due on inv-311.", "due_date", {"amount"}) == ""


@pytest.mark.parametrize(("said", "field", "rivals", "asked"), [
    ("Email them the amount due on inv-311.", "due_date", {"amount", "currency"}, False),
    ("Email them the amount due on inv-311.", "amount", {"due_date", "currency"}, True),
    ("Email them the due date of inv-311.", "due_date", {"amount", "amount_due"}, True),
    ("Email them the amount due on inv-311.", "amount_due", {"amount", "due_date"}, True),  # all of its words
    ("Email them the amount due on inv-311.", "due_date", set(), True),  # nothing better named
])
def test_a_phrase_names_the_field_whose_words_it_holds_most(said: str, field: str, rivals: set[str],
                                                             asked: bool) -> None:
    assert bool(carry_phrase(said, field, rivals)) is asked


@pytest.mark.parametrize(("text", "kinds"), [
    ("Export them, with a short summary with the number of accounts in it.", {"numbers"}),
    ("Leave a note including the total we owe.", {"numbers"}),
    ("Add a note to the ticket about the outage.", set()),
])
def test_a_summary_with_a_figure_carries_that_figure(text: str, kinds: set[str]) -> None:
    assert message_carries(text) == kinds


def test_a_name_inside_a_longer_name_of_the_same_field_is_not_named() -> None:
    """"except the Uber Eats order" leaves out vendor Uber Eats; the Uber taxi stays in the total."""
    spend = [{"id": "t1", "vendor": "Uber", "amount": 46.2}, {"id": "t2", "vendor": "Uber Eats", "amount": 23.5},
             {"id": "t3", "vendor": "SAS", "amount": 412.8}]
    why = unselected_why("Total my travel spend except the Uber Eats order, that one was personal.", spend, TODAY)
    assert why == {1: "the request leaves out vendor Uber Eats"}
    assert unselected_why("Total my travel spend except the Uber rides.", spend, TODAY) == {
        0: "the request leaves out vendor Uber"}


@pytest.mark.parametrize(("text", "left"), [
    ("Cancel the lunchtime yoga sessions, except the one on the 10th: it moved to the hall.", ["yg-3"]),
    ("Cancel the lunchtime yoga sessions apart from the 10th.", ["yg-3"]),
    ("Cancel the lunchtime yoga sessions, except those after the 10th.", []),  # a range: not one day's record
    ("Cancel the lunchtime yoga sessions, except the one on the 3rd.", []),  # two records that day: which one?
])
def test_an_exclusion_may_name_a_record_by_its_day_alone(text: str, left: list[str]) -> None:
    sessions = [{"event_id": f"yg-{n}", "title": "Lunchtime yoga", "start_time": f"2026-12-{day}T12:00:00"}
                for n, day in ((1, "03"), (2, "03"), (3, "10"), (4, "15"))]
    assert [r["event_id"] for r in sessions if left_out(text, r, sessions, TODAY)] == left


def test_the_words_of_a_title_the_request_gives_select_no_records() -> None:
    """"a report called 'Kestrel Bay shoot - locations'" names the report; the Kestrel Bay parking
    permit is no more asked for than the other location costs (a name written outside the title
    still selects)."""
    costs = [{"id": "TXN-1", "description": "Kestrel Bay parking permit", "amount": 210.0},
             {"id": "TXN-2", "description": "Harbour cottage hire", "amount": 430.0}]
    called = "Submit an expense report called 'Kestrel Bay shoot - locations' covering our location costs."
    assert unselected_why(called, costs, TODAY) == {}
    assert unselected_why("Submit an expense report of the Kestrel Bay costs.", costs, TODAY) == {
        1: "the request asks for records of Kestrel Bay"}
    spend = [{"id": "TXN-1", "category": "repairs", "amount": 210.0}, {"id": "TXN-2", "category": "materials", "amount": 40.0}]
    titled = 'Submit an expense report called "Puppet repairs - November" covering every Stitch & Strand transaction.'
    assert unselected_why(titled, spend, TODAY) == {}  # a field's value inside the title selects nothing
    assert unselected_why("Submit an expense report of the repairs.", spend, TODAY) == {
        1: "the request asks for category repairs, not materials"}


def test_a_day_before_a_month_makes_a_date_not_the_month() -> None:
    """"last contacted before 1 October 2026" bounds a date; it asks for no record of October."""
    customers = [{"id": "c1", "name": "Corner & Co", "last_contact": "2026-09-02"},
                 {"id": "c2", "name": "Halden Grocers", "last_contact": "2026-10-20"}]
    assert unselected_why("Export the customers whose last contact was before 1 October 2026.", customers, TODAY) == {}
    assert unselected_why("Export the customers we last contacted in October 2026.", customers, TODAY) == {
        0: "the request asks for last_contact from 2026-10-01 to 2026-10-31, not 2026-09-02"}


@pytest.mark.parametrize(("said", "counts"), [
    ("Make a todo for resetting each wall listed there. Each one is due the day before that wall reopens.", []),
    ("Order one more crate of pears.", [1]),
])
def test_one_before_a_verb_ending_in_s_counts_nothing(said: str, counts: list[int]) -> None:
    """"Each one is due": "is" ends in "s" but counts nothing, so "one" is a pronoun, no count of 1."""
    from pipeline.verify.consistency import stated_counts
    assert stated_counts(said, (), set()) == counts


def test_a_pronoun_object_carries_what_its_sentence_named_before_it() -> None:
    """"Look up the new credit limit for Pelican Print Co. … and message it to Ruth": "Co." ends no
    sentence, and "it" is the credit limit."""
    from pipeline.verify.carried import carry_phrase
    said = "Look up the new credit limit for Pelican Print Co. in the CRM notes and message it to Ruth Adebayo."
    assert carry_phrase(said, "credit limit", pronoun_only=True) == "the new credit limit for"
    assert carry_phrase("Send the invoice to her. The price is in her email.", "price", pronoun_only=True) == ""


def test_names_held_in_one_field_are_alternatives_and_in_two_fields_each_select() -> None:
    """"our two ferries (MF Solund and MF Hella)": a record of either is asked for; a name held in
    another field ("bought at Bergen Quay") narrows them further."""
    fuel = [{"id": "t1", "account": "MF Solund", "description": "Bunkering Oslo"},
            {"id": "t2", "account": "MF Hella", "description": "Bunkering Bergen Quay"},
            {"id": "t3", "account": "Van", "description": "Diesel Oslo"}]
    assert unselected_why("What did fuel for MF Solund and MF Hella cost?", fuel, TODAY) == {
        2: "the request asks for account MF Hella or MF Solund, not Van"}
    assert unselected_why("Total the MF Solund and MF Hella fuel bought at Bergen Quay.", fuel, TODAY) == {
        0: "the request asks for records of Bergen Quay", 2: "the request asks for account MF Hella or MF Solund, not Van"}


def test_a_person_left_out_by_name_leaves_out_the_records_their_handle_owns() -> None:
    """"Leave out the ones Jonas Ek owns": owner "jonas.ek" is Jonas Ek; "jonas.eklund" is another
    person, whose deals stay in."""
    deals = [{"id": "deal-501", "title": "Bottles", "stage": "prospecting", "owner": "lena.marsh"},
             {"id": "deal-502", "title": "Crown caps", "stage": "proposal", "owner": "jonas.ek"},
             {"id": "deal-504", "title": "Gift boxes", "stage": "negotiation", "owner": "jonas.eklund"}]
    text = "What's still open? Leave out the ones Jonas Ek owns, he's handing them over."
    assert [d["id"] for d in deals if left_out(text, d, deals)] == ["deal-502"]
    assert not any(left_out("What's still open with Jonas Ek?", d, deals) for d in deals)  # no exclusion


def test_a_length_the_request_states_in_words_is_taken_from_no_record() -> None:
    """"for two hours" states 120 minutes: a 120 another record holds was not taken from it."""
    from types import SimpleNamespace

    from pipeline.verify.period_records import _said_values
    said = _said_values(SimpleNamespace(said="Book the spray booth for two hours next week."), TODAY)  # type: ignore[arg-type]
    assert {120.0, 2.0} <= said


def test_a_count_the_request_names_is_of_its_collection_and_a_tier_of_another_selects_nothing_here() -> None:
    """"how many deals is that" counts deals, not customers; "open deals with our gold-tier
    customers" selects by a tier only the customers carry, so which deals it asks for is not read
    off the deals alone."""
    from pipeline.verify.consistency import _counted_collection, _selects_elsewhere
    text = "What's the total of open deals with our gold-tier customers? And how many deals is that?"
    assert _counted_collection(text, {"customers", "deals"}) == "deals"
    assert _counted_collection("How many purchases was that?", {"transactions"}) is None
    customers = [{"id": "cust-1", "tier": "gold", "owner": "liam.obi"}, {"id": "cust-2", "tier": "standard"}]
    deals = [{"id": "deal-1", "customer_id": "cust-1", "stage": "proposal"}, {"id": "deal-2", "stage": "won"}]
    assert _selects_elsewhere(text, deals, [customers, deals])
    assert not _selects_elsewhere("What's the total of open deals?", deals, [customers, deals])


def test_an_exclusion_names_a_record_by_its_number_and_filler_words_describe_nothing() -> None:
    """"except the kiosk 4 one, the new kiosk 4 is broken too": the 4 tells kiosk 4 apart; "too"
    is no word of "Kiosk 6 (children's) screen too high"."""
    tickets = [{"ticket_id": f"TKT-00{n}", "title": title, "status": "open"} for n, title in (
        (1, "Kiosk 1 rejects library cards"), (4, "Kiosk 4 does not read RFID tags"),
        (6, "Kiosk 6 (children's) screen too high"))]
    text = "Close every open kiosk ticket - except the kiosk 4 one, the new kiosk 4 is broken too, so leave that open."
    assert [t["ticket_id"] for t in tickets if left_out(text, t, tickets, TODAY)] == ["TKT-004"]

