"""What an agent could know at a point of the reference (pipeline/verify/evidence.py)."""

from __future__ import annotations

from datetime import date

from pipeline.core.episode import play_actions
from pipeline.core.package import load_package
from pipeline.verify.evidence import Evidence, evidence_of, starting_evidence
from tests.verify.tickets import close_two

TODAY = date(2026, 12, 1)


def test_before_any_step_the_agent_knows_the_request_and_the_tools_choices() -> None:
    evidence = starting_evidence(load_package(close_two()))
    assert evidence.has_token("fernwood") and evidence.has_token("urgent")  # the request; a priority of the schema
    assert not evidence.has_token("tkt-002")  # read only by listing the tickets


def test_what_the_reference_read_and_wrote_is_known_at_its_end() -> None:
    package = load_package(close_two())
    trajectory = play_actions(package, [
        {"type": "tool_call", "name": "helpdesk_list_tickets", "arguments": {"status": "resolved"}},
        {"type": "tool_call", "name": "helpdesk_update_ticket", "arguments": {"ticket_id": "tkt-002", "status": "closed"}},
        {"type": "answer", "text": "Closed tkt-002."}])
    known = evidence_of(package, trajectory)
    assert known.has_token("tkt-003") and known.has_token("ops@fernwood.example")
    assert known.has_day("2026-11-20") and known.has_time("10:00")  # the tickets' created_at
    assert known.has_number(3)  # three resolved tickets listed


def test_a_clock_time_with_one_hour_digit_is_known_as_hh_mm() -> None:
    evidence = Evidence()
    evidence.read_value({"slot": "9:30"}, TODAY)
    assert evidence.has_time("09:30") and not evidence.has_time("19:30")


def test_one_step_of_arithmetic_from_known_numbers_is_known() -> None:
    evidence = Evidence()
    evidence.read_value({"a": 120, "b": 45}, TODAY)
    assert evidence.has_number(165) and evidence.has_number(75) and evidence.has_number(240)  # sum, difference, twice
    assert not evidence.has_number(1000)
