"""Which records a request's words leave out or do not select (pipeline/verify/selection.py): a
record named in an exclusion by its name, first name, id, email or the organisation its address
is at; a rival's longer name at the same place names the rival; a named value of a field selects
its records, a negated one leaves them out, and values holding a digit say nothing."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

import pytest

from pipeline.core.package import load_package
from pipeline.verify.selection import excluded_records, left_out, negated_spans, unselected

MAYA = {"id": "c-101", "name": "Maya Patel", "email": "maya.patel@corp.example", "department": "Design"}
HADDAD = {"id": "c-102", "name": "Omar Haddad", "email": "omar.haddad@corp.example", "department": "Finance"}
REYES = {"id": "c-103", "name": "Omar Reyes", "email": "omar.reyes@corp.example", "department": "Sales"}
ROSA = {"id": "c-104", "name": "Rosa Delgado", "email": "rosa@corp.example", "department": "Facilities"}
PEOPLE = [MAYA, HADDAD, REYES, ROSA]
TODAY = date(2026, 12, 1)


def ids(records: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in records]


@pytest.mark.parametrize(("text", "with_rivals", "alone"), [
    ("Message everyone except Omar Reyes.", ["c-103"], ["c-102", "c-103"]),  # "Omar" alone is both Omars' first name
    ("Message everyone except Omar.", ["c-102", "c-103"], ["c-102", "c-103"]),
    ("Message everyone except Rosa.", ["c-104"], ["c-104"]),                   # a first name
    ("Message everyone except Maya Patel.", ["c-101"], ["c-101"]),
    ("Message everyone except c-101.", ["c-101"], ["c-101"]),                  # an id
    ("Message everyone, skip maya.patel@corp.example", ["c-101"], ["c-101"]),  # an email
    ("Message everyone except Omar Reyes, and tell Omar Haddad.", ["c-103"], []),  # named outside the exclusion too
    ("Message Rosa and everyone else.", [], []),                               # no exclusion
])
def test_left_out(text: str, with_rivals: list[str], alone: list[str]) -> None:
    assert [p["id"] for p in PEOPLE if left_out(text, p, PEOPLE)] == with_rivals
    assert [p["id"] for p in PEOPLE if left_out(text, p)] == alone


def test_left_out_by_the_organisation_an_address_is_at() -> None:
    tickets = [{"id": "tkt-1", "subject": "Login fails", "requester": "it-desk@brightline-logistics.example"},
               {"id": "tkt-2", "subject": "Printer jam", "requester": "ops@fernwood.example"},
               {"id": "tkt-3", "subject": "VPN drops", "requester": "ana@fernwood.example"}]
    text = "Close the resolved tickets apart from the Brightline one."
    assert [t["id"] for t in tickets if left_out(text, t, tickets)] == ["tkt-1"]


def test_excluded_records_of_a_package(example_doc: Callable[[str], dict[str, Any]]) -> None:
    doc = example_doc("contacts-send-message")
    doc["request"]["text"] = "Send everyone except Omar Reyes a message saying the Q3 budget review moved to Friday."
    assert excluded_records(load_package(doc)) == [(("contacts", "contacts"), REYES | {"title": "Account Executive",
                                                                                       "phone": "+1-555-0103"})]
    doc["request"]["text"] = "Send Omar Haddad a message saying the Q3 budget review moved to Friday."
    assert excluded_records(load_package(doc)) == []


INVOICES = [{"id": "inv-1", "customer": "Harwick", "status": "unpaid", "amount": 100},
            {"id": "inv-2", "customer": "Harwick", "status": "void", "amount": 50},
            {"id": "inv-3", "customer": "Harwick", "status": "unpaid", "amount": 70},
            {"id": "inv-4", "customer": "Harwick", "status": "paid", "amount": 20}]


@pytest.mark.parametrize(("text", "left", "why"), [
    ("What is Harwick's unpaid total?", ["inv-2", "inv-4"],
     "the request asks for status unpaid, not void; the request asks for status unpaid, not paid"),
    ("Total the Harwick invoices that are not void.", ["inv-2"], "the request leaves out status void"),
    ("Total Harwick invoices except inv-2.", ["inv-2"], "the request leaves out inv-2"),
    ("Total all Harwick invoices.", [], ""),
    ("Total the unpaid and paid ones.", ["inv-2"], "the request asks for status paid or unpaid, not void"),
])
def test_unselected_invoices(text: str, left: list[str], why: str) -> None:
    found, reason = unselected(text, INVOICES, TODAY)
    assert (ids(found), reason) == (left, why)


def test_a_value_named_only_in_a_negation_leaves_its_records_out() -> None:
    deals = [{"id": "deal-1", "stage": "won"}, {"id": "deal-2", "stage": "lost"},
             {"id": "deal-3", "stage": "proposal"}, {"id": "deal-4", "stage": "negotiation"}]
    found, why = unselected("Average the deals that haven't been won or lost.", deals, TODAY)
    assert ids(found) == ["deal-1", "deal-2"]
    assert why == "the request leaves out stage won; the request leaves out stage lost"


def test_values_holding_a_digit_neither_select_nor_leave_out() -> None:
    events = [{"id": "e-1", "due": "2026-12-01", "plan": "Q3 plan"}, {"id": "e-2", "due": "2026-12-02", "plan": "Q4 plan"}]
    assert unselected("Anything due 2026-12-01 for the Q3 plan?", events, TODAY) == ([], "")
    regions = [{"id": "e-1", "due": "2026-12-01", "region": "North"}, {"id": "e-2", "due": "2026-12-02", "region": "South"}]
    found, why = unselected("Anything due 2026-12-01 in North?", regions, TODAY)
    assert (ids(found), why) == (["e-2"], "the request asks for region North, not South")


def test_a_value_inside_a_longer_word_is_not_named() -> None:
    """"paid" is not named by "unpaid"."""
    found, _ = unselected("Total the unpaid ones.", [INVOICES[0], INVOICES[3]], TODAY)
    assert ids(found) == ["inv-4"]


def test_negated_spans_hold_exclusions_and_negations() -> None:
    text = "Close them except Brightline. We never close the pinned ones."
    assert [text[a:b] for a, b in negated_spans(text)] == [" Brightline", " close the pinned ones"]


def test_a_name_in_what_is_taken_off_a_total_selects_nothing() -> None:
    """"Net of the refund Hotel Miradouro gave us": the refund is taken off; every October trip
    counts. "Spent at Hotel Miradouro" selects its records."""
    trips = [{"id": "t1", "merchant": "Hotel Miradouro", "amount": 412.0},
             {"id": "t2", "merchant": "Rail Europa", "amount": 96.0},
             {"id": "t3", "merchant": "Hotel Miradouro", "amount": -142.0}]
    for text in ("What did travel cost us in October, net of the refund Hotel Miradouro gave us?",
                 "Travel in October, less the credit Hotel Miradouro issued.",
                 "Total travel minus what Hotel Miradouro refunded."):
        assert unselected(text, trips, TODAY) == ([], ""), text
    found, why = unselected("What did we spend at Hotel Miradouro, net of the refund?", trips, TODAY)
    assert [r["id"] for r in found] == ["t2"] and "Hotel Miradouro" in why
    found, _ = unselected("Orders of less than 5 units from Hotel Miradouro.", trips, TODAY)
    assert [r["id"] for r in found] == ["t2"]


_RIDES = [{"id": f"t-{n}", "vendor": vendor, "amount": amount}
          for n, vendor, amount in ((1, "City Taxi", 23.4), (2, "Bolt", 18.75), (3, "Uber", 12.9), (4, "LNER", 64.0))]


@pytest.mark.parametrize("text", ["what did we spend on taxis and ride-hailing (uber, bolt etc) in november?",
                                  "rides such as Uber or Bolt, and taxis: the total please"])
def test_values_named_as_examples_select_nothing_by_themselves(text: str) -> None:
    assert "t-1" not in ids(unselected(text, _RIDES, TODAY)[0])


def test_values_named_plainly_still_select_their_records() -> None:
    assert ids(unselected("what did we spend on Uber and Bolt in november?", _RIDES, TODAY)[0]) == ["t-1", "t-4"]
