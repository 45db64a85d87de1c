"""Grounding (pipeline/verify/grounding.py): a value the checks pin must be learnable, and a write
that carries weight must be asked for."""

from __future__ import annotations

import pytest

from pipeline.core.codes import Code
from pipeline.verify.grounding import grounding_findings
from tests.verify.builders import Data, package, reference_run, tools
from tests.verify.tickets import close_two, reply


def _call_note(request: str, notes: str = "9:30") -> Data:
    """A to-do whose notes hold the time of a call; the check pins those notes."""
    task = {"title": "Call the bank", "notes": notes}
    return package(request, {"todo": {"tasks": []}}, ["todo_create_task"],
                   [{"id": "made", "kind": "state_count", "weight": 1.0, "collection": "todo.tasks",
                     "scope": "created", "op": "==", "value": 1, "where": task}],
                   [{"call": "todo_create_task", "args": task}, {"answer": "Added the to-do Call the bank."}])


@pytest.mark.parametrize("notes", ["9:30", "09:30", "21:05"])
def test_a_clock_time_nothing_states_is_ungrounded(notes: str) -> None:
    found = grounding_findings(reference_run(_call_note("Add a to-do 'Call the bank' with the call's time in its notes.",
                                                        notes)))
    assert [(f.code, f.step, f.check, f.detail.get("kind")) for f in found] == [
        (Code.UNGROUNDED_VALUE, 0, None, "time"), (Code.UNGROUNDED_VALUE, None, "made", "time")]
    assert found[1].witness is not None and found[1].witness.holds


@pytest.mark.parametrize("said", ["9:30", "09:30", "half past nine", "9:30 am"])
def test_a_single_digit_hour_clock_time_the_request_states_is_grounded(said: str) -> None:
    request = f"Add a to-do 'Call the bank' for {said}, with that time in its notes."
    assert grounding_findings(reference_run(_call_note(request))) == []


def test_an_update_the_request_never_asks_for_that_carries_weight_is_unrequested() -> None:
    doc = reply({"$contains": "invoice copy"})  # the request asks for a reply, not for another priority
    doc["tools"] += tools("helpdesk_update_ticket")
    doc["checks"] = [{**doc["checks"][0], "weight": 0.5},
                     {"id": "urgent", "kind": "state_match", "weight": 0.5, "collection": "helpdesk.tickets",
                      "record_id": "tkt-004", "expect": {"priority": "urgent"}}]
    doc["reference"].insert(1, {"call": "helpdesk_update_ticket", "args": {"ticket_id": "tkt-004", "priority": "urgent"}})
    [finding] = grounding_findings(reference_run(doc))
    assert (finding.code, finding.step, finding.detail) == (Code.UNREQUESTED_WRITE, 1,
                                                            {"tool": "helpdesk_update_ticket", "score": 0.5})
    assert finding.witness is not None and finding.witness.holds


def test_closing_the_tickets_the_request_asks_to_close_is_grounded_and_requested() -> None:
    assert grounding_findings(reference_run(close_two())) == []
