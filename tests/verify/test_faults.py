"""A package's faults during its reference: a call a fault answers is the fault firing (the reference
then retries), with or without ``expect_status``; any other failing status is a ``reference_error``,
and a fault the reference never recovers from is one too."""

from __future__ import annotations

from typing import Any

from pipeline.core.codes import Code
from tests.verify.builders import package, verify

_STATE = {"crm": {"customers": [
    {"id": "cust-1", "name": "Oakridge Dental", "company": "Oakridge Dental", "email": "leeds@oakridge.example",
     "status": "active", "tier": "standard", "owner": "", "notes": "Leeds clinic"},
    {"id": "cust-2", "name": "Brightwater Optics", "company": "Brightwater Optics", "email": "hq@brightwater.example",
     "status": "active", "tier": "standard", "owner": "", "notes": ""}]}}
_CHECKS = [{"id": "gold", "kind": "state_match", "weight": 0.8, "collection": "crm.customers", "record_id": "cust-1",
            "expect": {"tier": "gold"}},
           {"id": "others", "kind": "state_unchanged", "weight": 0.2, "collection": "crm.customers",
            "where": {"id": "cust-2"}}]
_SEARCH = {"call": "crm_search_customers", "args": {"query": "Oakridge"}}
_UPDATE = {"call": "crm_update_customer", "args": {"customer_id": "cust-1", "tier": "gold"}}
_FAULT = {"tool": "crm_search_customers", "on_call": 1, "times": 1, "status": 429, "message": "Too many requests"}


def _retry(reference: list[dict[str, Any]], faults: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return package("Oakridge Dental signed the loyalty addendum: move them up to gold.", _STATE,
                   ["crm_search_customers", "crm_update_customer"], _CHECKS, reference, capability="robustness",
                   faults=[_FAULT] if faults is None else faults)


def _codes(doc: dict[str, Any]) -> list[str]:
    return [f.code.value for f in verify(doc).findings]


def test_a_call_a_fault_answers_is_not_a_reference_error_with_or_without_expect_status() -> None:
    marked = [{**_SEARCH, "expect_status": 429}, _SEARCH, _UPDATE]
    for reference in ([_SEARCH, _SEARCH, _UPDATE], marked):
        assert Code.REFERENCE_ERROR.value not in _codes(_retry(reference)), reference


def test_the_reference_that_never_retries_after_the_fault_is_refused() -> None:
    verdict = verify(_retry([_SEARCH, _UPDATE]))
    assert any(f.code is Code.REFERENCE_ERROR and "never recovers" in f.message for f in verdict.findings)
    assert not verdict.accepted


def test_a_failing_status_no_fault_gives_is_still_a_reference_error() -> None:
    unknown = {"call": "crm_update_customer", "args": {"customer_id": "cust-9", "tier": "gold"}}
    verdict = verify(_retry([_SEARCH, _SEARCH, unknown, _UPDATE]))
    assert any(f.code is Code.REFERENCE_ERROR and f.step == 2 for f in verdict.findings)
    # the fault's status on a call the fault does not answer is an error too
    other = {"tool": "crm_update_customer", "on_call": 2, "times": 1, "status": 503, "message": "busy"}
    late = verify(_retry([_SEARCH, _SEARCH, _UPDATE], faults=[_FAULT, other]))
    assert any("never fires" in f.message for f in late.findings)
