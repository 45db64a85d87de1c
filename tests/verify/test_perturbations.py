"""The wrong values the mutation tests use, computed the fast way, are those of the plain
definitions: the most confusable record from an index, the swaps that skip patterns a text cannot
match, the answer candidates looked up per field, on packages of every capability."""

from __future__ import annotations

import re
from functools import cache
from typing import Any
from unittest import mock

from pipeline.core import text_values
from pipeline.core.jsonvalues import leaves
from pipeline.core.package import TaskPackage
from pipeline.core.patterns import compile_pattern
from pipeline.core.text_values import NUMBER_WORDS, WEEKDAYS
from pipeline.generation.offline import generate_package, pick_template
from pipeline.taxonomy.capabilities import taxonomy
from pipeline.verify import perturbations
from pipeline.verify.perturbations import (
    ANTONYMS,
    Alternatives,
    confusable,
    has_wrong_candidates,
)
from tests.support.corpus import CORPUS_DIR


@cache
def _packages() -> tuple[TaskPackage, ...]:
    return tuple(generate_package(capability, pick_template(capability, slot), 21, slot)
                 for capability in taxonomy() for slot in range(8))


def _written_values(package: TaskPackage) -> list[Any]:
    values: list[Any] = []
    for step in package.reference:
        values += leaves(getattr(step, "args", {}) or {})
    return values + leaves(package.initial_state) + [None, True, 1, 1.0, float("nan"), "nobody@nowhere.example", [1]]


def test_the_most_confusable_value_is_the_first_of_confusable() -> None:
    checked = 0
    for package in _packages():
        alternatives = Alternatives(package)
        for value in _written_values(package):
            found = confusable(package, value)
            first = alternatives._most_confusable(value)
            assert (first is perturbations._NONE) if not found else first == found[0], (package.workflow, value)
            checked += bool(found)
    assert checked > 300


def test_swaps_skip_only_patterns_that_find_nothing() -> None:
    texts = ["Moved to Tuesday 2026-12-08 at 15:00, approved.", "Ship five units on Dec 3 for $4,000",
             "We are on track; the 3rd works", "Kept as is", "twelve pallets, two crates", "ſix items approved",
             *(f"See you {day.title()}" for day in WEEKDAYS), *(f"{word.title()} crates" for word in NUMBER_WORDS[1:13]),
             *(f"It is {word}" for word in ANTONYMS)]
    texts += [v for p in _packages() for v in leaves(p.initial_state) + leaves([s.model_dump() for s in p.reference])
              if isinstance(v, str) and " " in v]
    with mock.patch.object(perturbations, "may_say", lambda text, words: True), \
            mock.patch.object(text_values, "_DIGIT", re.compile("")):
        plain = [perturbations._swap(t) for t in texts]
    assert [perturbations._swap(t) for t in texts] == plain
    assert perturbations._swap(texts[0]) == "Moved to Wednesday 2026-12-09 at 16:00, denied."


def _has_wrong_candidates_plainly(package: TaskPackage) -> bool:
    """``has_wrong_candidates`` as its docstring says it, one record and field at a time."""
    wanted = [v.casefold() for c in package.checks if c.kind == "answer_contains" for v in c.values]
    patterns = [compile_pattern(c.pattern, c.ignore_case) for c in package.checks if c.kind == "answer_matches"]
    for collections in package.initial_state.values():
        for records in collections.values():
            for record in records:
                for field, value in record.items():
                    if field == "id" or isinstance(value, (bool, dict, list)) or value in (None, ""):
                        continue
                    texts = [str(value)] + ([f"{value:,.2f}"] if isinstance(value, (int, float)) else [])
                    asked = any(w in t.casefold() for w in wanted for t in texts) or any(
                        p.search(t) for p in patterns for t in texts)
                    if asked and any(r is not record and r.get(field) not in (None, "", value) for r in records):
                        return True
    return False


def test_answer_candidates_are_found_as_one_record_at_a_time_finds_them() -> None:
    answers = [p for p in _packages() if any(c.kind in ("answer_contains", "answer_matches") for c in p.checks)]
    verdicts = [has_wrong_candidates(p) for p in answers]
    assert verdicts == [_has_wrong_candidates_plainly(p) for p in answers]
    assert any(verdicts) and not all(verdicts)


def test_counting_aggregated_records_stops_only_once_the_contract_is_met() -> None:
    from pipeline.core.grading import Grader
    from pipeline.verify.contracts import _aggregated
    from pipeline.verify.execution import ReferenceRun

    counted = 0
    for package in _packages():
        run = ReferenceRun(package, Grader(package))
        full = _aggregated(run, 10**6)
        for enough in (1, 2, 3, 5):
            found = _aggregated(run, enough)
            assert found >= enough if full >= enough else found == full, (package.workflow, enough)
        counted += full >= 2
    assert counted > 5


def test_answer_candidates_tell_values_apart_as_they_are_written() -> None:
    """-0.0 equals 0.0 but is written "-0.0"; 1 equals True but is written "1": a candidate is the
    text an answer would hold, in whatever order the records come."""
    import copy
    import json

    base = json.loads((CORPUS_DIR / "correct-agents" / "brittle-todo-priority.clean.json")
                      .read_text(encoding="utf-8"))["package"]
    service = next(iter(base["initial_state"]))
    collection = next(iter(base["initial_state"][service]))

    def package(amounts: list[Any], wanted: str) -> TaskPackage:
        data = copy.deepcopy(base)
        data["initial_state"][service][collection] = [{"id": f"todo-{n:03d}", "amount": a}
                                                      for n, a in enumerate(amounts, 1)]
        data["checks"] = [{"id": "a", "kind": "answer_contains", "weight": 1.0, "values": [wanted]}]
        return TaskPackage.model_validate(data)

    cases = [([0.0, -0.0, 5], "-0.0"), ([-0.0, 0.0, 5], "-0.0"), ([1, 1.0, 2], "1.0"), ([1, True], "1"),
             ([0.0, -0.0], "-0.0"), ([3, 3], "3")]
    found = [has_wrong_candidates(package(amounts, wanted)) for amounts, wanted in cases]
    assert found == [_has_wrong_candidates_plainly(package(amounts, wanted)) for amounts, wanted in cases]
    assert found == [True, True, True, False, False, False]


def test_a_count_is_a_number_before_a_plural_noun_not_before_a_verb() -> None:
    """"port 1194 is blocked" states no count ("is" is no plural noun); "129 units" does."""
    text = "Set the port to 1194. If UDP port 1194 is blocked, order 129 units."
    assert perturbations._swap(text) == "Set the port to 1194. If UDP port 1194 is blocked, order 130 units."


def test_a_measure_is_swapped_unless_it_names_a_kind_of_thing_or_is_a_percentage() -> None:
    """"35 psi" and "2.5 kg" a text dictates are measures; "the 250 ml cartons" names a product,
    "less 10% discount" restates the request's terms."""
    assert perturbations._swap("Run them at 35 psi. Check weekly.") == "Run them at 36 psi. Check weekly."
    assert perturbations._swap("Set it to 2.5 kg and 18°C") == "Set it to 3.5 kg and 19°C"
    kept = "Ordered 32 of the 250 ml oat milk cartons, less 10% discount."
    assert perturbations._swap(kept) == "Ordered 32 of the 250 ml oat milk cartons, less 10% discount."


def test_a_start_the_request_ties_to_another_event_s_end_is_perturbed_an_hour_later() -> None:
    """"Starting right when the Vega standup ends": 09:45 is the standup's end (09:30 + 15 min), so
    a careless agent's 10:45 must lose score; a start nothing ties is the agent's to choose."""
    from pipeline.core.package import load_package
    from tests.verify.builders import package
    events = [{"id": f"evt-{n}", "title": title, "start": start, "duration_minutes": length, "attendees": [],
               "location": "", "description": "", "created_at": "2026-11-01T08:00:00Z"}
              for n, title, start, length in ((1, "Vega standup", "2026-12-09T09:30", 15),
                                              (2, "Loomis design review", "2026-12-10T14:00", 60))]

    def alternatives(request: str) -> list[Any]:
        doc = package(request, {"calendar": {"events": events}}, ["calendar_search_events", "calendar_update_event"],
                      [{"id": "x", "kind": "answer_contains", "weight": 1.0, "values": ["done"]}], [{"answer": "done"}])
        return Alternatives(load_package(doc))("2026-12-09T09:45", {"type": "string"})

    assert "2026-12-09T10:45" in alternatives("Move the Loomis review to Wednesday 9 December, starting right when "
                                              "the Vega standup ends.")
    assert "2026-12-09T10:45" not in alternatives("Move the Loomis review to Wednesday 9 December, any time.")


def test_a_message_clause_that_says_its_content_dictates_the_message_alone() -> None:
    """"note on it that it was disabled because …" says what the note says; "an article that walks
    customers through …" is a relative clause, and "tell Keiko when it starts" says nothing itself."""
    from pipeline.verify.perturbations import says_that

    assert says_that("note on it that it was disabled because the key was exposed")
    assert says_that("tell Ines that the order is on its way")
    assert not says_that("Write a draft KB article titled 'Pairing' in Smart Home, that walks customers through the steps")
    assert not says_that("tell Keiko when it now starts")
