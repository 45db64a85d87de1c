"""Groups of records and the figures a careful agent computes from them
(pipeline/verify/aggregates.py): groups by value, month and "all but one or two values"; the
records a request's name phrase or date range selects; lists pooled; sums, products, means and
minutes in hours; how an answer writes a number."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from pipeline.verify.aggregates import (
    MAX_SUBSET_SEARCH,
    figures,
    groups,
    number_forms,
    pooled,
    records_adding_up,
    split_figures,
    totals,
)

TODAY = date(2026, 12, 1)  # "next week" is 7 to 13 December
DEALS = [{"id": f"r{n}", "customer": customer, "close": close, "amount": 10} for n, (customer, close) in enumerate([
    ("Skagen Logistics North", "2026-12-08"), ("Skagen Logistics South", "2026-12-09"),
    ("Skagen Logistics East", "2026-11-20"), ("Fernwood Supply", "2026-12-10"), ("Harwick", "2027-01-05"),
    ("Oakridge", "2026-10-03"), ("Tavora", "2026-09-09"), ("Kivu Labs", "2026-12-28")], 1)]


def ids(found: list[list[dict[str, Any]]]) -> list[list[str]]:
    return [[r["id"] for r in g] for g in found]


def test_groups_without_the_request_are_the_list_and_its_months() -> None:
    assert ids(groups(DEALS)) == [["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"], ["r1", "r2", "r4", "r8"]]


def test_groups_the_request_selects_by_a_name_and_a_date_range() -> None:
    found = ids(groups(DEALS, "Total the Skagen Logistics deals closing next week.", TODAY))
    assert found == [["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"], ["r1", "r2", "r4", "r8"],
                     ["r1", "r2", "r3"],   # the records whose texts hold "Skagen Logistics"
                     ["r1", "r2", "r4"],   # a date next week
                     ["r1", "r2"]]         # both


def test_the_words_of_a_title_the_request_gives_select_no_group() -> None:
    """"a report called 'Skagen Logistics review'" names the report: no group of Skagen's deals."""
    found = ids(groups(DEALS, "File a report called 'Skagen Logistics review' on the deals.", TODAY))
    assert found == ids(groups(DEALS))
    assert ["r1", "r2", "r3"] in ids(groups(DEALS, "File a report on the Skagen Logistics deals.", TODAY))


def test_a_phrase_that_selects_one_record_makes_no_group() -> None:
    assert ids(groups(DEALS, 'Total the "Fernwood Supply" deals.', TODAY)) == ids(groups(DEALS))


def test_groups_by_value_and_all_but_one_or_two_values() -> None:
    deals = [{"id": "d1", "stage": "won"}, {"id": "d2", "stage": "lost"}, {"id": "d3", "stage": "open"},
             {"id": "d4", "stage": "open"}]
    found = ids(groups(deals))
    assert found[0] == ["d1", "d2", "d3", "d4"]
    assert ["d3", "d4"] in found                 # stage open; also "not won or lost"
    assert ["d2", "d3", "d4"] in found           # all but won
    assert ["d1", "d3", "d4"] in found           # all but lost
    assert len(found) == len({tuple(g) for g in found})  # each once


def test_groups_of_one_record_is_the_list_alone() -> None:
    assert ids(groups(DEALS[:1])) == [["r1"]]


def test_pooled_adds_all_records_once_when_there_are_several_lists() -> None:
    one = [[DEALS[0]]]
    assert pooled(one) is one
    assert ids(pooled([[DEALS[0], DEALS[1]], [DEALS[1], DEALS[2]]])) == [["r1", "r2"], ["r2", "r3"], ["r1", "r2", "r3"]]
    assert pooled([]) == []


def test_totals_sums_products_means_and_minutes_in_hours() -> None:
    group = [{"a": 2, "b": 3, "duration_minutes": 90, "ok": True, "note": "x"},
             {"a": 4, "b": 5, "duration_minutes": 180}]
    assert totals(group) == [
        6.0, 8.0, 270.0,          # sums of a, b, duration_minutes
        26.0, 900.0, 1170.0,      # a·b, a·minutes, b·minutes
        3.0, 4.0, 135.0,          # means
        4.5,                      # 270 minutes in hours
    ]


def test_totals_of_one_record_have_no_mean_and_drop_zeros() -> None:
    assert totals([{"a": 2, "flag": True, "s": "x"}]) == [2.0]
    assert totals([{"a": 0}, {"a": 0}]) == []
    assert totals([{"amount": 10.005}, {"amount": 0.001}]) == [10.01, 5.0]


@pytest.mark.parametrize(("value", "forms"), [
    (1234.5, ["1,234.50", "1234.50", "1234.5"]),
    (1234.0, ["1,234.00", "1234.00", "1234", "1,234"]),
    (5, ["5.00", "5"]),
    (0.5, ["0.50", "0.5"]),
])
def test_number_forms(value: float, forms: list[str]) -> None:
    assert number_forms(value) == forms


def test_number_forms_of_a_large_amount_with_cents() -> None:
    assert "1234567.5" in number_forms(1234567.5)


class _Counted(dict[str, Any]):
    """A record that counts how often its values are read."""

    reads = 0

    def items(self) -> Any:
        self.reads += 1
        return super().items()


def test_figures_read_each_record_once_for_every_figure() -> None:
    group = [_Counted(quantity=2, price=3.5, hours=1), _Counted(quantity=4, price=1.0, note="x")]
    assert dict(figures(group)) == {"count": 2.0, "total of hours": 1.0, "mean of hours": 0.5, "total of price": 4.5,
                                    "mean of price": 2.25, "total of quantity": 6.0, "mean of quantity": 3.0,
                                    "total of hours × price": 3.5, "total of hours × quantity": 2.0,
                                    "total of price × quantity": 11.0}
    assert [r.reads for r in group] == [1, 1]


def test_split_figures_of_groups_that_share_records_read_each_record_once() -> None:
    a, b, c = _Counted(quantity=2, price=3.0), _Counted(quantity=1, price=5.0), _Counted(quantity=7, price=1.0)
    found = split_figures([[a, b, c], [a, b], [b, c]], (10.0,))
    assert [a.reads, b.reads, c.reads] == [1, 1, 1]
    assert [plain + products for plain, products in found] == [figures(g, (10.0,)) for g in ([a, b, c], [a, b], [b, c])]
    assert found[1][1] == [("total of price × quantity", 11.0)]


def test_the_fewest_records_whose_numbers_add_up_to_a_total() -> None:
    rides = [{"id": f"t-{n}", "amount": a} for n, a in enumerate((23.4, 31.5, 18.75, 27.8, 41.1, 64.0, 12.9, 36.25))]
    assert records_adding_up(rides, 132.4) == 5  # 23.40 + 18.75 + 41.10 + 12.90 + 36.25
    assert records_adding_up(rides, 64.0) is None  # one record holds it: a lookup, not a total
    assert records_adding_up(rides, 1.23) is None
    assert records_adding_up(rides * 3, 132.4) is None  # too long a list to search
    assert len(rides * 3) > MAX_SUBSET_SEARCH


def test_numbers_under_a_label_in_texts_add_up_as_a_column() -> None:
    """Timesheet notes giving "Hours: 7.5" in their bodies: this week's three add up to 20.75."""
    from pipeline.verify.aggregates import records_adding_up

    notes = [{"id": f"note-{n}", "title": day, "body": f"Client work. Hours: {hours}"}
             for n, day, hours in ((1, "Mon", 7.5), (2, "Tue", 8), (3, "Wed", 5.25), (4, "last Fri", 9))]
    assert records_adding_up(notes, 20.75) == 3
    assert records_adding_up(notes, 21.0) is None
