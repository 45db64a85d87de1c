"""What a package's tools can do and what the reference's writes did (pipeline/verify/effects.py)."""

from __future__ import annotations

from pipeline.core.episode import play_actions
from pipeline.core.package import load_package
from pipeline.verify.effects import bound_tools, records_of, tools_for, writes, written_ids
from tests.verify.builders import TICKETS
from tests.verify.tickets import close_two

TICKETS_COLLECTION = ("helpdesk", "tickets")


def test_each_offered_tool_is_bound_to_the_operation_it_runs() -> None:
    bound = bound_tools(load_package(close_two()))
    assert {name: (b.op.effect, b.collection) for name, b in bound.items()} == {
        "helpdesk_list_tickets": ("list", TICKETS_COLLECTION), "helpdesk_update_ticket": ("update", TICKETS_COLLECTION)}
    assert bound["helpdesk_update_ticket"].spec.id_field == "id"


def test_a_tool_on_an_endpoint_of_another_service_is_not_bound() -> None:
    doc = close_two()
    doc["tools"][0]["service"] = "todo"
    assert list(bound_tools(load_package(doc))) == ["helpdesk_update_ticket"]


def test_the_tools_for_an_effect_on_a_collection() -> None:
    package = load_package(close_two())
    assert [b.tool.name for b in tools_for(package, TICKETS_COLLECTION, "update")] == ["helpdesk_update_ticket"]
    assert tools_for(package, TICKETS_COLLECTION, "delete") == []


def test_the_successful_writes_of_a_trajectory_with_the_records_they_left() -> None:
    package = load_package(close_two())
    trajectory = play_actions(package, [
        {"type": "tool_call", "name": "helpdesk_list_tickets", "arguments": {}},
        {"type": "tool_call", "name": "helpdesk_update_ticket", "arguments": {"ticket_id": "tkt-002", "status": "closed"}},
        {"type": "tool_call", "name": "helpdesk_update_ticket", "arguments": {"ticket_id": "tkt-999", "status": "closed"}},
        {"type": "tool_call", "name": "helpdesk_update_ticket", "arguments": {"ticket_id": "tkt-003", "status": "open"}},
        {"type": "answer", "text": "Done."}])
    done = writes(package, trajectory)
    assert [(w.step, w.record_id, (w.record or {}).get("status")) for w in done] == [(1, "tkt-002", "closed"),
                                                                                      (3, "tkt-003", "open")]
    assert written_ids(done) == {TICKETS_COLLECTION: {"tkt-002", "tkt-003"}}


def test_the_records_of_a_collection_in_a_state() -> None:
    state = {"helpdesk": {"tickets": TICKETS}}
    assert records_of(state, TICKETS_COLLECTION) == TICKETS
    assert records_of(state, ("helpdesk", "replies")) == [] and records_of(state, ("todo", "tasks")) == []
