"""Per-record formulas a request states (pipeline/verify/formulas.py): factors bind to the field
that follows them, a level to reach is that level less what is held, and a request without such a
phrase has none."""

from __future__ import annotations

import pytest

from pipeline.verify.formulas import Formula, Term, formula_in

FIELDS = ["reorder_level", "quantity", "unit_price"]
ITEM = {"id": "sku-1", "reorder_level": 40, "quantity": 12, "unit_price": 3.5}


@pytest.mark.parametrize(("text", "phrase", "terms", "value"), [
    ("Order twice the reorder level minus what we have on hand for each item below reorder.",
     "twice the reorder level minus what we have on hand",
     (Term(1.0, 2.0, "reorder_level"), Term(-1.0, 1.0, "quantity")), 68.0),
    ("For each low item, order three times the reorder level less the quantity.",
     "three times the reorder level less the quantity",
     (Term(1.0, 3.0, "reorder_level"), Term(-1.0, 1.0, "quantity")), 108.0),
    ("Order 2 times the reorder level minus what we have",
     "2 times the reorder level minus what we have",
     (Term(1.0, 2.0, "reorder_level"), Term(-1.0, 1.0, "quantity")), 68.0),
    ("Order up to double the reorder level.",           # a level to reach: less what is held
     "double the reorder level",
     (Term(1.0, 2.0, "reorder_level"), Term(-1.0, 1.0, "quantity")), 68.0),
    ("Order the amount that brings it to double its reorder level.",
     "double its reorder level",
     (Term(1.0, 2.0, "reorder_level"), Term(-1.0, 1.0, "quantity")), 68.0),
    ("Order the reorder level plus 10 minus what is in stock",
     "the reorder level plus 10 minus what is in stock",
     (Term(1.0, 1.0, "reorder_level"), Term(1.0, 1.0, None, 10.0), Term(-1.0, 1.0, "quantity")), 38.0),
    ("Order half the reorder level.", "half the reorder level", (Term(1.0, 0.5, "reorder_level"),), 20.0),
])
def test_formula_in(text: str, phrase: str, terms: tuple[Term, ...], value: float) -> None:
    formula = formula_in(text, FIELDS)
    assert formula == Formula(phrase, terms)
    assert formula.value(ITEM) == value


@pytest.mark.parametrize("text", ["Order 5 more chairs.", "Order the chairs for the Leeds office.",
                                  "Order the reorder level.",  # one field, no factor: no formula
                                  "Order twice."])
def test_no_formula(text: str) -> None:
    assert formula_in(text, FIELDS) is None


def test_a_formula_over_fields_the_record_does_not_have_is_none() -> None:
    assert formula_in("Order twice the reorder level minus what we have on hand.", ["unit_price"]) is None


def test_value_is_none_when_a_field_is_missing_or_not_a_number() -> None:
    formula = formula_in("Order twice the reorder level minus what we have on hand.", FIELDS)
    assert formula is not None
    assert formula.value({"reorder_level": 40}) is None
    assert formula.value({"reorder_level": 40, "quantity": "12"}) is None
    assert formula.value({"reorder_level": 40, "quantity": True}) is None
    assert formula.value({"reorder_level": 40, "quantity": 12.25}) == 67.75


def test_value_rounds_to_cents() -> None:
    formula = Formula("a third", (Term(1.0, 1 / 3, "quantity"),))
    assert formula.value({"quantity": 10}) == 3.33


def test_a_hyphenated_word_is_no_minus() -> None:
    formula = formula_in("Order twice the reorder level minus the on-hand quantity.", FIELDS)
    assert formula is not None and formula.value(ITEM) == 68.0
