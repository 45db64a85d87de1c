"""Grounding (pipeline/verify/grounding.py): a value the checks pin must be learnable, and a write
that carries weight must be asked for."""

from __future__ import annotations

import copy

import pytest

from pipeline.core.codes import Code
from pipeline.core.package import load_package
from pipeline.verify.claims import named_records
from pipeline.verify.grounding import grounding_findings
from tests.verify.builders import Data, messages, package, reference_run, tools, verify
from tests.verify.tickets import close_two, reply


def _call_note(request: str, notes: str = "9:30") -> Data:
    """A to-do whose notes hold the time of a call; the check pins those notes."""
    task = {"title": "Call the bank", "notes": notes}
    return package(request, {"todo": {"tasks": []}}, ["todo_create_task"],
                   [{"id": "made", "kind": "state_count", "weight": 1.0, "collection": "todo.tasks",
                     "scope": "created", "op": "==", "value": 1, "where": task}],
                   [{"call": "todo_create_task", "args": task}, {"answer": "Added the to-do Call the bank."}])


@pytest.mark.parametrize("notes", ["9:30", "09:30", "21:05"])
def test_a_clock_time_nothing_states_is_ungrounded(notes: str) -> None:
    found = grounding_findings(reference_run(_call_note("Add a to-do 'Call the bank' with the call's time in its notes.",
                                                        notes)))
    assert [(f.code, f.step, f.check, f.detail.get("kind")) for f in found] == [
        (Code.UNGROUNDED_VALUE, 0, None, "time"), (Code.UNGROUNDED_VALUE, None, "made", "time")]
    assert found[1].witness is not None and found[1].witness.holds


@pytest.mark.parametrize("said", ["9:30", "09:30", "half past nine", "9:30 am"])
def test_a_single_digit_hour_clock_time_the_request_states_is_grounded(said: str) -> None:
    request = f"Add a to-do 'Call the bank' for {said}, with that time in its notes."
    assert grounding_findings(reference_run(_call_note(request))) == []


def test_an_update_the_request_never_asks_for_that_carries_weight_is_unrequested() -> None:
    doc = reply({"$contains": "invoice copy"})  # the request asks for a reply, not for another priority
    doc["tools"] += tools("helpdesk_update_ticket")
    doc["checks"] = [{**doc["checks"][0], "weight": 0.5},
                     {"id": "urgent", "kind": "state_match", "weight": 0.5, "collection": "helpdesk.tickets",
                      "record_id": "tkt-004", "expect": {"priority": "urgent"}}]
    doc["reference"].insert(1, {"call": "helpdesk_update_ticket", "args": {"ticket_id": "tkt-004", "priority": "urgent"}})
    [finding] = grounding_findings(reference_run(doc))
    assert (finding.code, finding.step, finding.detail) == (Code.UNREQUESTED_WRITE, 1,
                                                            {"tool": "helpdesk_update_ticket", "score": 0.5})
    assert finding.witness is not None and finding.witness.holds


def _handover(request: str) -> Data:
    """Two of lena.ortiz's customers and her open deal go to marco.bianchi; a won deal stays."""
    customers = [{"id": f"cust-{n}", "name": name, "company": company, "email": f"{name.split()[0].lower()}@x.example",
                  "phone": "", "status": "active", "tier": "gold", "owner": owner, "notes": ""}
                 for n, name, company, owner in [(501, "Giulia Ferri", "Ferri Arredamenti", "lena.ortiz"),
                                                 (502, "Paolo Sarti", "Sarti Vini", "lena.ortiz"),
                                                 (503, "Marta Russo", "Russo Ottica", "mina.ode")]]
    deals = [{"id": f"deal-{n}", "customer_id": "cust-501", "title": title, "amount": 12000, "stage": stage,
              "owner": "lena.ortiz", "close_date": ""} for n, title, stage in [(701, "Showroom fit-out", "proposal"),
                                                                              (702, "Spring catalogue", "won")]]
    return package(request, {"crm": {"customers": customers, "deals": deals}},
                   ["crm_list_customers", "crm_update_customer", "crm_list_deals", "crm_update_deal"],
                   [{"id": f"cust-{n}", "kind": "state_match", "weight": 0.3, "collection": "crm.customers",
                     "record_id": f"cust-{n}", "expect": {"owner": "marco.bianchi"}} for n in (501, 502)]
                   + [{"id": "deal-701", "kind": "state_match", "weight": 0.3, "collection": "crm.deals",
                       "record_id": "deal-701", "expect": {"owner": "marco.bianchi"}},
                      {"id": "won-stays", "kind": "state_unchanged", "weight": 0.1, "collection": "crm.deals",
                       "record_id": "deal-702"}],
                   [{"call": "crm_list_customers", "args": {"owner": "lena.ortiz"}},
                    *({"call": "crm_update_customer", "args": {"customer_id": f"cust-{n}", "owner": "marco.bianchi"}}
                      for n in (501, 502)),
                    {"call": "crm_list_deals", "args": {"customer_id": "cust-501"}},
                    {"call": "crm_update_deal", "args": {"deal_id": "deal-701", "owner": "marco.bianchi"}},
                    {"answer": "Ferri Arredamenti, Sarti Vini and the open deal-701 now belong to marco.bianchi."}])


@pytest.mark.parametrize("request_text", [
    "Lena Ortiz (lena.ortiz) leaves on Friday. Hand all of her accounts over to marco.bianchi, and her open deals "
    "too; deals already won or lost stay with her.",
    "Transfer lena.ortiz's accounts to marco.bianchi, and her open deals too; won or lost deals stay with her.",
])
def test_handing_accounts_over_asks_for_the_updates(request_text: str) -> None:
    assert [f for f in grounding_findings(reference_run(_handover(request_text)))
            if f.code is Code.UNREQUESTED_WRITE] == []


def test_closing_the_tickets_the_request_asks_to_close_is_grounded_and_requested() -> None:
    assert grounding_findings(reference_run(close_two())) == []


# --------------------------------------------------------------------------- a time the checks pin that nothing gives
_NOTE = {"id": "note-520", "title": "Team offsite - planning", "folder": "Planning", "tags": ["offsite"],
         "pinned": False, "created_at": "2026-11-26T12:00:00Z", "updated_at": "2026-11-27T12:00:00Z",
         "body": "Offsite: Thursday 17 December, Harbour Loft. Morning session only, lunch at the venue. "
                 "Invite: design-team@hollis.example."}


def _offsite(start_pattern: str) -> Data:
    """The offsite booked from a note that gives no time; the check wants a start matching ``start_pattern``."""
    event = {"title": "Team offsite", "start": "2026-12-17T09:30", "duration_minutes": 180,
             "attendees": ["design-team@hollis.example"], "location": "Harbour Loft"}
    return package("get the team offsite from my planning note into the calendar - 3 hours, invite the design team "
                   "list, location as in the note", {"notes": {"notes": [dict(_NOTE)]}, "calendar": {"events": []}},
                   ["notes_search_notes", "calendar_create_event"],
                   [{"id": "booked", "kind": "state_count", "weight": 1.0, "collection": "calendar.events",
                     "scope": "created", "op": "==", "value": 1,
                     "where": {"title": "Team offsite", "start": {"$regex": start_pattern}}}],
                   [{"call": "notes_search_notes", "args": {"query": "offsite"}},
                    {"call": "calendar_create_event", "args": event},
                    {"answer": "Booked the team offsite on Thursday 2026-12-17, 09:30-12:30."}])


def _start_witness(doc: Data) -> list[str]:
    findings = [f for f in grounding_findings(reference_run(doc)) if f.code is Code.UNGROUNDED_VALUE and f.step == 1]
    return [a["arguments"]["start"] for f in findings if f.witness and f.witness.holds
            for a in f.witness.actions if a.get("name") == "calendar_create_event"]


def test_a_morning_time_nothing_gives_is_guessed_an_hour_earlier_when_that_fails_too() -> None:
    assert _start_witness(_offsite("^2026-12-17T09:30$")) == ["2026-12-17T08:30"]


def test_the_hour_later_guess_stays_where_the_checks_take_the_hour_earlier() -> None:
    assert _start_witness(_offsite("^2026-12-17T0[89]:30$")) == ["2026-12-17T10:30"]


def test_the_claim_shows_the_note_whose_text_holds_a_value_the_agent_writes() -> None:
    doc = _offsite("^2026-12-17T09:30$")
    actions = [{"type": "tool_call", "name": "calendar_create_event",
                "arguments": {"start": "2026-12-17T08:30", "attendees": ["design-team@hollis.example"]}}]
    assert [r["id"] for r in named_records(load_package(doc), "", actions)] == ["note-520"]
    assert named_records(load_package(doc), "", actions[:0]) == []


def test_an_id_whose_number_the_request_states_is_grounded() -> None:
    """"207 (the crash-on-startup one)": tkt-207 is the ticket the request names by its number."""
    tickets = [{"id": f"tkt-{n}", "subject": subject, "customer": "Ardent Labs", "status": "open",
                "priority": "high", "assignee": "", "created_at": "2026-11-30T08:00:00Z"}
               for n, subject in ((207, "Agent crashes on startup"), (208, "Agent update loops"))]
    for said, grounded in (("207 (the crash-on-startup one): put it on pending, we wait for their log.", True),
                           ("The crash-on-startup one: put it on pending, we wait for their log.", False)):
        doc = package(said, {"helpdesk": {"tickets": copy.deepcopy(tickets)}}, ["helpdesk_update_ticket"],
                      [{"id": "pending", "kind": "state_match", "weight": 1.0, "collection": "helpdesk.tickets",
                        "record_id": "tkt-207", "expect": {"status": "pending"}}],
                      [{"call": "helpdesk_update_ticket", "args": {"ticket_id": "tkt-207", "status": "pending"}},
                       {"answer": "tkt-207 is pending."}])
        found = [f for f in grounding_findings(reference_run(doc)) if f.detail.get("kind") == "id"]
        assert (found == []) is grounded, said


# --------------------------------------------------------------------------- a label no words give
def _tagged(request: str, tags: list[str]) -> Data:
    """A runbook published with ``tags``; the checks want every one of them."""
    articles = [{"id": "kb-71", "title": "Failover runbook", "body": "Steps to fail over the primary database.",
                 "category": "Ops", "tags": ["database"], "status": "draft", "author": "ops",
                 "updated_at": "2026-11-20T09:00:00Z"},
                {"id": "kb-72", "title": "Backup policy", "body": "Nightly backups are kept for 30 days.",
                 "category": "Ops", "tags": ["database", "oncall"], "status": "published", "author": "ops",
                 "updated_at": "2026-11-20T09:00:00Z"}]
    return package(request, {"kb": {"articles": articles}}, ["kb_search_articles", "kb_update_article"],
                   [{"id": "live", "kind": "state_match", "weight": 0.6, "collection": "kb.articles", "record_id": "kb-71",
                     "expect": {"status": "published"}},
                    {"id": "others-kept", "kind": "state_unchanged", "weight": 0.1, "collection": "kb.articles",
                     "where": {"id": {"$ne": "kb-71"}}},
                    *({"id": f"tag-{n}", "kind": "state_match", "weight": 0.3 / len(tags), "collection": "kb.articles",
                       "record_id": "kb-71", "expect": {"tags": {"$contains": t}}} for n, t in enumerate(tags))],
                   [{"call": "kb_search_articles", "args": {"query": "failover"}},
                    {"call": "kb_update_article", "args": {"article_id": "kb-71", "status": "published",
                                                           "tags": ["database", *tags]}},
                    {"answer": "Published the failover runbook (kb-71)."}])


def test_a_required_label_no_words_give_is_ungrounded() -> None:
    verdict = verify(_tagged("publish the failover runbook and tag it oncall", ["oncall", "tier-1"]))
    found = [f for f in verdict.findings if f.detail.get("kind") == "label"]
    assert [(f.code, f.detail["value"]) for f in found] == [(Code.UNGROUNDED_VALUE, "tier-1")], messages(verdict)
    assert found[0].witness is not None and found[0].witness.holds


@pytest.mark.parametrize("request_text", [
    "publish the failover runbook and tag it oncall and tier 1",    # the words of the label, spaced
    "publish the failover runbook, tags oncall + tier-1",
])
def test_a_label_the_request_gives_is_grounded(request_text: str) -> None:
    verdict = verify(_tagged(request_text, ["oncall", "tier-1"]))
    assert verdict.accepted, messages(verdict)


def test_a_label_read_in_a_record_is_grounded() -> None:
    """"database" is kb-71's own tag, read in the search result: keeping it is no guess."""
    doc = _tagged("publish the failover runbook and tag it oncall", ["oncall"])
    doc["checks"].append({"id": "kept", "kind": "state_match", "weight": 0.1, "collection": "kb.articles",
                          "record_id": "kb-71", "expect": {"tags": {"$contains": "database"}}})
    doc["checks"][0]["weight"] = 0.5
    verdict = verify(doc)
    assert verdict.accepted, messages(verdict)


def _article(request: str, category: str, tags: list[str], read: bool = False) -> Data:
    """A help article created with the title the request dictates; the checks pin ``category`` and
    ``tags``; with ``read``, the reference lists the articles first (their categories: Accounts,
    Billing, Mobile)."""
    articles = [{"id": f"kb-{10 + i}", "title": title, "body": "...", "category": cat, "tags": [], "status": "published",
                 "author": "nina.k", "updated_at": "2026-10-01T09:00:00Z"}
                for i, (title, cat) in enumerate([("Resetting your SSO password", "Accounts"),
                                                  ("Exporting invoices as CSV", "Billing"),
                                                  ("Installing the app on a tablet", "Mobile")][:3 if read else 2])]
    title = "Mobile app: 'Session expired' after login"
    create = {"call": "kb_create_article", "args": {"title": title, "body": "Update the app to 5.8, then sign in again.",
                                                    "status": "published", "category": category, "tags": tags}}
    return package(request, {"kb": {"articles": articles}}, ["kb_search_articles", "kb_create_article"],
                   [{"id": "article", "kind": "state_count", "weight": 0.5, "collection": "kb.articles",
                     "scope": "created", "where": {"title": {"$regex": "(?i)session expired"}, "status": "published"},
                     "op": "==", "value": 1},
                    {"id": "filed", "kind": "state_match", "weight": 0.5, "collection": "kb.articles",
                     "where": {"title": {"$regex": "(?i)session expired"}},
                     "expect": {"category": category, **({"tags": {"$contains": tags[0]}} if tags else {})}}],
                   [*([{"call": "kb_search_articles", "args": {"query": "app"}}] if read else []), create,
                    {"answer": f"Published the article {title!r}."}])


_DICTATED = 'Add a published help article titled "Mobile app: \'Session expired\' after login": update the app to 5.8.'


@pytest.mark.parametrize(("category", "tags"), [("Mobile", []), ("Support", ["mobile"])])
def test_a_word_of_the_dictated_title_states_no_value_of_another_field(category: str, tags: list[str]) -> None:
    """"Mobile" is a word of the title the request dictates; no words file the article under it."""
    verdict = verify(_article(_DICTATED if category == "Mobile" else _DICTATED.replace(": update", ", in Support: update"),
                              category, tags))
    found = [f for f in verdict.findings if f.code is Code.UNGROUNDED_VALUE]
    assert [f.detail["value"] for f in found] == ["Mobile" if category == "Mobile" else "mobile"], messages(verdict)
    assert "only as a word of a text it dictates" in found[0].message
    assert found[0].witness is not None and found[0].witness.holds


@pytest.mark.parametrize(("request_text", "read"), [
    (_DICTATED.replace("Add a", "File under Mobile a"), False),   # stated outside the title
    (_DICTATED, True),                                             # a category the articles read already have
    (_DICTATED.replace(": update", ' under the category "Mobile": update'), False),  # a quote of its own
])
def test_a_value_said_outside_the_title_or_read_is_grounded(request_text: str, read: bool) -> None:
    verdict = verify(_article(request_text, "Mobile", [], read=read))
    assert [f for f in verdict.findings if f.code is Code.UNGROUNDED_VALUE] == [], messages(verdict)


def _reassign(request: str, assignee: str) -> Data:
    """Marta's open ticket handed to ``assignee``; the reference reads only Marta's tickets (her
    address is the one it sees), and the check pins the new assignee."""
    tickets = [{"id": "tkt-201", "subject": "VAT number missing", "customer_email": "ap@fennick.example",
                "status": "open", "priority": "normal", "assignee": "marta.silva@corp.example"},
               {"id": "tkt-202", "subject": "Second admin", "customer_email": "it@lumora.example",
                "status": "open", "priority": "high", "assignee": "lena.fox@corp.example"}]
    return package(request, {"helpdesk": {"tickets": tickets}}, ["helpdesk_list_tickets", "helpdesk_update_ticket"],
                   [{"id": "moved", "kind": "state_match", "weight": 1.0, "collection": "helpdesk.tickets",
                     "record_id": "tkt-201", "expect": {"assignee": assignee}}],
                   [{"call": "helpdesk_list_tickets", "args": {"assignee": "marta.silva@corp.example"}},
                    {"call": "helpdesk_update_ticket", "args": {"ticket_id": "tkt-201", "assignee": assignee}},
                    {"answer": "Handed tkt-201 to the new assignee."}])


def test_an_address_made_like_one_read_of_a_name_the_request_gives_is_grounded() -> None:
    """marta.silva@corp.example was read: jonas.weber@corp.example is how the team writes the
    address of the Jonas Weber the request names."""
    request = "Marta Silva (marta.silva@corp.example) is off: hand her open ticket to Jonas Weber."
    assert grounding_findings(reference_run(_reassign(request, "jonas.weber@corp.example"))) == []


@pytest.mark.parametrize(("request_text", "assignee"), [
    ("Marta Silva (marta.silva@corp.example) is off: hand her open ticket to Jonas.", "jonas.weber@corp.example"),
    ("Marta Silva (marta.silva@corp.example) is off: hand her open ticket to Jonas Weber.", "jonas.weber@weber.example"),
    ("Marta Silva (marta.silva@corp.example) is off: hand her open ticket to Jonas Weber.", "jweber@corp.example"),
])
def test_an_address_no_convention_read_makes_of_the_name_given_is_ungrounded(request_text: str, assignee: str) -> None:
    found = grounding_findings(reference_run(_reassign(request_text, assignee)))
    assert (Code.UNGROUNDED_VALUE, "email") in [(f.code, f.detail.get("kind")) for f in found]


def _dock_order(supplier: str, stated: bool) -> Data:
    items = [{"id": "sku-001", "name": "USB-C dock", "category": "electronics", "quantity": 6, "price": 129.0,
              "reorder_level": 10, "warehouse": "Leeds"}]
    orders = [{"id": "ord-001", "item_id": "sku-001", "quantity": 20, "supplier": "Dockwell", "status": "received",
               "created_at": "2026-10-02T09:00:00Z"}] if stated else []
    return package("We're low on USB-C docks. Place an order for forty more.",
                   {"inventory": {"items": items, "orders": orders}},
                   ["inventory_search_items", "inventory_list_orders", "inventory_create_order"],
                   [{"id": "order", "kind": "state_count", "weight": 1.0, "collection": "inventory.orders",
                     "scope": "created", "where": {"item_id": "sku-001", "quantity": 40, "supplier": supplier},
                     "op": "==", "value": 1}],
                   [{"call": "inventory_search_items", "args": {"query": "USB-C dock"}},
                    {"call": "inventory_list_orders", "args": {}},
                    {"call": "inventory_create_order", "args": {"item_id": "sku-001", "quantity": 40, "supplier": supplier}},
                    {"answer": f"Ordered 40 USB-C docks from {supplier}."}])


def test_a_name_the_checks_pin_that_nothing_read_gives_is_ungrounded() -> None:
    """The supplier "Dockwell" is in no request, fact or record: an agent that leaves the optional
    supplier out loses the order check. The supplier of the item's last order is read: grounded."""
    verdict = verify(_dock_order("Dockwell", stated=False))
    found = [f for f in verdict.findings if f.code is Code.UNGROUNDED_VALUE and f.detail.get("kind") == "name"]
    assert len(found) == 1 and found[0].detail["value"] == "Dockwell" and found[0].witness.holds, messages(verdict)
    assert verify(_dock_order("Dockwell", stated=True)).accepted


def _bump(assignee: str, request: str = "Goldleaf's CSV export is still timing out. Bump tkt-090 to high priority.") -> Data:
    tickets = [{"id": "tkt-090", "subject": "Export to CSV times out", "description": "", "customer_email": "data@goldleaf.example",
                "status": "open", "priority": "normal", "assignee": "support-tier1", "created_at": "2026-11-30T10:00:00Z",
                "updated_at": ""}]
    return package(request, {"helpdesk": {"tickets": tickets, "replies": []}}, ["helpdesk_update_ticket"],
                   [{"id": "high", "kind": "state_match", "weight": 0.6, "collection": "helpdesk.tickets",
                     "record_id": "tkt-090", "expect": {"priority": "high"}},
                    {"id": "routed", "kind": "state_match", "weight": 0.4, "collection": "helpdesk.tickets",
                     "record_id": "tkt-090", "expect": {"assignee": assignee}}],
                   [{"call": "helpdesk_update_ticket", "args": {"ticket_id": "tkt-090", "priority": "high",
                                                                "assignee": assignee}},
                    {"answer": "tkt-090 is now high priority."}])


def test_a_handle_the_checks_pin_that_nothing_read_gives_is_ungrounded() -> None:
    """"tier2-escalations", a queue no request, record or tool names: leaving the optional
    assignee out loses the routing check. Named in the request, it is grounded."""
    verdict = verify(_bump("tier2-escalations"))
    found = [f for f in verdict.findings if f.code is Code.UNGROUNDED_VALUE and f.detail.get("kind") == "name"]
    assert len(found) == 1 and found[0].detail["value"] == "tier2-escalations" and found[0].witness.holds, \
        messages(verdict)
    said = verify(_bump("tier2-escalations", "Bump tkt-090 to high priority and hand it to tier2-escalations."))
    assert said.accepted, messages(said)


@pytest.mark.parametrize(("request_text", "refused"), [
    ("The failover runbook has been reviewed. Go ahead and publish it.", True),   # nothing speaks of the category
    ("Publish the failover runbook and file it under Security.", False),          # the value said
    ("Publish the failover runbook; its category is security now.", False),      # the field and the value said
])
def test_a_label_an_update_changes_unasked_is_ungrounded(request_text: str, refused: bool) -> None:
    """The reference publishes the runbook and moves its category from "Ops" to "security", and the
    checks pin it: a correct agent that only publishes keeps the category as it was, and fails."""
    doc = _tagged(request_text, [])
    doc["reference"][1]["args"] = {"article_id": "kb-71", "status": "published", "category": "security"}
    doc["checks"][0]["expect"] = {"status": "published", "category": "security"}
    verdict = verify(doc)
    found = [f for f in verdict.findings if f.code is Code.UNGROUNDED_VALUE and f.detail.get("argument") == "category"]
    assert bool(found) is refused, messages(verdict)
    assert all(f.witness is not None and f.witness.holds for f in found)


def test_a_verb_speaks_of_the_status_option_it_forms() -> None:
    """"publish a new article" speaks of ``published``; "highlight" is no word of ``high``."""
    from pipeline.verify.borrowed import speaks_of_option

    assert speaks_of_option("Publish a new article titled 'Winter hours'.", "published")
    assert speaks_of_option("Archive the old notes.", "archived")
    assert speaks_of_option("Give it a high priority.", "high")
    assert not speaks_of_option("Highlight the paragraph.", "high")
    assert not speaks_of_option("Ship from the closest depot.", "closed")
    assert not speaks_of_option("Write a new article titled 'Winter hours'.", "published")


def _closing(request: str) -> Data:
    """Three open widget tickets resolved; the checks want all three."""
    from tests.verify.builders import ticket

    tickets = [ticket(f"tkt-02{n}", "Booking widget broken", f"guest{n}@inn.example", "open") for n in (1, 4, 6)]
    return package(request, {"helpdesk": {"tickets": tickets}}, ["helpdesk_list_tickets", "helpdesk_update_ticket"],
                   [{"id": f"closed-{n}", "kind": "state_match", "weight": w, "collection": "helpdesk.tickets",
                     "record_id": f"tkt-02{n}", "expect": {"status": "resolved"}} for n, w in ((1, 0.4), (4, 0.3), (6, 0.3))],
                   [{"call": "helpdesk_list_tickets", "args": {"status": "open"}},
                    *({"call": "helpdesk_update_ticket", "args": {"ticket_id": f"tkt-02{n}", "status": "resolved"}}
                      for n in (1, 4, 6)),
                    {"answer": "Resolved the widget tickets."}])


def test_a_record_the_request_does_not_name_among_those_it_names_by_id_is_unrequested() -> None:
    """"Resolve tkt-021 and tkt-024": resolving tkt-026 too is work the request does not ask for, and
    the checks reward it; "resolve every widget ticket" names all three."""
    verdict = verify(_closing("Release 4.2 fixes the booking widget: resolve tkt-021 and tkt-024. Leave the rest open."))
    finding = next(f for f in verdict.findings if f.code is Code.UNREQUESTED_WRITE)
    assert finding.step == 3 and "tkt-026" in finding.message
    assert verify(_closing("Release 4.2 fixes the booking widget: resolve every widget ticket.")).accepted


@pytest.mark.parametrize(("profile", "endpoint"), [("claw", "/config/notify"), ("claw", "/gmail/send"),
                                                   ("default", "/gmail/send"), ("claw", "/web/notify")])
def test_a_heads_up_asks_for_a_notice(profile: str, endpoint: str) -> None:
    """"Give Hedda a heads-up", "warn ops": the request asks for the notice a sending tool writes."""
    from pipeline.core.services import find_operation
    from pipeline.verify.grounding import _intent_regex

    found = find_operation(endpoint, profile)
    assert found is not None
    op = found[1]
    for said in ("and give hedda a heads-up (hedda@marina.example).", "warn ops that it is off."):
        assert _intent_regex(tuple(op.intents)).search(said), (endpoint, said)
