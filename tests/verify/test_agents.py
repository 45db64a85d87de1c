"""The two failures of a correct agent that verification must catch before training does: a
confirmation question the user does not understand, and a name matched as an exact string."""

from __future__ import annotations

from typing import Any

from pipeline.core.package import Fact, TaskPackage, User
from pipeline.core.user import SimulatedUser
from pipeline.generation.tools import bound_to_catalogue
from pipeline.verify.verifier import verify_package


def test_a_proposed_value_to_confirm_reveals_the_fact() -> None:
    user = SimulatedUser(User(facts=[Fact(key="new_slot", value="2026-12-08T15:00", reveal_when=["slot"])]),
                         "2026-12-01T09:00:00Z")
    reply = user.reply("Should I move it to Tuesday 2026-12-08 at 15:00?")
    assert reply.revealed == ["new_slot"] and "2026-12-08T15:00" in reply.text


def _invoice(customer: Any) -> dict[str, Any]:
    """Invoice a person the CRM knows (with their company): the customer field graded by ``customer``."""
    return {
        "capability": "cross-service", "workflow": "invoice-a-contact", "services": ["crm", "finance"],
        "request": {"text": "Invoice Ines Duarte 1,200 EUR for the November retainer, due 2026-12-20, "
                            "billed to ines.duarte@brightline.example."},
        "initial_state": {
            "crm": {"customers": [
                {"id": "cust-001", "name": "Ines Duarte", "company": "Brightline Aerospace",
                 "email": "ines.duarte@brightline.example", "phone": "", "status": "active", "tier": "gold",
                 "owner": "sales", "notes": ""},
                {"id": "cust-002", "name": "Tomas Eriksen", "company": "Nordvik Marine",
                 "email": "tomas@nordvik.example", "phone": "", "status": "active", "tier": "standard",
                 "owner": "sales", "notes": ""}], "deals": []},
            "finance": {"invoices": [], "transactions": []}},
        "tools": [{"name": "crm_search_customers", "service": "crm", "endpoint": "/crm/customers/search"},
                  {"name": "finance_create_invoice", "service": "finance", "endpoint": "/finance/invoices/create"}],
        "checks": [
            {"id": "invoiced", "kind": "state_count", "weight": 0.8, "collection": "finance.invoices",
             "scope": "created", "op": "==", "value": 1, "ignore_case": True,
             "where": {"customer": customer, "customer_email": "ines.duarte@brightline.example", "amount": 1200,
                       "currency": "EUR", "due_date": "2026-12-20"}},
            {"id": "confirmed", "kind": "answer_contains", "weight": 0.2, "values": ["2026-12-20"]}],
        "reference": [
            {"call": "crm_search_customers", "args": {"query": "Ines Duarte"}},
            {"call": "finance_create_invoice", "args": {
                "customer": "Ines Duarte", "customer_email": "ines.duarte@brightline.example",
                "description": "November retainer", "amount": 1200, "currency": "EUR", "due_date": "2026-12-20"}},
            {"answer": "Invoiced Ines Duarte 1,200 EUR for the November retainer, due 2026-12-20."}],
    }


def test_a_name_matched_as_an_exact_string_is_overconstrained() -> None:
    """A correct agent writes the customer as "Ines Duarte (Brightline Aerospace)": an exact
    string check fails it, a check on the name's words does not."""
    exact = verify_package(bound_to_catalogue(TaskPackage.model_validate(_invoice("Ines Duarte"))))
    assert exact.codes == ["grader_overconstrained"]
    assert [f.detail["variant"] for f in exact.findings] == ["text_decorated"]
    loose = verify_package(bound_to_catalogue(TaskPackage.model_validate(_invoice({"$regex": r"\bines duarte\b"}))))
    assert loose.accepted, [f.message for f in loose.findings]
