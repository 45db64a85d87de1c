"""Correct agents (pipeline/verify/equivalence.py): an agent that does the task in another correct
way must keep the reference's score, or the checks overconstrain."""

from __future__ import annotations

from pipeline.core.codes import Code
from pipeline.core.package import load_package
from pipeline.verify.equivalence import equivalence_findings
from pipeline.verify.questions import GO_AHEAD_QUESTION, KIND_QUESTIONS, phrasings
from tests.verify.builders import reference_run
from tests.verify.tickets import close_two, reply


def test_a_reply_pinned_to_the_letter_punishes_other_wording() -> None:
    run = reference_run(reply("The invoice copy is on its way."))
    found = equivalence_findings(run)
    assert [(f.code, f.detail["variant"], f.detail["score"]) for f in found] == [
        (Code.GRADER_OVERCONSTRAINED, "text_case", 0.0), (Code.GRADER_OVERCONSTRAINED, "text_decorated", 0.0)]
    assert all(f.witness is not None and f.witness.holds for f in found)


def test_a_reply_checked_for_what_the_request_dictates_lets_any_wording_pass() -> None:
    assert equivalence_findings(reference_run(reply({"$contains": "invoice copy"}))) == []


def test_closing_the_tickets_in_either_order_passes_alike() -> None:
    assert equivalence_findings(reference_run(close_two())) == []


def test_a_reference_short_of_full_score_is_not_measured() -> None:
    doc = reply("The invoice copy is on its way.")
    doc["checks"][0]["where"]["body"] = "Something the reference never writes."
    run = reference_run(doc)
    assert run.score == 0.0 and equivalence_findings(run) == []


def test_a_date_fact_is_asked_for_by_the_day_question_and_a_wrong_guess() -> None:
    doc = close_two()
    doc["user"] = {"facts": [{"key": "follow_up_date", "value": "2026-12-09", "reveal_when": ["follow"]}]}
    asked = phrasings(load_package(doc), "follow_up_date")
    assert asked[0] == KIND_QUESTIONS["date"] and asked[1].startswith("Should I go with ")
    assert "2026-12-09" not in asked[1] and GO_AHEAD_QUESTION not in asked
    assert phrasings(load_package(doc), "no_such_fact") == []
