"""Per-record formulas a request states (pipeline/verify/formulas.py): factors bind to the field
that follows them, a level to reach is that level less what is held, and a request without such a
phrase has none."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from pipeline.verify.formulas import Formula, OffsetDate, Term, date_offsets, formula_in

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
    ("For every item below its reorder level, order enough that stock on hand ends up at the reorder level plus "
     "twenty.",  # the level to reach is inside the phrase "order" leads; a number in words
     "the reorder level plus twenty",
     (Term(1.0, 1.0, "reorder_level"), Term(1.0, 1.0, None, 20.0), Term(-1.0, 1.0, "quantity")), 48.0),
    ("Set their reorder level to however many we have on the shelf right now plus six.",  # the value follows "to"
     "however many we have on the shelf right now plus six",
     (Term(1.0, 1.0, "quantity"), Term(1.0, 1.0, None, 6.0)), 18.0),
    ("Order more of the tapers from Hivewell: the quantity should be twice the reorder level minus what we have on "
     "hand.",  # the formula follows "should be"
     "twice the reorder level minus what we have on hand",
     (Term(1.0, 2.0, "reorder_level"), Term(-1.0, 1.0, "quantity")), 68.0),
    ("Order borosilicate rod (8 mm) from Lumen Glass: twice its reorder level minus what's on hand.",  # after a colon
     "twice its reorder level minus what's on hand",
     (Term(1.0, 2.0, "reorder_level"), Term(-1.0, 1.0, "quantity")), 68.0),
    ("Order brass rowlocks — three times the reorder level minus what's on hand — from Trevose.",  # between dashes
     "three times the reorder level minus what's on hand",
     (Term(1.0, 3.0, "reorder_level"), Term(-1.0, 1.0, "quantity")), 108.0),
    ("Order the gravel tube sets; the quantity is twice the reorder level minus what's on the shelf right now.",
     "twice the reorder level minus what's on the shelf right now",
     (Term(1.0, 2.0, "reorder_level"), Term(-1.0, 1.0, "quantity")), 68.0),
    ("Top up the packets: order three times the reorder level minus what's on hand.",  # the colon leads no factor
     "three times the reorder level minus what's on hand",
     (Term(1.0, 3.0, "reorder_level"), Term(-1.0, 1.0, "quantity")), 108.0),
    ("Place an order from Potterycrafts big enough that we end up with twice the reorder level on the shelf once it "
     "arrives.",  # a level to reach after "with", held "on the shelf": less what is held
     "twice the reorder level",
     (Term(1.0, 2.0, "reorder_level"), Term(-1.0, 1.0, "quantity")), 68.0),
    ("Order gut A strings from their usual supplier: twice the reorder level, minus what's on the shelf.",
     "twice the reorder level minus what's on the shelf",  # a comma before the next term
     (Term(1.0, 2.0, "reorder_level"), Term(-1.0, 1.0, "quantity")), 68.0),
])
def test_formula_in(text: str, phrase: str, terms: tuple[Term, ...], value: float) -> None:
    formula = formula_in(text, FIELDS)
    assert formula == Formula(phrase, terms)
    assert formula.value(ITEM) == value


@pytest.mark.parametrize(("text", "phrase", "value"), [
    ("For each item below its reorder level, order enough to bring it up to double that level.",
     "double that level", 68.0),
    ("Anything under the reorder level: top it up to three times that.", "three times that", 108.0),
    ("Check the reorder level of each item and restock it to twice this level.", "twice this level", 68.0),
])
def test_a_phrase_that_points_back_names_the_field_named_before_it(text: str, phrase: str, value: float) -> None:
    """"that level", "that", "this level" name the field the request named last before them."""
    formula = formula_in(text, FIELDS)
    assert formula is not None and formula.text == phrase
    assert formula.value(ITEM) == value


def test_a_phrase_that_points_back_at_nothing_named_is_no_formula() -> None:
    assert formula_in("Please order enough to bring it up to double that level.", FIELDS) is None
    assert formula_in("Set the price to twice that.", ["reorder_level"]) is None


@pytest.mark.parametrize("text", ["Order 5 more chairs.", "Order the chairs for the Leeds office.",
                                  "Order the reorder level.",  # one field, no factor: no formula
                                  "Order twice.",
                                  "Order 20 units from Acme, then bring the price up to 5."])
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


class _Counted(dict[str, Any]):
    """A tool result that counts how often its fields are read."""

    reads = 0

    def items(self) -> Any:
        self.reads += 1
        return super().items()


def _offsets(written: list[dict[str, Any]]) -> tuple[list[OffsetDate], _Counted]:
    """``date_offsets`` of a search that shows the review on 15 December, then a write for each of
    ``written`` (the request: a todo due the day before the review)."""
    shown = _Counted(id="evt-401", title="Annual budget review", start="2026-12-15T10:00")
    steps = [SimpleNamespace(kind="call", result=shown), *(SimpleNamespace(kind="call", result={"id": f"t{i}"})
                                                            for i in range(len(written)))]
    package = SimpleNamespace(request=SimpleNamespace(text="Add todos to print the handouts, due the day before the "
                                                           "review."), now="2026-12-01T09:00:00Z")
    writes = [SimpleNamespace(step=i) for i in range(1, len(written) + 1)]
    found = date_offsets(cast(Any, package), cast(Any, SimpleNamespace(steps=steps)), cast(Any, writes),
                         dict(enumerate(written, 1)))
    return found, shown


def test_date_offsets_read_each_earlier_result_once() -> None:
    found, shown = _offsets([{"title": "Handouts", "due_date": "2026-12-13"}, {"title": "Slides", "due_date": "2026-12-14"}])
    assert [(o.step, o.value, o.expected, o.source, o.days, o.right) for o in found] == [
        (1, "2026-12-13", "2026-12-14", "2026-12-15", -1, False), (2, "2026-12-14", "2026-12-14", "2026-12-15", -1, True)]
    assert shown.reads == 1


def test_date_offsets_read_no_result_for_writes_without_a_date() -> None:
    found, shown = _offsets([{"title": "Handouts", "priority": 2}])
    assert found == [] and shown.reads == 0


@pytest.mark.parametrize(("text", "value"), [
    # a margin on a field named back ("that minimum" for min_stock): the minimum plus 10, less what is held
    ("For every cleaning product below its minimum stock, order enough to bring it up to ten units above that "
     "minimum.", 12 + 10 - 3),
    ("Order what it takes to reach double its minimum: take the minimum, multiply by two, subtract what is on hand.",
     2 * 12 - 3),
    ("Top it up to 5 units below the max stock.", 50 - 5 - 3),
    ("Order enough to get to double the minimum, i.e. two times min stock minus what's on the shelf.", 2 * 12 - 3),
    ("Take the minimum stock, triple it, and add six spare boxes on top, and order that many.", 3 * 12 + 6),
    # steps stated after what the value should be, a participle scaling the result so far
    ("Its minimum should be whatever we have on hand right now, doubled, and then add ten on top.", 2 * 3 + 10),
    ("Set it to the max stock, halved, minus what is on hand.", 50 / 2 - 3),
    # a level to reach named by one field: that field less what is held
    ("Order exactly enough 7-port hubs to bring stock back up to its minimum level - no more.", 12 - 3),
    ("Restock it to the minimum stock level.", 12 - 3),
])
def test_margins_and_short_field_names(text: str, value: float) -> None:
    formula = formula_in(text, ["quantity", "min_stock", "max_stock"])
    assert formula is not None
    assert formula.value({"quantity": 3, "min_stock": 12, "max_stock": 50}) == value


def test_a_level_named_by_one_field_gives_way_to_a_later_phrase_that_says_more() -> None:
    """"a restock order big enough to bring it up to double the reorder level": the first phrase
    after "restock ... to" names the level alone; the later one doubles it."""
    formula = formula_in("For everything below its reorder level, place a restock order big enough to bring it up to "
                         "double the reorder level.", ["quantity", "reorder_level"])
    assert formula is not None and formula.value({"quantity": 3, "reorder_level": 12}) == 2 * 12 - 3
