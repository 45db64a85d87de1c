"""Static checks (pipeline/verify/static.py): tools bound to real operations, tools the package
names but does not offer, check weights, and references to records nobody has."""

from __future__ import annotations

import pytest

from pipeline.core.codes import Code
from pipeline.core.package import load_package
from pipeline.verify.static import reference_findings, tool_findings, unknown_tool_findings, weight_findings
from tests.verify.tickets import close_two


def codes(findings: list) -> list[Code]:  # type: ignore[type-arg]
    return [f.code for f in findings]


def test_a_clean_package_has_no_static_finding() -> None:
    package = load_package(close_two())
    assert tool_findings(package) + unknown_tool_findings(package) + weight_findings(package) == []
    assert reference_findings(package, None) == []


def test_a_tool_on_an_endpoint_its_service_does_not_offer_is_unknown() -> None:
    doc = close_two()
    doc["tools"][1]["endpoint"] = "/helpdesk/tickets/merge"
    [finding] = tool_findings(load_package(doc))
    assert finding.code is Code.UNKNOWN_ENDPOINT and finding.detail["endpoint"] == "/helpdesk/tickets/merge"


def test_a_tool_whose_parameters_differ_from_its_operation_is_a_schema_mismatch() -> None:
    doc = close_two()
    doc["tools"][1]["parameters"]["properties"]["status"]["enum"] = ["open", "archived"]
    assert codes(tool_findings(load_package(doc))) == [Code.TOOL_SCHEMA_MISMATCH]


def test_a_step_and_a_rule_naming_a_tool_not_offered() -> None:
    doc = close_two(rules=({"id": "no-reply", "kind": "not_called", "tool": "helpdesk_reply_ticket"},))
    doc["reference"].insert(0, {"call": "helpdesk_get_ticket", "args": {"ticket_id": "tkt-002"}})
    found = unknown_tool_findings(load_package(doc))
    assert [(f.code, f.step, f.check) for f in found] == [(Code.UNKNOWN_TOOL, 0, None),
                                                          (Code.UNKNOWN_TOOL, None, "no-reply")]


def test_weights_must_sum_to_one_and_each_be_positive() -> None:
    doc = close_two()
    doc["checks"][0]["weight"] = 0.0
    found = weight_findings(load_package(doc))
    assert codes(found) == [Code.WEIGHTS_INVALID, Code.WEIGHTS_INVALID]
    assert found[0].detail == {"total": 0.5} and "closed-tkt-002" in found[1].message


def test_a_check_on_a_ticket_nobody_has_dangles() -> None:
    doc = close_two()
    doc["checks"][1]["record_id"] = "tkt-404"
    [finding] = reference_findings(load_package(doc), None)
    assert (finding.code, finding.check) == (Code.DANGLING_REFERENCE, "closed-tkt-003") and "'tkt-404'" in finding.message


def test_a_ref_to_a_later_step_dangles() -> None:
    doc = close_two()
    doc["reference"][1]["args"]["ticket_id"] = {"$ref": "steps[2].result.ticket.id"}
    [finding] = reference_findings(load_package(doc), None)
    assert (finding.code, finding.step) == (Code.DANGLING_REFERENCE, 1) and "earlier step" in finding.message


@pytest.mark.parametrize(("name", "known"), [("Stripe API", True), ("Stripe Live API Key", False),
                                             ("Acme Portal", True), ("Acme Corp", False), ("API Key", False),
                                             ("Acme Christmas", True),   # "the Acme Christmas charter"
                                             ("Acme' CRM", True), ("Stripe Payments' Ledger", True),
                                             ("Acme's Hotel", True), ("Zeta's Acme", False)])
def test_a_known_name_before_words_such_as_api_names_that_thing(name: str, known: bool) -> None:
    """"the Stripe API" is Stripe's, when the state knows Stripe, and so is what a possessive
    gives it ("Acme' CRM", "Acme's Hotel"); other words make another name."""
    from pipeline.verify.entities import _known_before_a_generic_word

    assert _known_before_a_generic_word(name, "int-002 stripe payments acme") is known
