"""Collateral damage (pipeline/verify/collateral.py): a wrong agent that also changes the records the
request does not concern must lose score."""

from __future__ import annotations

from pipeline.core.codes import Code
from pipeline.verify.collateral import collateral_findings
from tests.verify.builders import reference_run
from tests.verify.tickets import close_two


def test_editing_the_other_tickets_unnoticed_is_collateral_damage() -> None:
    run = reference_run(close_two())
    [finding] = collateral_findings(run)
    assert finding.code is Code.COLLATERAL_DAMAGE
    assert finding.detail == {"mutation": "edit_others", "score": 1.0, "collection": "helpdesk.tickets",
                              "records": "other"}
    assert finding.witness is not None and finding.witness.holds
    edited = {a["arguments"]["ticket_id"] for a in finding.witness.actions
              if a.get("name") == "helpdesk_update_ticket"} - {"tkt-002", "tkt-003"}
    assert edited == {"tkt-001", "tkt-004"}


def test_guards_on_the_other_tickets_leave_no_damage_unnoticed() -> None:
    assert collateral_findings(reference_run(close_two(("tkt-001", "tkt-004")))) == []



def test_one_guard_on_the_other_tickets_is_noticed_by_the_agent_that_edits_them_all() -> None:
    """The wrong agent edits every record the reference leaves alone, so one guarded among them
    makes it lose score (what the request keeps beside its work is tried apart: ``_siblings``)."""
    assert collateral_findings(reference_run(close_two(("tkt-001",)))) == []


def _retitle(guarded: bool) -> dict:
    """A contact's title changed; its namesake in another department holds one-word fields only."""
    from tests.verify.builders import package
    contacts = [{"id": "c-1", "name": "Ravi Nair", "email": "ravi.nair@corp.example", "department": "Legal",
                 "title": "Paralegal", "phone": "+44-555-0101"},
                {"id": "c-2", "name": "Ravi Nair", "email": "r.nair@corp.example", "department": "Finance",
                 "title": "Accountant", "phone": "+44-555-0102"}]
    checks = [{"id": "title", "kind": "state_match", "weight": 0.9 if guarded else 1.0, "collection": "contacts.contacts",
               "record_id": "c-2", "expect": {"title": "Controller"}}]
    if guarded:
        checks.append({"id": "kept", "kind": "state_unchanged", "weight": 0.1, "collection": "contacts.contacts",
                       "where": {"id": {"$ne": "c-2"}}})
    return package("Ravi Nair in finance is now our Controller, fix his title", {"contacts": {"contacts": contacts}},
                   ["contacts_search", "contacts_update"], checks,
                   [{"call": "contacts_search", "args": {"query": "Ravi Nair"}},
                    {"call": "contacts_update", "args": {"contact_id": "c-2", "title": "Controller"}},
                    {"answer": "Ravi Nair (Finance) is now Controller."}])


def test_a_namesake_whose_fields_are_single_words_is_damaged_unnoticed() -> None:
    """No field of the other contact holds two words: the wrong agent edits a word ("Legal (edited)")."""
    from pipeline.core.package import load_package
    found = collateral_findings(reference_run(load_package(_retitle(guarded=False))))
    assert [(f.code, f.witness.name if f.witness else None) for f in found] == [
        (Code.COLLATERAL_DAMAGE, "edit_others")]


def test_a_guarded_namesake_leaves_no_damage_unnoticed() -> None:
    from pipeline.core.package import load_package
    assert collateral_findings(reference_run(load_package(_retitle(guarded=True)))) == []


def test_records_of_a_collection_the_work_never_writes_are_no_collateral() -> None:
    """The work reads the directory and creates a todo; the directory's update tool is offered,
    but an agent doing this work has no cause to change a contact: no edit_others there."""
    from pipeline.core.package import load_package
    from tests.verify.builders import package
    contacts = [{"id": "c-1", "name": "Ines Duarte", "email": "ines@corp.example", "department": "Legal",
                 "title": "Counsel", "phone": "+44-555-0101"},
                {"id": "c-2", "name": "Ravi Nair", "email": "ravi@corp.example", "department": "Finance",
                 "title": "Controller", "phone": "+44-555-0102"}]
    doc = package("add a todo to call Ines about the NDA", {"contacts": {"contacts": contacts}, "todo": {"tasks": []}},
                  ["contacts_search", "contacts_update", "todo_create_task"],
                  [{"id": "todo", "kind": "state_count", "weight": 1.0, "collection": "todo.tasks", "scope": "created",
                    "where": {"title": {"$regex": "ines"}}, "op": "==", "value": 1, "ignore_case": True}],
                  [{"call": "contacts_search", "args": {"query": "Ines"}},
                   {"call": "todo_create_task", "args": {"title": "Call Ines Duarte about the NDA"}},
                   {"answer": "Added a todo to call Ines Duarte about the NDA."}])
    assert collateral_findings(reference_run(load_package(doc))) == []


def test_the_message_counts_the_records_the_wrong_agent_could_change() -> None:
    """A third contact holds no field the update tool can change (no title, department or phone):
    the wrong agent edits the one it can, and the message says so ("1 of the 2 other records")."""
    from pipeline.core.package import load_package
    doc = _retitle(guarded=False)
    doc["initial_state"]["contacts"]["contacts"].append({"id": "c-3", "name": "Ana Ruiz", "email": "ana.ruiz@corp.example"})
    [finding] = collateral_findings(reference_run(load_package(doc)))
    assert finding.witness is not None and finding.witness.holds
    edited = [a["arguments"]["contact_id"] for a in finding.witness.actions
              if a.get("name") == "contacts_update" and a["arguments"]["contact_id"] != "c-2"]
    assert edited == ["c-1"]
    assert "changing a field of 1 of the 2 " in finding.message
