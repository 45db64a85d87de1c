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
