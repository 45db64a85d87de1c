"""Hedged amounts, stated adjustments of a total, unordered lists by what
they hold, dates and amounts a message carries (the corpus cases are ``tests/corpus/truth-4b``)."""

from __future__ import annotations

import pytest

from pipeline.core.text_values import numbers_in
from pipeline.verify.aggregates import Adjustment, adjust, misadjusted, on_everything, stated_adjustments
from pipeline.verify.carried import carry_phrase
from pipeline.verify.equivalence import is_unordered
from pipeline.verify.mutations import asks_for_value
from pipeline.verify.perturbations import hedged_answer, is_amount, other_amounts


@pytest.mark.parametrize(("said", "factor", "plus"), [
    ("Total the unpaid invoices less our 10% discount", 0.9, 0.0),
    ("after our 10% early-payment discount", 0.9, 0.0),
    ("take 15% off the total", 0.85, 0.0),
    ("with 20% VAT on top", 1.2, 0.0),
    ("plus a 5% late fee", 1.05, 0.0),
    ("the total plus a €25 handling fee", 1.0, 25.0),
    ("less the £40 deposit we already paid", 1.0, -40.0),
    ("add the 2,000 setup fee to it", 1.0, 2000.0),   # a plain number the noun after names as an amount
    ("with their 10% loyalty discount taken off the hours", 0.9, 0.0),  # a word between the number and its noun
    ("the won amounts added up with our 12% agency commission taken off", 0.88, 0.0),  # a fee, said taken off
])
def test_stated_adjustments_read_their_direction(said: str, factor: float, plus: float) -> None:
    [a] = stated_adjustments(said)
    assert (a.factor, a.plus) == (factor, plus)


@pytest.mark.parametrize("said", [
    "what did hosting cost us net of VAT? (20% VAT is baked into the amounts)",
    "the amounts include 20% VAT, give me the spend ex VAT",
    "excluding tax please - the charges are gross, 20% tax included",
])
def test_a_tax_the_amounts_include_is_divided_out(said: str) -> None:
    [a] = stated_adjustments(said)
    assert a.apply(1440.0) == 1200.0 and a.included == 0.2
    assert dict((v, w) for w, v in misadjusted(1440.0, [a]))[1152.0].startswith("less 20%")  # 20% off the gross


def test_a_tax_added_on_top_is_no_included_tax() -> None:
    [a] = stated_adjustments("the charges plus 20% VAT on top, not net of anything")
    assert (a.factor, a.included) == (1.2, 0.0)


@pytest.mark.parametrize("said", ["5% of the total", "invoices over €500", "How much do we owe?"])
def test_no_direction_is_no_adjustment(said: str) -> None:
    assert stated_adjustments(said) == []


def test_a_misadjusted_total_is_the_adjustment_left_out_or_flipped() -> None:
    stated = [Adjustment(0.9, 0.0, "less 10%")]
    assert adjust(4310.0, stated) == 3879.0
    assert sorted(v for _, v in misadjusted(4310.0, stated)) == [4310.0, 4741.0]


@pytest.mark.parametrize(("said", "ordered"), [
    ("£600 of setting plus the £40 travel fee, and then take 15% off the whole lot", True),
    ("£600 of setting plus the £40 travel fee, with 15% off everything", True),
    ("£600 of setting plus the £40 travel fee, less our 15% discount", False),  # which it goes on is not said
])
def test_an_adjustment_on_the_whole_lot_goes_on_after_the_others(said: str, ordered: bool) -> None:
    """(600 + 40) less 15% is 544; 600 less 15%, then plus 40, is 550: a check's figure only where
    the request puts the discount on everything before it."""
    stated = stated_adjustments(said)
    assert adjust(600.0, stated) == 544.0 and on_everything(said) is ordered
    assert (550.0 in [v for _, v in misadjusted(600.0, stated, on_everything(said))]) is ordered


def test_amounts_are_hedged_with_other_records_or_other_totals() -> None:
    records = [{"id": "inv-1", "amount": 100.0, "status": "unpaid"}, {"id": "inv-2", "amount": 70.0, "status": "unpaid"},
               {"id": "inv-3", "amount": 30.0, "status": "void"}]
    assert 200.0 in other_amounts(170.0, [records], set())  # every invoice, the void one too
    assert other_amounts(70.0, [records], set())[:2] == [100.0, 30.0]  # the other records' amounts
    hedge = hedged_answer("Harwick owes 170.00 EUR.", ["170.00"], [records], "What is Harwick's unpaid total?", set())
    assert hedge is not None and "200.00" in hedge
    assert hedged_answer("Harwick owes 170.00 EUR.", ["170.00"], [records], "What is Harwick's unpaid total?", set(),
                         amounts_of=frozenset()) is None  # a pattern's amount is left to the package


@pytest.mark.parametrize(("text", "amount"), [("€4,310", True), ("1,284.50", True), ("2515", True), ("3", False),
                                              ("2026", False)])
def test_what_is_an_amount(text: str, amount: bool) -> None:
    assert is_amount(numbers_in(text)[0]) is amount


@pytest.mark.parametrize("said", ["Work out the amount we still owe Tarrow Logistics and put it in your reply.",
                                  "Total up the November charges.", "How much do we owe Kelso?",
                                  "whats the total value of our deals in negotiation", "what’s left on the Kelso account",
                                  "When's my next one-to-one with Priya Raman?", "When’s the renewal due?"])
def test_an_amount_asked_for_in_words(said: str) -> None:
    assert asks_for_value(said)


@pytest.mark.parametrize("said", ["Tell me why the invoice bounced.", "Close it, whatsoever the status.",
                                  "Cancel it when the parcel arrives."])
def test_no_value_asked_for(said: str) -> None:
    assert not asks_for_value(said)


def test_a_list_of_records_is_unordered_whatever_its_name() -> None:
    known = frozenset({"txn-302", "txn-305"})
    assert is_unordered("transactions", ["TXN-302", "TXN-305"], known)
    assert not is_unordered("transactions", ["TXN-302", "TXN-305"])
    assert not is_unordered("steps", ["TXN-302", "call the vendor"], known)


@pytest.mark.parametrize(("said", "field", "asked"), [
    ("Post in #sales the last contact date we have for Brinkhill Outdoor.", "last_contact", True),
    ("Email Kelso's accounts team the amount on invoice inv-203.", "amount", True),
    ("Put a high-priority todo on my list to chase them, due Monday 7 December.", "due_date", False),
    ("Make it due ten days before their contract end date.", "contract_end", False),
    ("Can you email Rosa at Vidal Ceramics the renewal number and the close date from her open deal?", "close_date",
     True),  # the second "the" of the sentence
    ("Can you email Rosa at Vidal Ceramics the renewal number and the close date from her open deal?", "owner", False),
])
def test_a_message_is_asked_to_carry_a_field(said: str, field: str, asked: bool) -> None:
    assert bool(carry_phrase(said, field)) is asked


def test_amounts_are_worked_out_only_while_the_hedges_are_open(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hedges are the first MAX_HEDGES candidates found: once the other records' ids fill them,
    an amount graded after the id is not worked out (``other_amounts``, the dear part), and the
    hedge is what it would be with it; graded first, the amount still leads the hedge."""
    from pipeline.verify import perturbations

    records = [{"id": f"inv-{n}", "amount": 100.0 + n, "status": "unpaid"} for n in range(1, 11)]
    answer, told = "inv-3: we owe 1,234.50 EUR in all.", "Which invoice is oldest, and what do we owe in all?"
    ids = ", ".join(f"inv-{n}" for n in (1, 2, 4, 5, 6, 7, 8, 9))
    amounts_first = hedged_answer(answer, ["1,234.50", "inv-3"], [records], told, set())
    assert amounts_first is not None and amounts_first.startswith(f"{answer} Or possibly: 1,")  # the amount's hedges

    def worked_out(*args: object, **kwargs: object) -> list[float]:
        raise AssertionError("other_amounts asked for after the hedges were settled")

    monkeypatch.setattr(perturbations, "other_amounts", worked_out)
    assert hedged_answer(answer, ["inv-3", "1,234.50"], [records], told, set()) == f"{answer} Or possibly: {ids}."
    with pytest.raises(AssertionError, match="settled"):  # seven other ids only: the amount still counts
        hedged_answer(answer, ["inv-3", "1,234.50"], [records[:8]], told, set())


def test_a_number_read_with_the_stated_adjustments_in_either_order_is_known() -> None:
    """"add the 2,000 setup fee to what you get once their last won deal is discounted by fifteen
    percent": 24,000 less 15% plus 2,000 is 22,400, though the words name the fee first."""
    from pipeline.verify.evidence import Evidence
    said = ("Halvorsen's renewal: add the 2,000 setup fee to what you get once their last won deal is discounted by "
            "fifteen percent.")
    known = Evidence(said=said)
    known.numbers.add(24000.0)
    assert known.has_number(22400.0) and known.plainly_known(22400.0, set())
    assert not known.has_number(22100.5)


def test_a_company_named_by_its_email_domain_is_hedged_with_the_other_domains() -> None:
    """"Which company raised the most tickets? Go by the domain of the customer email": the answer
    names a domain's first label, and a careless agent adds the other companies' labels."""
    tickets = [{"id": f"t-{n}", "customer_email": email, "status": "open"}
               for n, email in enumerate(["ops@brightkiln.example", "ana@brightkiln.example",
                                          "it@tessaro-glass.example", "desk@ferrocast.example"])]
    hedge = hedged_answer("Brightkiln raised the most.", ["brightkiln"], [tickets],
                          "Which company raised the most tickets?", set())
    assert hedge == "Brightkiln raised the most. Or possibly: tessaro-glass, ferrocast."
    whole = hedged_answer("brightkiln.example raised the most.", ["brightkiln.example"], [tickets], "Which domain?", set())
    assert whole is not None and whole.endswith("Or possibly: tessaro-glass.example, ferrocast.example.")
