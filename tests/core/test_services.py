"""Every operation of every service in the catalogue, exercised through ``World``.

``SEED`` holds a small hand-written initial state per service and ``EXAMPLES`` one happy-path call
per endpoint with its expected outcome; a test asserts the table covers the whole catalogue, so an
operation added without an example fails here.
"""

from __future__ import annotations

import copy
import re
from datetime import datetime, timedelta
from typing import Any

import pytest

from pipeline.core.package import Fault, Tool
from pipeline.core.services import (
    ServiceSpec,
    catalogue,
    default_tool_name,
    find_operation,
    get_service,
    intent_pattern,
)
from pipeline.core.world import World

NOW = "2031-05-06T07:08:09Z"  # far from both the wall clock and DEFAULT_NOW


def clock(calls_before: int, now: str = NOW) -> str:
    """The package clock after ``calls_before`` calls: ``now`` plus one second per call."""
    base = datetime.fromisoformat(now.replace("Z", "+00:00"))
    return (base + timedelta(seconds=calls_before)).strftime("%Y-%m-%dT%H:%M:%SZ")


def tools_for(service: str) -> list[Tool]:
    spec = catalogue()[service]
    return [Tool(name=default_tool_name(service, op), service=service, endpoint=op.endpoint)
            for op in spec.operations]


def make_world(service: str, state: dict[str, Any] | None = None, faults: list[Fault] | None = None,
               now: str = NOW) -> World:
    initial = {service: SEED[service]} if state is None else state
    return World([service], initial, tools_for(service), faults, now)


def ids(records: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in records]


# --------------------------------------------------------------------------- seed state

SEED: dict[str, dict[str, list[dict[str, Any]]]] = {
    "contacts": {
        "contacts": [
            {"id": "c-1", "name": "Alice Chen", "email": "alice@corp.example", "department": "Engineering",
             "title": "Staff Engineer", "phone": "+1-555-0001"},
            {"id": "c-2", "name": "Bob Diaz", "email": "bob@corp.example", "department": "Sales",
             "title": "Account Executive", "phone": "+1-555-0002"},
            {"id": "c-3", "name": "Carol Evans", "email": "carol@corp.example", "department": "Engineering",
             "title": "Engineering Manager", "phone": "+1-555-0003"},
        ],
        "messages": [
            {"id": "msg-001", "contact_id": "c-1", "message": "Welcome aboard", "sent_at": "2031-05-01T10:00:00Z"},
        ],
    },
    "todo": {
        "tasks": [
            {"id": "todo-001", "title": "Renew parking permit", "priority": "low", "due_date": "2031-05-20",
             "status": "open", "notes": "", "created_at": "2031-05-01T08:00:00Z"},
            {"id": "todo-002", "title": "Draft Q3 roadmap", "priority": "high", "due_date": "2031-05-15",
             "status": "open", "notes": "align with sales", "created_at": "2031-05-02T08:00:00Z"},
            {"id": "todo-003", "title": "Order team lunch", "priority": "low", "due_date": "2031-05-04",
             "status": "done", "notes": "", "created_at": "2031-05-03T08:00:00Z"},
        ],
    },
    "gmail": {
        "messages": [
            {"id": "msg-001", "from": "boss@acme.example", "to": "me@acme.example", "subject": "Q4 budget review",
             "body": "Please send the numbers by Friday.", "folder": "inbox", "is_read": False,
             "date": "2031-05-05", "received_at": "2031-05-05T08:00:00Z"},
            {"id": "msg-002", "from": "deals@shop.example", "to": "me@acme.example", "subject": "Weekly deals",
             "body": "Half price on everything.", "folder": "inbox", "is_read": True,
             "date": "2031-05-05", "received_at": "2031-05-05T09:00:00Z"},
            {"id": "msg-003", "from": "boss@acme.example", "to": "me@acme.example", "subject": "Offsite agenda",
             "body": "Budget is tight this year.", "folder": "archive", "is_read": True,
             "date": "2031-05-01", "received_at": "2031-05-01T12:00:00Z"},
        ],
        "sent": [
            {"id": "sent-001", "to": "boss@acme.example", "cc": [], "subject": "Re: Offsite agenda",
             "body": "Noted.", "in_reply_to": "msg-003", "sent_at": "2031-05-01T12:30:00Z"},
        ],
        "drafts": [],
    },
    "calendar": {
        "events": [
            {"id": "evt-001", "title": "Standup", "start": "2031-05-07T09:30", "duration_minutes": 15,
             "attendees": ["alice@corp.example", "bob@corp.example"], "location": "Room 1", "description": "",
             "created_at": "2031-05-01T08:00:00Z"},
            {"id": "evt-002", "title": "Budget review", "start": "2031-05-08T14:00", "duration_minutes": 60,
             "attendees": ["carol@corp.example"], "location": "Room 2", "description": "Q4 numbers",
             "created_at": "2031-05-02T08:00:00Z"},
        ],
    },
    "notes": {
        "notes": [
            {"id": "note-001", "title": "Groceries", "body": "milk, eggs", "folder": "personal",
             "tags": ["shopping"], "pinned": True, "created_at": "2031-05-01T08:00:00Z", "updated_at": ""},
            {"id": "note-002", "title": "Meeting notes", "body": "Discussed the budget", "folder": "work",
             "tags": ["q4", "budget"], "pinned": False, "created_at": "2031-05-02T08:00:00Z", "updated_at": ""},
            {"id": "note-003", "title": "Ideas", "body": "A budget app", "folder": "personal",
             "tags": [], "pinned": False, "created_at": "2031-05-03T08:00:00Z", "updated_at": ""},
        ],
    },
    "crm": {
        "customers": [
            {"id": "cust-001", "name": "Dana Fox", "company": "Acme Corp", "email": "dana@acme.example",
             "phone": "+1-555-1001", "status": "active", "tier": "gold", "owner": "sam", "notes": "renewal in June"},
            {"id": "cust-002", "name": "Eli Gold", "company": "Globex", "email": "eli@globex.example",
             "phone": "+1-555-1002", "status": "lead", "tier": "standard", "owner": "sam", "notes": ""},
            {"id": "cust-003", "name": "Fay Hill", "company": "Initech", "email": "fay@initech.example",
             "phone": "+1-555-1003", "status": "churned", "tier": "standard", "owner": "kim", "notes": ""},
        ],
        "deals": [
            {"id": "deal-001", "customer_id": "cust-001", "title": "Acme renewal", "amount": 12000,
             "stage": "negotiation", "close_date": "2031-06-30", "owner": "sam", "created_at": "2031-04-01T08:00:00Z"},
            {"id": "deal-002", "customer_id": "cust-002", "title": "Globex pilot", "amount": 3000,
             "stage": "prospecting", "close_date": "", "owner": "sam", "created_at": "2031-04-02T08:00:00Z"},
        ],
    },
    "helpdesk": {
        "tickets": [
            {"id": "tkt-001", "subject": "Cannot log in", "description": "Password reset email never arrives",
             "customer_email": "dana@acme.example", "status": "open", "priority": "high", "assignee": "lee",
             "created_at": "2031-05-01T08:00:00Z", "updated_at": ""},
            {"id": "tkt-002", "subject": "Invoice question", "description": "Charged twice in April",
             "customer_email": "eli@globex.example", "status": "pending", "priority": "normal", "assignee": "",
             "created_at": "2031-05-02T08:00:00Z", "updated_at": ""},
            {"id": "tkt-003", "subject": "Feature request", "description": "Dark mode for login page",
             "customer_email": "fay@initech.example", "status": "closed", "priority": "low", "assignee": "lee",
             "created_at": "2031-05-03T08:00:00Z", "updated_at": ""},
        ],
        "replies": [
            {"id": "rpl-001", "ticket_id": "tkt-001", "body": "Looking into it.", "internal": False,
             "created_at": "2031-05-01T09:00:00Z"},
        ],
    },
    "inventory": {
        "items": [
            {"id": "sku-001", "name": "USB-C cable", "category": "cables", "quantity": 40, "price": 9.5,
             "reorder_level": 20, "warehouse": "north"},
            {"id": "sku-002", "name": "HDMI cable", "category": "cables", "quantity": 5, "price": 12.0,
             "reorder_level": 10, "warehouse": "south"},
            {"id": "sku-003", "name": "Wireless mouse", "category": "peripherals", "quantity": 0, "price": 25.0,
             "reorder_level": 5, "warehouse": "north"},
        ],
        "orders": [
            {"id": "ord-001", "item_id": "sku-002", "quantity": 50, "supplier": "CableCo", "status": "shipped",
             "created_at": "2031-05-01T08:00:00Z"},
        ],
    },
    "finance": {
        "transactions": [
            {"id": "txn-001", "date": "2031-05-01", "description": "Office rent", "amount": 2500.0, "type": "debit",
             "category": "rent", "account": "operating", "created_at": "2031-05-01T08:00:00Z"},
            {"id": "txn-002", "date": "2031-05-02", "description": "Acme payment", "amount": 12000.0,
             "type": "credit", "category": "sales", "account": "operating", "created_at": "2031-05-02T08:00:00Z"},
            {"id": "txn-003", "date": "2031-05-02", "description": "Team lunch", "amount": 180.0, "type": "debit",
             "category": "meals", "account": "card", "created_at": "2031-05-02T09:00:00Z"},
        ],
        "invoices": [
            {"id": "inv-001", "customer": "Acme Corp", "customer_email": "ap@acme.example",
             "description": "May retainer", "amount": 12000.0, "currency": "USD", "due_date": "2031-05-31",
             "status": "unpaid", "issued_at": "2031-05-01T08:00:00Z"},
            {"id": "inv-002", "customer": "Globex", "customer_email": "ap@globex.example",
             "description": "Pilot", "amount": 3000.0, "currency": "EUR", "due_date": "2031-04-30",
             "status": "paid", "issued_at": "2031-04-01T08:00:00Z"},
        ],
    },
    "kb": {
        "articles": [
            {"id": "kb-001", "title": "Resetting your password", "body": "Use the forgot password link.",
             "category": "account", "tags": ["login", "password"], "status": "published", "author": "lee",
             "updated_at": "2031-04-01T08:00:00Z"},
            {"id": "kb-002", "title": "Refund policy", "body": "Refunds within 30 days.",
             "category": "billing", "tags": ["refund"], "status": "published", "author": "kim",
             "updated_at": "2031-04-02T08:00:00Z"},
            {"id": "kb-003", "title": "Two-factor login", "body": "Draft: enabling 2FA.",
             "category": "account", "tags": ["login", "security"], "status": "draft", "author": "lee",
             "updated_at": "2031-04-03T08:00:00Z"},
        ],
    },
}

# --------------------------------------------------------------------------- one example per endpoint
# endpoint -> (args, expected): for list/search the ids returned, in order; for create the new id;
# for get/update/delete None (the target is the id parameter).

EXAMPLES: dict[str, tuple[dict[str, Any], Any]] = {
    # contacts
    "/contacts/search": ({"query": "ENGINEER"}, ["c-1", "c-3"]),
    "/contacts/list": ({"department": "Sales"}, ["c-2"]),
    "/contacts/get": ({"contact_id": "c-2"}, None),
    "/contacts/create": ({"name": "Dan Ford", "email": "dan@corp.example"}, "c-4"),
    "/contacts/update": ({"contact_id": "c-3", "title": "Director"}, None),
    "/contacts/send_message": ({"contact_id": "c-2", "message": "Lunch at noon?"}, "msg-002"),
    "/contacts/messages": ({"contact_id": "c-1"}, ["msg-001"]),
    # todo
    "/todo/tasks": ({"status": "open"}, ["todo-001", "todo-002"]),
    "/todo/tasks/search": ({"query": "sales"}, ["todo-002"]),
    "/todo/tasks/get": ({"task_id": "todo-003"}, None),
    "/todo/tasks/create": ({"title": "Book venue", "due_date": "2031-06-01"}, "todo-004"),
    "/todo/tasks/update": ({"task_id": "todo-001", "status": "done"}, None),
    "/todo/tasks/delete": ({"task_id": "todo-002"}, None),
    # gmail
    "/gmail/messages": ({"folder": "inbox", "from": "boss@acme.example"}, ["msg-001"]),
    "/gmail/messages/get": ({"message_id": "msg-003"}, None),
    "/gmail/messages/search": ({"query": "budget"}, ["msg-001", "msg-003"]),
    "/gmail/messages/update": ({"message_id": "msg-002", "folder": "trash"}, None),
    "/gmail/send": ({"to": "boss@acme.example", "subject": "Re: Q4 budget review", "body": "Attached.",
                     "in_reply_to": "msg-001"}, "sent-002"),
    "/gmail/sent": ({"to": "boss@acme.example"}, ["sent-001"]),
    "/gmail/drafts/create": ({"to": "cfo@acme.example", "body": "Draft numbers"}, "draft-001"),
    # calendar
    "/calendar/events": ({"location": "Room 2"}, ["evt-002"]),
    "/calendar/events/search": ({"query": "2031-05-07"}, ["evt-001"]),
    "/calendar/events/get": ({"event_id": "evt-001"}, None),
    "/calendar/events/create": ({"title": "1:1 with Carol", "start": "2031-05-09T10:00", "duration_minutes": 30,
                                 "attendees": ["carol@corp.example"]}, "evt-003"),
    "/calendar/events/update": ({"event_id": "evt-002", "start": "2031-05-08T15:00"}, None),
    "/calendar/events/delete": ({"event_id": "evt-001"}, None),
    # notes
    "/notes/list": ({"folder": "personal"}, ["note-001", "note-003"]),
    "/notes/search": ({"query": "budget"}, ["note-002", "note-003"]),
    "/notes/get": ({"note_id": "note-002"}, None),
    "/notes/create": ({"title": "Books", "body": "Dune", "tags": ["reading"]}, "note-004"),
    "/notes/update": ({"note_id": "note-003", "pinned": True}, None),
    "/notes/delete": ({"note_id": "note-001"}, None),
    # crm
    "/crm/customers": ({"owner": "sam"}, ["cust-001", "cust-002"]),
    "/crm/customers/search": ({"query": "globex"}, ["cust-002"]),
    "/crm/customers/get": ({"customer_id": "cust-003"}, None),
    "/crm/customers/update": ({"customer_id": "cust-002", "status": "active", "tier": "gold"}, None),
    "/crm/deals": ({"customer_id": "cust-001"}, ["deal-001"]),
    "/crm/deals/create": ({"customer_id": "cust-003", "title": "Initech win-back", "amount": 5000}, "deal-003"),
    "/crm/deals/update": ({"deal_id": "deal-001", "stage": "won"}, None),
    # helpdesk
    "/helpdesk/tickets": ({"assignee": "lee"}, ["tkt-001", "tkt-003"]),
    "/helpdesk/tickets/get": ({"ticket_id": "tkt-002"}, None),
    "/helpdesk/tickets/search": ({"query": "PASSWORD", "status": "open"}, ["tkt-001"]),
    "/helpdesk/tickets/create": ({"subject": "Export broken", "customer_email": "dana@acme.example"}, "tkt-004"),
    "/helpdesk/tickets/update": ({"ticket_id": "tkt-002", "assignee": "kim", "priority": "urgent"}, None),
    "/helpdesk/tickets/reply": ({"ticket_id": "tkt-002", "body": "Refund issued."}, "rpl-002"),
    "/helpdesk/tickets/replies": ({"ticket_id": "tkt-001"}, ["rpl-001"]),
    # inventory
    "/inventory/items": ({"category": "cables"}, ["sku-001", "sku-002"]),
    "/inventory/items/search": ({"query": "mouse"}, ["sku-003"]),
    "/inventory/items/get": ({"item_id": "sku-001"}, None),
    "/inventory/items/update": ({"item_id": "sku-003", "quantity": 12}, None),
    "/inventory/orders/create": ({"item_id": "sku-003", "quantity": 20, "supplier": "Periph Inc"}, "ord-002"),
    "/inventory/orders": ({"item_id": "sku-002"}, ["ord-001"]),
    # finance
    "/finance/transactions": ({"type": "debit"}, ["txn-001", "txn-003"]),
    "/finance/transactions/get": ({"transaction_id": "txn-002"}, None),
    "/finance/transactions/create": ({"date": "2031-05-06", "description": "Printer paper", "amount": 42.5,
                                      "type": "debit", "category": "supplies"}, "txn-004"),
    "/finance/invoices": ({"status": "unpaid"}, ["inv-001"]),
    "/finance/invoices/get": ({"invoice_id": "inv-002"}, None),
    "/finance/invoices/create": ({"customer": "Initech", "amount": 800, "due_date": "2031-06-30"}, "inv-003"),
    "/finance/invoices/update": ({"invoice_id": "inv-001", "status": "paid"}, None),
    # kb
    "/kb/articles": ({"category": "account", "status": "published"}, ["kb-001"]),
    "/kb/articles/search": ({"query": "login"}, ["kb-001", "kb-003"]),
    "/kb/articles/get": ({"article_id": "kb-002"}, None),
    "/kb/articles/create": ({"title": "Exporting data", "body": "Use Settings > Export."}, "kb-004"),
    "/kb/articles/update": ({"article_id": "kb-003", "status": "published"}, None),
}

ALL_OPS = [(name, op) for name, spec in catalogue().items() for op in spec.operations]
OP_IDS = [op.endpoint for _, op in ALL_OPS]


def example(endpoint: str) -> dict[str, Any]:
    return copy.deepcopy(EXAMPLES[endpoint][0])


def wrong_type_value(schema: dict[str, Any]) -> Any:
    """A value of the wrong JSON type for ``schema``."""
    return 7 if schema.get("type") in ("string", "array", "boolean", "object") else "seven"


# --------------------------------------------------------------------------- catalogue shape


def test_catalogue_size_and_contacts_endpoints():
    cat = catalogue()
    assert len(cat) >= 10
    assert sum(len(s.operations) for s in cat.values()) >= 50
    assert {"contacts", "todo", "gmail", "calendar", "notes", "crm", "helpdesk", "inventory", "finance",
            "kb"} <= set(cat)
    assert "/contacts/send_message" in cat["contacts"].endpoints
    assert "/contacts/send" not in cat["contacts"].endpoints
    assert find_operation("/contacts/send") is None


def test_examples_cover_every_endpoint_exactly():
    endpoints = {op.endpoint for _, op in ALL_OPS}
    assert set(EXAMPLES) - endpoints == set(), "examples for endpoints that no longer exist"
    assert endpoints - set(EXAMPLES) == set(), "operations without an example call in EXAMPLES"


def test_seed_covers_every_service_and_collection():
    for name, spec in catalogue().items():
        assert set(SEED[name]) == set(spec.collections), name
        for coll, records in SEED[name].items():
            fields = set(spec.collections[coll].fields)
            for rec in records:
                assert set(rec) <= fields, (name, coll, rec["id"])


@pytest.mark.parametrize(("service", "op"), ALL_OPS, ids=OP_IDS)
def test_operation_conventions(service: str, op):
    spec: ServiceSpec = catalogue()[service]
    assert re.fullmatch(r"[a-z][a-z0-9_]*", op.name)
    Tool(name=default_tool_name(service, op), service=service, endpoint=op.endpoint)  # valid tool name
    assert op.description and len(op.description) <= 140
    params = op.parameters
    assert params["type"] == "object"
    assert params.get("additionalProperties") is False
    props = set(params.get("properties", {}))
    assert set(params.get("required", [])) <= props
    assert set(op.filters) <= props
    assert set(op.refs) <= props
    fields = set(spec.collections[op.collection].fields)
    assert set(op.filters.values()) <= fields
    assert set(op.search_fields) <= fields
    if op.effect == "search":
        assert "query" in params.get("required", [])
    if op.id_param:
        assert op.id_param.endswith("_id")
        assert op.id_param in params["required"]
    if op.effect in ("create", "update"):
        written = {op.field_for(p) for p in props if p != op.id_param}
        assert written <= fields, written - fields
        assert set(op.defaults) <= fields
    if op.timestamp_field:
        assert op.timestamp_field in fields
    for target in op.refs.values():
        ref_service, ref_coll, *_ = target.split(".")
        assert ref_coll in catalogue()[ref_service].collections


def test_target_param_is_the_id_param_of_an_operation_on_one_record():
    """get, update and delete name their record by ``id_param``; the other effects have none to give."""
    effects = set()
    for spec in catalogue().values():
        for op in spec.operations:
            effects.add(op.effect)
            if op.effect in ("get", "update", "delete"):
                assert op.target_param == op.id_param
            else:
                with pytest.raises(ValueError, match=f"{op.endpoint}: effect {op.effect} names no record"):
                    _ = op.target_param
    assert {"get", "update", "delete", "create", "search"} <= effects


# --------------------------------------------------------------------------- generic behaviour per operation


@pytest.mark.parametrize(("service", "op"), ALL_OPS, ids=OP_IDS)
def test_happy_path(service: str, op):
    args, expected = EXAMPLES[op.endpoint]
    world = make_world(service)
    tool = default_tool_name(service, op)
    coll = catalogue()[service].collections[op.collection]
    before = copy.deepcopy(world.state)
    seed_records = {r["id"]: r for r in SEED[service][op.collection]}

    result = world.call(tool, copy.deepcopy(args))

    assert result.status == 200, result.body
    entry = world.audit[-1]
    assert (entry.tool, entry.endpoint, entry.args, entry.status) == (tool, op.endpoint, args, 200)
    assert entry.result == result.body
    records = world.state[service][op.collection]

    if op.effect in ("list", "search"):
        hits = result.body[op.collection]
        assert ids(hits) == expected
        assert result.body["total"] == len(expected)
        assert hits == [seed_records[i] for i in expected]
        assert world.state == before
    elif op.effect == "get":
        assert result.body == {coll.record: seed_records[args[op.id_param]]}
        assert world.state == before
    elif op.effect == "create":
        record = result.body[coll.record]
        assert record["id"] == expected
        for param, value in args.items():
            assert record[op.field_for(param)] == value
        for field, default in op.defaults.items():
            if not any(op.field_for(p) == field for p in args):
                assert record[field] == default
        if op.timestamp_field:
            assert record[op.timestamp_field] == clock(0)
        assert records[-1] == record
        assert records[:-1] == before[service][op.collection]
    elif op.effect == "update":
        target = args[op.id_param]
        record = result.body[coll.record]
        expected_record = dict(seed_records[target])
        expected_record.update({op.field_for(p): v for p, v in args.items() if p != op.id_param})
        if op.timestamp_field:
            expected_record[op.timestamp_field] = clock(0)
        assert record == expected_record
        assert [r for r in records if r["id"] == target] == [expected_record]
        assert [r for r in records if r["id"] != target] == [
            r for r in before[service][op.collection] if r["id"] != target]
    else:
        target = args[op.id_param]
        assert result.body == {"deleted": target}
        assert ids(records) == [i for i in ids(before[service][op.collection]) if i != target]
        assert world.call(default_tool_name(service, op), args).status == 404


@pytest.mark.parametrize(("service", "op"), ALL_OPS, ids=OP_IDS)
def test_same_call_same_result_in_fresh_worlds(service: str, op):
    tool = default_tool_name(service, op)
    first = make_world(service).call(tool, example(op.endpoint))
    second = make_world(service).call(tool, example(op.endpoint))
    assert first.body == second.body


@pytest.mark.parametrize(("service", "op"), ALL_OPS, ids=OP_IDS)
def test_bad_input_is_400_naming_the_field(service: str, op):
    world = make_world(service)
    tool = default_tool_name(service, op)
    props = op.parameters.get("properties", {})

    res = world.call(tool, {**example(op.endpoint), "bogus": 1})
    assert res.status == 400
    assert "'bogus'" in res.body["error"]["message"]
    assert all(p in res.body["error"]["message"] for p in props)

    for field in op.parameters.get("required", []):
        args = example(op.endpoint)
        args.pop(field, None)
        res = world.call(tool, args)
        assert res.status == 400
        assert f"missing required field {field!r}" in res.body["error"]["message"]

    for field, schema in props.items():
        res = world.call(tool, {**example(op.endpoint), field: wrong_type_value(schema)})
        assert res.status == 400, field
        assert f"invalid field {field!r}" in res.body["error"]["message"]

    assert world.state == make_world(service).state
    assert [e.status for e in world.audit] == [400] * len(world.audit)


@pytest.mark.parametrize(
    ("service", "op"), [(s, op) for s, op in ALL_OPS if op.id_param], ids=[op.endpoint for _, op in ALL_OPS if op.id_param])
def test_unknown_id_is_404(service: str, op):
    world = make_world(service)
    res = world.call(default_tool_name(service, op), {**example(op.endpoint), op.id_param: "zzz-999"})
    assert res.status == 404
    assert op.id_param in res.body["error"]["message"]
    assert "zzz-999" in res.body["error"]["message"]
    assert world.state == make_world(service).state


@pytest.mark.parametrize(
    ("service", "op"), [(s, op) for s, op in ALL_OPS if op.refs], ids=[op.endpoint for _, op in ALL_OPS if op.refs])
def test_refs_violation_is_404(service: str, op):
    world = make_world(service)
    for param in op.refs:
        res = world.call(default_tool_name(service, op), {**example(op.endpoint), param: "nope-999"})
        assert res.status == 404
        assert repr(param) in res.body["error"]["message"]
    assert world.state == make_world(service).state


@pytest.mark.parametrize(("service", "op"), ALL_OPS, ids=OP_IDS)
def test_fault_on_first_call_then_success(service: str, op):
    tool = default_tool_name(service, op)
    world = make_world(service, faults=[Fault(tool=tool, on_call=1, status=503)])
    first = world.call(tool, example(op.endpoint))
    assert first.status == 503
    assert first.body["error"]["status"] == 503
    assert world.state == make_world(service).state  # the faulted call changed nothing
    second = world.call(tool, example(op.endpoint))
    assert second.status == 200, second.body
    assert [(e.tool, e.status) for e in world.audit] == [(tool, 503), (tool, 200)]
    if op.effect == "create" and op.timestamp_field:  # the clock counts the failed call too
        assert second.body[catalogue()[service].collections[op.collection].record][op.timestamp_field] == clock(1)


@pytest.mark.parametrize("service", sorted(catalogue()))
def test_unknown_endpoint_lists_real_endpoints(service: str):
    world = make_world(service)
    res = world.call_endpoint(f"/{service}/frobnicate", {})
    assert res.status == 404
    assert res.body["error"]["valid_endpoints"] == catalogue()[service].endpoints
    for endpoint in catalogue()[service].endpoints:
        assert endpoint in res.body["error"]["message"]
    assert world.audit[-1].endpoint == f"/{service}/frobnicate"
    assert world.audit[-1].tool is None


@pytest.mark.parametrize("service", sorted(catalogue()))
def test_reset_restores_state_audit_and_faults(service: str):
    spec = catalogue()[service]
    first_write = next(op for op in spec.operations if op.access == "write")
    tool = default_tool_name(service, first_write)
    world = make_world(service, faults=[Fault(tool=tool, on_call=1)])
    initial = copy.deepcopy(world.state)
    assert world.call(tool, example(first_write.endpoint)).status == 503
    for op in spec.operations:
        if op.access == "write":
            world.call(default_tool_name(service, op), example(op.endpoint))
    assert world.state != initial
    world.reset()
    assert world.state == initial == world.initial
    assert world.audit == []
    assert world.call(tool, example(first_write.endpoint)).status == 503  # fault counter reset too


def test_world_does_not_mutate_seed():
    pristine = copy.deepcopy(SEED)
    for service, spec in catalogue().items():
        world = make_world(service)
        for op in spec.operations:
            world.call(default_tool_name(service, op), example(op.endpoint))
    assert pristine == SEED


def test_audit_records_every_call_good_or_bad():
    world = make_world("todo")
    world.call("todo_get_task", {"task_id": "todo-001"})
    world.call("todo_get_task", {"task_id": "todo-999"})
    world.call("todo_create_task", {"priority": "high"})
    world.call("todo_nonexistent", {})
    world.call_endpoint("/todo/tasks", {"status": "done"})
    assert [(e.tool, e.endpoint, e.status) for e in world.audit] == [
        ("todo_get_task", "/todo/tasks/get", 200),
        ("todo_get_task", "/todo/tasks/get", 404),
        ("todo_create_task", "/todo/tasks/create", 400),
        ("todo_nonexistent", "", 404),
        (None, "/todo/tasks", 200),
    ]
    assert world.audit[0].args == {"task_id": "todo-001"}
    assert world.audit[0].result["task"]["title"] == "Renew parking permit"
    assert world.audit[4].result["total"] == 1


# --------------------------------------------------------------------------- contacts and todo


def test_contacts_unknown_endpoint_names_send_message():
    world = make_world("contacts")
    res = world.call_endpoint("/contacts/send", {"contact_id": "c-1", "message": "hi"})
    assert res.status == 404
    assert "/contacts/send_message" in res.body["error"]["message"]
    assert world.state["contacts"]["messages"] == SEED["contacts"]["messages"]


def test_contacts_send_message_refs_and_ids():
    world = make_world("contacts")
    bad = world.call("contacts_send_message", {"contact_id": "c-9", "message": "hi"})
    assert bad.status == 404 and "'contact_id'" in bad.body["error"]["message"]
    ok = world.call("contacts_send_message", {"contact_id": "c-3", "message": "hi"})
    assert ok.body["message"] == {"id": "msg-002", "contact_id": "c-3", "message": "hi", "sent_at": clock(1)}
    created = world.call("contacts_create", {"name": "Eve", "email": "eve@corp.example"}).body["contact"]
    assert created == {"id": "c-4", "name": "Eve", "email": "eve@corp.example", "department": "", "title": "",
                       "phone": ""}
    assert world.call("contacts_create", {"name": "Eve", "email": "not-an-email"}).status == 400


def test_todo_create_ids_defaults_and_clock():
    world = make_world("todo")
    world.call("todo_list_tasks", {})
    a = world.call("todo_create_task", {"title": "A"}).body["task"]
    b = world.call("todo_create_task", {"title": "B", "priority": "high"}).body["task"]
    assert a == {"id": "todo-004", "title": "A", "priority": "medium", "due_date": "", "status": "open",
                 "notes": "", "created_at": clock(1)}
    assert (b["id"], b["priority"], b["created_at"]) == ("todo-005", "high", clock(2))
    res = world.call("todo_create_task", {"title": "C", "due_date": "next week"})
    assert res.status == 400 and "'due_date'" in res.body["error"]["message"]
    res = world.call("todo_update_task", {"task_id": "todo-001", "status": "finished"})
    assert res.status == 400 and "'status'" in res.body["error"]["message"]


def test_clock_follows_package_now_not_wall_time():
    world = make_world("todo", now="2020-01-01T00:00:00Z")
    for _ in range(3):
        world.call("todo_list_tasks", {})
    assert world.call("todo_create_task", {"title": "X"}).body["task"]["created_at"] == "2020-01-01T00:00:03Z"


def test_create_after_gap_and_foreign_ids_uses_highest_number():
    state = {"todo": {"tasks": [{"id": "todo-007", "title": "a"}, {"id": "legacy-99", "title": "b"},
                                {"id": "todo-002", "title": "c"}]}}
    world = make_world("todo", state=state)
    assert world.call("todo_create_task", {"title": "d"}).body["task"]["id"] == "todo-008"
    empty = make_world("todo", state={})
    assert empty.call("todo_create_task", {"title": "first"}).body["task"]["id"] == "todo-001"


def test_search_and_list_limit():
    world = make_world("gmail")
    res = world.call("gmail_list_messages", {"limit": 2})
    assert ids(res.body["messages"]) == ["msg-001", "msg-002"]
    everything = world.call("gmail_list_messages", {})
    assert res.body["total"] == everything.body["total"] > 2  # total counts every match, not the page
    assert world.call("gmail_list_messages", {"limit": 0}).status == 400


# --------------------------------------------------------------------------- gmail


def test_gmail_filters_search_and_update():
    world = make_world("gmail")
    assert ids(world.call("gmail_list_messages", {"folder": "inbox"}).body["messages"]) == ["msg-001", "msg-002"]
    assert ids(world.call("gmail_list_messages", {"is_read": False}).body["messages"]) == ["msg-001"]
    assert world.call("gmail_list_messages", {"from": "nobody@x.example"}).body == {"messages": [], "total": 0}
    hits = world.call("gmail_search_messages", {"query": "BUDGET", "folder": "archive"}).body
    assert ids(hits["messages"]) == ["msg-003"] and hits["total"] == 1
    res = world.call("gmail_search_messages", {"query": "x", "folder": "outbox"})
    assert res.status == 400 and "'folder'" in res.body["error"]["message"]
    updated = world.call("gmail_update_message", {"message_id": "msg-001", "is_read": True}).body["message"]
    assert updated == {**SEED["gmail"]["messages"][0], "is_read": True}


def test_gmail_send_and_drafts():
    world = make_world("gmail")
    res = world.call("gmail_send", {"to": "a@b.example", "subject": "Hi", "body": "Hello"})
    assert res.body["message"] == {"id": "sent-002", "to": "a@b.example", "cc": [], "subject": "Hi",
                                   "body": "Hello", "in_reply_to": "", "sent_at": clock(0)}
    assert world.state["gmail"]["messages"] == SEED["gmail"]["messages"]  # inbox untouched
    bad = world.call("gmail_send", {"to": "a@b.example", "subject": "Hi", "body": "x", "in_reply_to": "msg-404"})
    assert bad.status == 404 and "'in_reply_to'" in bad.body["error"]["message"]
    bad = world.call("gmail_send", {"to": "not an address", "subject": "Hi", "body": "x"})
    assert bad.status == 400 and "'to'" in bad.body["error"]["message"]
    bad = world.call("gmail_send", {"to": "a@b.example", "cc": ["ok@b.example", "nope"], "subject": "s", "body": "x"})
    assert bad.status == 400 and "'cc.1'" in bad.body["error"]["message"]
    assert ids(world.call("gmail_list_sent", {}).body["sent"]) == ["sent-001", "sent-002"]
    draft = world.call("gmail_create_draft", {"body": "later"}).body["draft"]
    assert draft == {"id": "draft-001", "to": "", "subject": "", "body": "later", "created_at": clock(5)}


# --------------------------------------------------------------------------- calendar


def test_calendar_create_update_delete():
    world = make_world("calendar")
    created = world.call("calendar_create_event", {"title": "Retro", "start": "2031-05-07T16:00",
                                                   "duration_minutes": 45}).body["event"]
    assert created == {"id": "evt-003", "title": "Retro", "start": "2031-05-07T16:00", "duration_minutes": 45,
                       "attendees": [], "location": "", "description": "", "created_at": clock(0)}
    on_day = world.call("calendar_search_events", {"query": "2031-05-07"}).body
    assert ids(on_day["events"]) == ["evt-001", "evt-003"] and on_day["total"] == 2
    assert ids(world.call("calendar_search_events", {"query": "carol@"}).body["events"]) == ["evt-002"]
    upd = world.call("calendar_update_event", {"event_id": "evt-001", "location": "Room 9"}).body["event"]
    assert upd == {**SEED["calendar"]["events"][0], "location": "Room 9"}
    assert world.call("calendar_delete_event", {"event_id": "evt-003"}).body == {"deleted": "evt-003"}
    assert world.call("calendar_get_event", {"event_id": "evt-003"}).status == 404
    assert ids(world.state["calendar"]["events"]) == ["evt-001", "evt-002"]


@pytest.mark.parametrize(("args", "field"), [
    ({"title": "x", "start": "2031-05-07 10:00", "duration_minutes": 30}, "start"),
    ({"title": "x", "start": "2031-05-07T25:00", "duration_minutes": 30}, "start"),
    ({"title": "x", "start": "2031-05-07T10:00", "duration_minutes": 0}, "duration_minutes"),
    ({"title": "x", "start": "2031-05-07T10:00", "duration_minutes": 30, "attendees": ["bob"]}, "attendees.0"),
    ({"title": "", "start": "2031-05-07T10:00", "duration_minutes": 30}, "title"),
])
def test_calendar_create_rejects_bad_values(args, field):
    world = make_world("calendar")
    res = world.call("calendar_create_event", args)
    assert res.status == 400
    assert f"invalid field {field!r}" in res.body["error"]["message"]
    assert world.state["calendar"]["events"] == SEED["calendar"]["events"]


# --------------------------------------------------------------------------- notes


def test_notes_update_timestamps_and_delete():
    world = make_world("notes")
    created = world.call("notes_create_note", {"title": "Plan"}).body["note"]
    assert created == {"id": "note-004", "title": "Plan", "body": "", "folder": "", "tags": [], "pinned": False,
                       "created_at": clock(0), "updated_at": ""}
    upd = world.call("notes_update_note", {"note_id": "note-004", "body": "step 1"}).body["note"]
    assert upd == {**created, "body": "step 1", "updated_at": clock(1)}
    assert ids(world.call("notes_list_notes", {"pinned": True}).body["notes"]) == ["note-001"]
    assert ids(world.call("notes_search_notes", {"query": "shopping"}).body["notes"]) == ["note-001"]
    world.call("notes_delete_note", {"note_id": "note-002"})
    assert ids(world.state["notes"]["notes"]) == ["note-001", "note-003", "note-004"]
    assert world.call("notes_delete_note", {"note_id": "note-002"}).status == 404


# --------------------------------------------------------------------------- crm


def test_crm_deals_and_customers():
    world = make_world("crm")
    bad = world.call("crm_create_deal", {"customer_id": "cust-404", "title": "x", "amount": 1})
    assert bad.status == 404 and "'customer_id'" in bad.body["error"]["message"]
    bad = world.call("crm_create_deal", {"customer_id": "cust-001", "title": "x", "amount": -5})
    assert bad.status == 400 and "'amount'" in bad.body["error"]["message"]
    deal = world.call("crm_create_deal", {"customer_id": "cust-001", "title": "Upsell", "amount": 900}).body["deal"]
    assert deal == {"id": "deal-003", "customer_id": "cust-001", "title": "Upsell", "amount": 900,
                    "stage": "prospecting", "close_date": "", "owner": "", "created_at": clock(2)}
    assert ids(world.call("crm_list_deals", {"customer_id": "cust-001"}).body["deals"]) == ["deal-001", "deal-003"]
    assert ids(world.call("crm_list_deals", {"stage": "prospecting"}).body["deals"]) == ["deal-002", "deal-003"]
    bad = world.call("crm_update_deal", {"deal_id": "deal-001", "stage": "closed"})
    assert bad.status == 400 and "'stage'" in bad.body["error"]["message"]
    bad = world.call("crm_update_customer", {"customer_id": "cust-001", "name": "New"})
    assert bad.status == 400 and "unknown field 'name'" in bad.body["error"]["message"]
    assert ids(world.call("crm_list_customers", {"status": "churned"}).body["customers"]) == ["cust-003"]


# --------------------------------------------------------------------------- helpdesk


def test_helpdesk_ticket_lifecycle():
    world = make_world("helpdesk")
    tkt = world.call("helpdesk_create_ticket", {"subject": "Slow", "customer_email": "a@b.example",
                                                "priority": "high"}).body["ticket"]
    assert tkt == {"id": "tkt-004", "subject": "Slow", "description": "", "customer_email": "a@b.example",
                   "status": "open", "priority": "high", "assignee": "", "created_at": clock(0), "updated_at": ""}
    upd = world.call("helpdesk_update_ticket", {"ticket_id": "tkt-004", "status": "resolved"}).body["ticket"]
    assert upd == {**tkt, "status": "resolved", "updated_at": clock(1)}
    rpl = world.call("helpdesk_reply_ticket", {"ticket_id": "tkt-004", "body": "Fixed", "internal": True})
    assert rpl.body["reply"] == {"id": "rpl-002", "ticket_id": "tkt-004", "body": "Fixed", "internal": True,
                                 "created_at": clock(2)}
    bad = world.call("helpdesk_reply_ticket", {"ticket_id": "tkt-404", "body": "x"})
    assert bad.status == 404 and "'ticket_id'" in bad.body["error"]["message"]
    assert ids(world.call("helpdesk_list_replies", {"ticket_id": "tkt-004"}).body["replies"]) == ["rpl-002"]
    bad = world.call("helpdesk_update_ticket", {"ticket_id": "tkt-001", "priority": "critical"})
    assert bad.status == 400 and "'priority'" in bad.body["error"]["message"]
    assert ids(world.call("helpdesk_list_tickets", {"status": "resolved"}).body["tickets"]) == ["tkt-004"]


# --------------------------------------------------------------------------- inventory


def test_inventory_items_and_orders():
    world = make_world("inventory")
    upd = world.call("inventory_update_item", {"item_id": "sku-002", "price": 11.0}).body["item"]
    assert upd == {**SEED["inventory"]["items"][1], "price": 11.0}
    bad = world.call("inventory_update_item", {"item_id": "sku-002", "quantity": -1})
    assert bad.status == 400 and "'quantity'" in bad.body["error"]["message"]
    bad = world.call("inventory_create_order", {"item_id": "sku-404", "quantity": 5})
    assert bad.status == 404 and "'item_id'" in bad.body["error"]["message"]
    bad = world.call("inventory_create_order", {"item_id": "sku-001", "quantity": 0})
    assert bad.status == 400 and "'quantity'" in bad.body["error"]["message"]
    order = world.call("inventory_create_order", {"item_id": "sku-001", "quantity": 5}).body["order"]
    assert order == {"id": "ord-002", "item_id": "sku-001", "quantity": 5, "supplier": "", "status": "pending",
                     "created_at": clock(4)}
    assert ids(world.call("inventory_list_orders", {"status": "pending"}).body["orders"]) == ["ord-002"]
    assert ids(world.call("inventory_list_items", {"warehouse": "north"}).body["items"]) == ["sku-001", "sku-003"]


# --------------------------------------------------------------------------- finance


def test_finance_invoices_and_transactions():
    world = make_world("finance")
    inv = world.call("finance_create_invoice", {"customer": "Hooli", "amount": 99.5,
                                                "due_date": "2031-07-01"}).body["invoice"]
    assert inv == {"id": "inv-003", "customer": "Hooli", "customer_email": "", "description": "", "amount": 99.5,
                   "currency": "USD", "due_date": "2031-07-01", "status": "unpaid", "issued_at": clock(0)}
    upd = world.call("finance_update_invoice", {"invoice_id": "inv-003", "status": "void"}).body["invoice"]
    assert upd == {**inv, "status": "void"}
    bad = world.call("finance_update_invoice", {"invoice_id": "inv-003", "status": "overdue"})
    assert bad.status == 400 and "'status'" in bad.body["error"]["message"]
    bad = world.call("finance_create_transaction", {"date": "2031-05-06", "description": "x", "amount": 0,
                                                    "type": "debit"})
    assert bad.status == 400 and "'amount'" in bad.body["error"]["message"]
    bad = world.call("finance_create_transaction", {"date": "06/05/2031", "description": "x", "amount": 1,
                                                    "type": "debit"})
    assert bad.status == 400 and "'date'" in bad.body["error"]["message"]
    on_day = world.call("finance_list_transactions", {"date": "2031-05-02"}).body
    assert ids(on_day["transactions"]) == ["txn-002", "txn-003"] and on_day["total"] == 2
    assert ids(world.call("finance_list_transactions", {"limit": 1}).body["transactions"]) == ["txn-001"]
    assert ids(world.call("finance_list_invoices", {"customer": "Globex"}).body["invoices"]) == ["inv-002"]


# --------------------------------------------------------------------------- kb


def test_kb_articles():
    world = make_world("kb")
    art = world.call("kb_create_article", {"title": "SSO", "body": "Set up SSO.", "tags": ["login"]}).body["article"]
    assert art == {"id": "kb-004", "title": "SSO", "body": "Set up SSO.", "category": "", "tags": ["login"],
                   "status": "draft", "author": "", "updated_at": clock(0)}
    hits = world.call("kb_search_articles", {"query": "login", "status": "draft"}).body
    assert ids(hits["articles"]) == ["kb-003", "kb-004"] and hits["total"] == 2
    upd = world.call("kb_update_article", {"article_id": "kb-003", "status": "archived"}).body["article"]
    assert upd == {**SEED["kb"]["articles"][2], "status": "archived", "updated_at": clock(2)}
    assert ids(world.call("kb_list_articles", {"status": "archived"}).body["articles"]) == ["kb-003"]
    bad = world.call("kb_update_article", {"article_id": "kb-001", "author": "me"})
    assert bad.status == 400 and "unknown field 'author'" in bad.body["error"]["message"]


def test_a_deleted_id_is_never_handed_out_again():
    world = make_world("todo")
    highest = max(r["id"] for r in world.collection("todo.tasks"))
    assert world.call("todo_delete_task", {"task_id": highest}).ok
    created = world.call("todo_create_task", {"title": "new"}).body["task"]["id"]
    assert created != highest and created > highest
    world.reset()
    assert world.call("todo_create_task", {"title": "after reset"}).body["task"]["id"] == created


@pytest.mark.parametrize(("service", "operation", "said"), [
    ("config", "update_integration", "the slack connector keeps spamming everyone. switch it off pls"),
    ("config", "update_integration", "turn the webhook back on"),
    ("scheduler", "update_job", "turn off the nightly export"),
])
def test_claw_updates_are_asked_for_by_switching_or_turning_things_off_and_on(service: str, operation: str,
                                                                           said: str) -> None:
    spec = get_service(service, "claw")
    assert spec is not None
    op = next(o for o in spec.operations if o.name == operation)
    assert re.search(rf"\b(?:{intent_pattern(op.intents)})", said, re.IGNORECASE)
