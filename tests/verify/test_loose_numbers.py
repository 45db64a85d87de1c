"""A number the rules reach only by loose arithmetic (``Evidence.plainly_known``): a mean of records
no words ask for, two numbers no one connects. Its ``ungrounded_value`` finding is a question the
rules leave open (``Claim.rules_unsure``): a review note offline, a refusal when a reader agrees."""

from __future__ import annotations

import copy
import json
from datetime import date
from typing import Any

import pytest

from pipeline.core.codes import Code
from pipeline.verify.evidence import LOOSE, Evidence
from pipeline.verify.readers import ScriptedReader
from pipeline.verify.verifier import verify_package
from tests.support.corpus import CORPUS_DIR
from tests.verify.builders import Data, package

TODAY = date(2026, 12, 1)


def _read(records: list[dict[str, Any]], said: str = "") -> Evidence:
    evidence = Evidence(said=said, today=TODAY)
    evidence.read_value({"items": records}, TODAY)
    return evidence


def test_a_mean_of_the_records_read_is_known_but_not_plainly() -> None:
    evidence = _read([{"name": "A", "quantity": 6}, {"name": "B", "quantity": 22}, {"name": "C", "quantity": 80}])
    assert evidence.has_number(36)  # the mean quantity: has_number stays generous
    assert not evidence.plainly_known(36, set())


@pytest.mark.parametrize("said", ["order the average stock level", "the typical batch, same as the mean"])
def test_a_mean_the_words_ask_for_is_plainly_known(said: str) -> None:
    evidence = _read([{"name": "A", "quantity": 6}, {"name": "B", "quantity": 22}, {"name": "C", "quantity": 80}], said)
    assert evidence.plainly_known(36, set())


def test_a_mean_a_record_also_holds_is_plainly_known() -> None:
    evidence = _read([{"name": "A", "quantity": 6}, {"name": "B", "quantity": 36}, {"name": "C", "quantity": 66}])
    assert evidence.plainly_known(36, set())  # record B holds it


def test_within_one_record_a_field_times_itself_is_loose_and_a_stated_formula_is_not() -> None:
    evidence = _read([{"name": "kettle", "quantity": 6, "reorder_level": 15, "price": 39.0}])
    assert evidence.has_number(36) and not evidence.plainly_known(36, set())  # 6 × 6
    assert evidence.plainly_known(24, set())   # twice the reorder level less the stock
    assert evidence.plainly_known(9, set())    # the units short of the level
    assert evidence.plainly_known(21, set())   # stock plus level
    assert evidence.plainly_known(234, set())  # quantity × price: the stock's worth


def test_a_sum_with_a_stated_number_is_plain_and_one_of_two_unstated_numbers_is_loose() -> None:
    evidence = _read([{"name": "kettle", "quantity": 12}, {"name": "filter", "quantity": 7}])
    assert evidence.has_number(17) and evidence.has_number(5)
    assert evidence.plainly_known(17, {5.0})   # "5 more than the 12 on hand"
    assert not evidence.plainly_known(5, set())  # 12 − 7: two stocks no one connects


_ITEMS = [
    {"id": "sku-041", "name": "Vega kettle 1L", "category": "coffee gear", "quantity": 6, "reorder_level": 14,
     "price": 39.0, "warehouse": "north"},
    {"id": "sku-042", "name": "Vega kettle 0.6L", "category": "coffee gear", "quantity": 22, "reorder_level": 10,
     "price": 32.0, "warehouse": "north"},
    {"id": "sku-043", "name": "Paper filters", "category": "coffee gear", "quantity": 80, "reorder_level": 40,
     "price": 4.5, "warehouse": "north"},
]


def _restock(request: str, quantity: int) -> Data:
    """An order for the 1L kettle whose quantity the checks pin (the coffee gear's mean stock is 36)."""
    order = {"item_id": "sku-041", "quantity": quantity, "supplier": "Brewline"}
    return package(request, {"inventory": {"items": copy.deepcopy(_ITEMS), "orders": []}},
                   ["inventory_list_items", "inventory_create_order"],
                   [{"id": "ordered", "kind": "state_count", "weight": 0.7, "collection": "inventory.orders",
                     "scope": "created", "op": "==", "value": 1, "where": order},
                    {"id": "one", "kind": "state_count", "weight": 0.3, "collection": "inventory.orders",
                     "scope": "created", "op": "==", "value": 1}],
                   [{"call": "inventory_list_items", "args": {"category": "coffee gear"}},
                    {"call": "inventory_create_order", "args": order},
                    {"answer": f"Ordered {quantity} of the 1L Vega kettle from Brewline."}])


_UNSTATED = "We're nearly out of the 1L Vega kettles again, put in the usual batch with Brewline."


def _loose(findings: list[Any]) -> list[Any]:
    return [f for f in findings if f.code is Code.UNGROUNDED_VALUE and f.detail.get("kind") == LOOSE]


def test_a_batch_size_only_a_mean_gives_is_a_review_note_the_rules_leave_open() -> None:
    verdict = verify_package(_restock(_UNSTATED, 36))
    assert verdict.accepted
    [note] = _loose(verdict.review)
    assert note.claim is not None and note.claim.rules_unsure and "36" in note.claim.rules_unsure
    assert note.reading is not None and (note.reading.reader, note.reading.answer) == ("rules", "unsure")
    assert note.witness is not None and note.witness.holds and note.witness.agent == "correct"


def test_a_reader_that_agrees_refuses_it_and_one_that_disagrees_keeps_it_a_note() -> None:
    agreeing = ScriptedReader(default="agrees", name="model:test")
    refused = verify_package(_restock(_UNSTATED, 36), reader=agreeing)
    assert not refused.accepted and [f.code for f in _loose(refused.findings)] == [Code.UNGROUNDED_VALUE]
    assert [c.rules_unsure != "" for c in agreeing.asked] == [True]
    kept = verify_package(_restock(_UNSTATED, 36), reader=ScriptedReader(default="disagrees", name="model:test"))
    assert kept.accepted and len(_loose(kept.review)) == 1


@pytest.mark.parametrize(("request_text", "quantity"), [
    ("Kettles (1L Vega) are low: order the average stock level of our coffee gear from Brewline.", 36),
    ("The 1L Vega kettle is low, order from Brewline enough to bring it to twice its reorder level.", 22),
    ("Top the 1L Vega kettle up to its reorder level with an order from Brewline.", 8),
])
def test_a_number_the_words_work_out_raises_no_loose_finding(request_text: str, quantity: int) -> None:
    verdict = verify_package(_restock(request_text, quantity))
    assert _loose([*verdict.findings, *verdict.review]) == [], [f.message for f in verdict.review]


# --------------------------------------------------------------------------- arithmetic the words or the write ask for
@pytest.mark.parametrize("said", ["add the quantities in their email to what we have on hand",
                                  "the stock minus what was returned", "take the 7 off"])
def test_words_that_ask_to_add_or_take_away_make_two_numbers_read_plain(said: str) -> None:
    def read(words: str) -> Evidence:  # the stock on hand, then a delivery's quantity: two reads
        evidence = _read([{"name": "kettle", "quantity": 12}], words)
        evidence.read_value({"delivered": [{"line": "DN-88 line 1", "units": 7}]}, TODAY)
        return evidence

    assert read(said).plainly_known(19, set()) and read(said).plainly_known(5, set())
    unasked = read("book the delivery")
    assert unasked.has_number(19) and not unasked.plainly_known(19, set())


def _delivery(request: str, received: int) -> Data:
    """A delivery email of ``received`` Vega kettles booked into stock (6 on hand) by the reference."""
    mail = {"id": "msg-001", "from": "dispatch@brewline.example", "to": "me@ours.example", "subject": "Delivery DN-88",
            "body": f"Delivered today: {received} x Vega kettle 1L (sku-041), 9 x paper filters on back order.",
            "folder": "inbox", "is_read": False, "date": "2026-12-01"}
    state = {"inventory": {"items": copy.deepcopy(_ITEMS), "orders": []}, "gmail": {"messages": [mail]}}
    total = 6 + received
    return package(request, state, ["gmail_get_message", "inventory_get_item", "inventory_update_item"],
                   [{"id": "stock", "kind": "state_match", "weight": 0.8, "collection": "inventory.items",
                     "record_id": "sku-041", "expect": {"quantity": total}},
                    {"id": "others", "kind": "state_unchanged", "weight": 0.2, "collection": "inventory.items",
                     "where": {"id": {"$in": ["sku-042", "sku-043"]}}}],
                   [{"call": "gmail_get_message", "args": {"message_id": "msg-001"}},
                    {"call": "inventory_get_item", "args": {"item_id": "sku-041"}},
                    {"call": "inventory_update_item", "args": {"item_id": "sku-041", "quantity": total}},
                    {"answer": f"Booked the {received} kettles in: {total} on hand now."}])


def test_a_stock_moved_by_a_quantity_read_in_an_email_is_not_a_loose_number() -> None:
    verdict = verify_package(_delivery("The Brewline delivery arrived (DN-88): update the stock levels from "
                                       "their email.", 12))
    assert verdict.accepted and not _loose([*verdict.findings, *verdict.review])


def test_a_stock_set_to_a_sum_of_two_unrelated_numbers_stays_loose() -> None:
    doc = _delivery("The Brewline delivery arrived (DN-88): update the stock levels from their email.", 12)
    doc["reference"][2]["args"]["quantity"] = 21  # 12 delivered + 9 on back order: not the stock on hand moved
    doc["checks"][0]["expect"]["quantity"] = 21
    assert [f.detail["value"] for f in _loose(verify_package(doc).review)] == [21]


def test_a_mean_that_a_text_read_also_states_is_plainly_known() -> None:
    evidence = _read([{"name": "A", "quantity": 6}, {"name": "B", "quantity": 10}])  # the mean is 8
    assert evidence.has_number(8) and not evidence.plainly_known(8, set())
    evidence.read_text("Delivered today: 60 x Network switch 8-port.", TODAY)
    assert evidence.plainly_known(8, set())


# --------------------------------------------------------------------------- a value a pattern grades inside a text


def _voucher_draft(request_text: str) -> Data:
    """The brake-bleed apology of ``tests/corpus/truth-10``, whose checks want "20%" in the draft's
    body, with ``request_text`` as its request."""
    case = json.loads((CORPUS_DIR / "truth-10" / "brake-bleed-discount-stated-nowhere.defective.json").read_text())
    doc: Data = copy.deepcopy(case["package"])
    doc["request"]["text"] = request_text
    return doc


def _in_text(findings: list[Any]) -> list[Any]:
    return [f for f in findings if f.code is Code.UNGROUNDED_VALUE and f.detail.get("argument") == "body"]


_OFFER = "Lucia Ferreira is unhappy about how long her brake bleed took. Draft a reply saying sorry and offering her"


def test_an_amount_graded_in_a_text_that_nothing_states_is_refused() -> None:
    verdict = verify_package(_voucher_draft(f"{_OFFER} money off her next service."))
    [finding] = _in_text(verdict.findings)
    assert not verdict.accepted and finding.detail["value"] == 20.0 and "unsure" not in finding.detail
    assert finding.witness is not None and finding.witness.agent == "correct" and finding.witness.holds
    assert "21" in json.dumps(finding.witness.actions)  # the correct agent offers 21% instead


def test_an_amount_the_request_states_raises_nothing() -> None:
    verdict = verify_package(_voucher_draft(f"{_OFFER} 20% off her next service."))
    assert verdict.accepted and _in_text([*verdict.findings, *verdict.review]) == []


def test_where_the_request_states_other_numbers_the_rules_leave_it_to_a_reader() -> None:
    """"Her £60 bleed" states a number: some arithmetic the rules do not follow may give 20."""
    doc = _voucher_draft(f"{_OFFER} money off her next service - her £60 bleed took two weeks.")
    verdict = verify_package(doc)
    [note] = _in_text(verdict.review)
    assert verdict.accepted and note.claim is not None and "20" in note.claim.rules_unsure
    refused = verify_package(doc, reader=ScriptedReader(default="agrees", name="model:test"))
    assert not refused.accepted and len(_in_text(refused.findings)) == 1
