"""Claw records are keyed by a field of their own (``ticket_id``, ``task_id``): the wrong agents
that pick the look-alike record (``perturb_argument``) pick it by that field too."""

from __future__ import annotations

from typing import Any

from pipeline.core.codes import Code
from pipeline.core.package import TaskPackage
from pipeline.generation.offline import generate_package
from pipeline.verify.perturbations import confusable, identity_fields
from tests.verify.builders import refused_by, verify


def _close_ticket() -> dict[str, Any]:
    data = generate_package("general", "claw-close-ticket-with-resolution", 7, 0).model_dump(mode="json")
    data.pop("id", None)
    return data


def test_a_claw_ticket_id_identifies_its_ticket_and_has_look_alikes() -> None:
    package = TaskPackage.model_validate(_close_ticket())
    assert "ticket_id" in identity_fields(package)
    others = confusable(package, "TKT-002")
    assert sorted(others) == ["TKT-001", "TKT-003", "TKT-004"]


def test_checks_that_count_a_closed_ticket_without_saying_which_are_refused() -> None:
    """The offline package pins TKT-002; counting any one ticket closed with the resolution passes
    an agent that closes the look-alike instead."""
    data = _close_ticket()
    assert verify(data).accepted
    pinned = [c for c in data["checks"] if c.get("record_id") == "TKT-002"]
    assert pinned
    weight = sum(c["weight"] for c in pinned)
    data["checks"] = [c for c in data["checks"] if c not in pinned]
    data["checks"].append({"id": "one-closed", "kind": "state_count", "weight": weight,
                           "collection": "helpdesk.tickets", "op": "==", "value": 1,
                           "where": {"status": "closed", "resolution": {"$regex": "(?i)faulty cable"}}})
    verdict = verify(data)
    finding = refused_by(data, verdict, Code.GRADER_UNDERCONSTRAINED, "perturb_argument")
    assert finding.detail["argument"] == "ticket_id" and finding.detail["value"] != "TKT-002"
