"""Hand-built packages for the verifier tests: tools as the service catalogue defines them, and
the refusals and review notes of a verdict by the wrong or correct agent that made them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pipeline.core.codes import Code
from pipeline.core.episode import play_actions
from pipeline.core.grading import Grader
from pipeline.core.outcomes import Finding, Verdict
from pipeline.core.package import load_package
from pipeline.generation.tools import catalogue_tool
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.verifier import verify_package

Data = dict[str, Any]


def tools(*names: str) -> list[Data]:
    """The tools ``names`` exactly as the service catalogue defines their operations."""
    return [catalogue_tool(n).model_dump(mode="json") for n in names]


def package(request: str, state: Data, tool_names: list[str], checks: list[Data], reference: list[Data],
            capability: str = "general", **extra: Any) -> Data:
    """A package over the services of ``state`` and of the tools."""
    services = sorted({*state, *(n.split("_")[0] for n in tool_names)})
    return {"capability": capability, "workflow": "hand-built", "services": services, "request": {"text": request},
            "initial_state": state, "tools": tools(*tool_names), "checks": checks, "reference": reference, **extra}


def verify(doc: Data) -> Verdict:
    """The verdict of a copy of ``doc``."""
    return verify_package(copy.deepcopy(doc))


def by(verdict: Verdict, name: str, findings: list[Finding] | None = None) -> list[Finding]:
    """The findings (default: refusals and review notes) made by the agent or mutation ``name``."""
    pool = [*verdict.findings, *verdict.review] if findings is None else findings
    return [f for f in pool if f.detail.get("mutation") == name or f.detail.get("variant") == name
            or (f.witness is not None and f.witness.name == name)]


def refused_by(doc: Data, verdict: Verdict, code: Code, name: str) -> Finding:
    """The one refusal of ``code`` that agent ``name`` witnesses; its witness holds and replaying its
    actions in a fresh episode of ``doc`` gives the score it records."""
    found = [f for f in by(verdict, name, verdict.findings) if f.code is code]
    assert len(found) == 1, messages(verdict)
    finding = found[0]
    assert finding.witness is not None and finding.witness.holds
    p = load_package(copy.deepcopy(doc))
    assert Grader(p).value(play_actions(p, finding.witness.actions)) == pytest.approx(finding.witness.score)
    return finding


def messages(verdict: Verdict) -> list[str]:
    """Every finding of ``verdict``, one line each (for assertion messages)."""
    return [f"{f.code.value}: {f.message}" for f in [*verdict.findings, *verdict.review, *verdict.sft]]


def ticket(i: str, subject: str, email: str, status: str, priority: str = "normal") -> Data:
    """A helpdesk ticket assigned to sam."""
    return {"id": i, "subject": subject, "description": "", "customer_email": email, "status": status,
            "priority": priority, "assignee": "sam", "created_at": "2026-11-20T10:00:00Z",
            "updated_at": "2026-11-20T10:00:00Z"}


TICKETS = [ticket("tkt-001", "Login fails", "it-desk@brightline-logistics.example", "resolved"),
           ticket("tkt-002", "Printer jam", "ops@fernwood.example", "resolved"),
           ticket("tkt-003", "VPN drops", "ana@harwick.example", "resolved"),
           ticket("tkt-004", "Invoice copy", "ap@harwick.example", "open")]
"""Four tickets, three resolved, one of them Brightline Logistics' (named by its address)."""


def reference_run(doc: Data) -> ReferenceRun:
    """The reference of a copy of ``doc`` run once, as the verifier hands it to its stages."""
    p = load_package(copy.deepcopy(doc))
    return ReferenceRun(p, Grader(p, remember_records=True))
