from lib import pkg

# ---------------- c23 cross-service web+todo (claw): incident id read from a status page
STATUS = "https://status.paylane.example/incidents"
pkg("c23-claw-incident-id-from-status-page.json", capability="cross-service", workflow="todo-from-web-page", difficulty="medium",
    services=["web", "todo"], profile="claw",
    request=(f"Our status page ({STATUS}) lists the incident that hit card payments last night. Create a high-priority todo to write its "
             "post-mortem, with the incident ID in the title, due 4 December 2026."),
    initial_state={"web": {"search_results": [], "pages": [
        {"url": STATUS, "title": "Paylane status - incident history", "content_type": "text/html", "status_code": 200, "error": "",
         "content": ("Incident history\n"
                     "INC-20935 | 1 Dec 2026 02:10-02:55 UTC | Webhook delivery delayed | resolved\n"
                     "INC-20931 | 30 Nov 2026 22:10-23:45 UTC | Card payments degraded (EU acquirer timeouts) | resolved\n"
                     "INC-20928 | 29 Nov 2026 08:00-08:20 UTC | Dashboard login slow | resolved\n"
                     "INC-20902 | 12 Nov 2026 21:30-22:05 UTC | Card payments degraded (3DS provider) | resolved\n")}]},
        "todo": {"tasks": [
            {"task_id": "todo_001", "title": "Post-mortem INC-20902 card payments", "description": "", "status": "completed", "priority": "high", "due_date": "2026-11-18", "tags": [], "created_at": "2026-11-13T09:00:00Z"}]}},
    tools=["web_fetch", "web_search", "list_tasks", "create_task"],
    checks=[
        {"id": "postmortem-todo", "kind": "state_count", "weight": 0.65, "collection": "todo.tasks", "scope": "created",
         "where": {"title": {"$regex": "INC-20931"}, "priority": "high", "due_date": "2026-12-04"}, "op": "==", "value": 1},
        {"id": "no-other-incident", "kind": "state_count", "weight": 0.2, "collection": "todo.tasks", "scope": "created",
         "where": {"title": {"$regex": "INC-(20935|20928|20902)"}}, "op": "==", "value": 0},
        {"id": "one-todo", "kind": "state_count", "weight": 0.15, "collection": "todo.tasks", "scope": "created", "op": "==", "value": 1}],
    reference=[
        {"call": "web_fetch", "args": {"url": STATUS}},
        {"call": "create_task", "args": {"title": "Write post-mortem for INC-20931 (card payments degraded)", "priority": "high", "due_date": "2026-12-04"}},
        {"answer": "Created a high-priority todo 'Write post-mortem for INC-20931 (card payments degraded)' due 2026-12-04."}],
    alts={
        "correct terse title": [("call", "web_fetch", {"url": STATUS}), ("call", "create_task", {"title": "INC-20931 post-mortem", "priority": "high", "due_date": "2026-12-04", "description": "EU acquirer timeouts"}), ("answer", "Todo for INC-20931 added.")],
        "wrong most recent incident": [("call", "create_task", {"title": "Post-mortem INC-20935", "priority": "high", "due_date": "2026-12-04"}), ("answer", "Todo for INC-20935 added.")],
        "wrong older card incident": [("call", "create_task", {"title": "Post-mortem INC-20902", "priority": "high", "due_date": "2026-12-04"}), ("answer", "INC-20902")],
        "wrong no id in title": [("call", "create_task", {"title": "Card payments post-mortem", "priority": "high", "due_date": "2026-12-04", "description": "INC-20931"}), ("answer", "INC-20931")],
    })

# ---------------- c24 cross-service documents+todo (claw): notice deadline computed from a contract PDF
DOC = "contracts/cloudhost-msa.pdf"
pkg("c24-claw-notice-deadline-from-contract.json", capability="cross-service", workflow="todo-from-document-date", difficulty="hard",
    services=["documents", "todo"], profile="claw",
    request=(f"We don't want the CloudHost contract ({DOC}) to renew. Add a todo 'Send CloudHost non-renewal notice', high priority, "
             "due on the last day we can still give notice under the contract."),
    initial_state={"documents": {"documents": [{"path": DOC, "pages": [
        "MASTER SERVICES AGREEMENT between CloudHost Ltd and the Customer.\n1. Term. The initial term runs from 1 February 2025 to 31 January 2027 (the \"Current Term\").",
        "7. Renewal. This Agreement renews automatically for successive twelve-month terms unless either party gives written notice of non-renewal no later than forty-five (45) days before the end of the Current Term.\n8. Price changes. CloudHost will announce price changes at least thirty (30) days in advance."]}]},
        "todo": {"tasks": []}},
    tools=["doc_extract_text", "list_tasks", "create_task"],
    checks=[
        {"id": "notice-todo", "kind": "state_count", "weight": 0.8, "collection": "todo.tasks", "scope": "created",
         "where": {"title": {"$regex": "(?i)cloudhost.*non-renewal"}, "priority": "high", "due_date": "2026-12-17"}, "op": "==", "value": 1},
        {"id": "one-todo", "kind": "state_count", "weight": 0.2, "collection": "todo.tasks", "scope": "created", "op": "==", "value": 1}],
    reference=[
        {"call": "doc_extract_text", "args": {"path": DOC}},
        {"call": "create_task", "args": {"title": "Send CloudHost non-renewal notice", "priority": "high", "due_date": "2026-12-17"}},
        {"answer": "The term ends 31 January 2027 and notice is due 45 days before, so the todo is due 2026-12-17."}],
    alts={
        "correct December 17 wording": [("call", "create_task", {"title": "Send CloudHost non-renewal notice", "priority": "high", "due_date": "2026-12-17", "description": "45 days before 31 Jan 2027"}), ("answer", "Due December 17, 2026.")],
        "wrong 30-day clause": [("call", "create_task", {"title": "Send CloudHost non-renewal notice", "priority": "high", "due_date": "2027-01-01"}), ("answer", "Due 2027-01-01.")],
        "wrong off by one (16th)": [("call", "create_task", {"title": "Send CloudHost non-renewal notice", "priority": "high", "due_date": "2026-12-16"}), ("answer", "Due 2026-12-16.")],
        "wrong end of term": [("call", "create_task", {"title": "Send CloudHost non-renewal notice", "priority": "high", "due_date": "2027-01-31"}), ("answer", "Due 2027-01-31.")],
    })

# ---------------- c25 long-horizon/calendar: add Nora to every December team standup (Tue/Thu), keep attendees
A, B, C, NORA, NQ = "ali.karim@corp.example", "bea.lund@corp.example", "chen.wei@corp.example", "nora.lindgren@corp.example", "nora.lindqvist@corp.example"
days = ["01", "03", "08", "10", "15", "17", "22", "24", "29", "31"]
evs = [{"id": f"evt-{300+i}", "title": "Team standup", "start": f"2026-12-{d}T09:30", "duration_minutes": 15, "attendees": [A, B, C], "location": "Huddle", "description": ""} for i, d in enumerate(days)]
decoys = [
    {"id": "evt-290", "title": "Team standup", "start": "2026-11-26T09:30", "duration_minutes": 15, "attendees": [A, B, C], "location": "Huddle", "description": ""},
    {"id": "evt-291", "title": "Design standup", "start": "2026-12-02T09:30", "duration_minutes": 15, "attendees": [B, "ivo.petrov@corp.example"], "location": "Huddle", "description": ""},
    {"id": "evt-292", "title": "Team standup", "start": "2027-01-05T09:30", "duration_minutes": 15, "attendees": [A, B, C], "location": "Huddle", "description": ""},
    {"id": "evt-293", "title": "Team retro", "start": "2026-12-18T15:00", "duration_minutes": 60, "attendees": [A, B, C], "location": "Juniper", "description": ""}]
STAND = {"title": "Team standup", "start": {"$prefix": "2026-12"}}
checks = [{"id": f"nora-{e['id']}", "kind": "state_match", "weight": 0.05, "collection": "calendar.events", "record_id": e["id"],
           "expect": {"attendees": {"$contains": NORA}, "start": e["start"], "title": "Team standup"}} for e in evs]
checks += [{"id": f"kept-{n}", "kind": "state_count", "weight": 0.1, "collection": "calendar.events",
            "where": {**STAND, "attendees": {"$contains": x}}, "op": "==", "value": 10} for n, x in (("ali", A), ("bea", B), ("chen", C))]
checks += [{"id": "decoys-untouched", "kind": "state_unchanged", "weight": 0.1, "collection": "calendar.events", "where": {"id": {"$in": [d["id"] for d in decoys]}}},
           {"id": "nora-only-there", "kind": "state_count", "weight": 0.05, "collection": "calendar.events", "where": {"attendees": {"$contains": NORA}}, "op": "==", "value": 10},
           {"id": "not-lindqvist", "kind": "state_count", "weight": 0.05, "collection": "calendar.events", "where": {"attendees": {"$contains": NQ}}, "op": "==", "value": 0}]
ref = [{"call": "contacts_search", "args": {"query": "Nora Lindgren"}}, {"call": "calendar_search_events", "args": {"query": "Team standup"}}]
ref += [{"call": "calendar_update_event", "args": {"event_id": e["id"], "attendees": [A, B, C, NORA]}} for e in evs]
ref += [{"answer": "Added Nora Lindgren to all 10 Team standups in December (Tuesdays and Thursdays, 1-31 Dec), keeping Ali, Bea and Chen."}]
pkg("c25-add-attendee-every-december-standup.json", capability="long-horizon", workflow="bulk-add-attendee", difficulty="hard",
    services=["contacts", "calendar"],
    request="Add Nora Lindgren to every team standup in December (they're on Tuesdays and Thursdays). Everyone already invited stays invited.",
    initial_state={"contacts": {"contacts": [
        {"id": "c-81", "name": "Nora Lindgren", "email": NORA, "department": "Engineering", "title": "Engineer", "phone": "+1-555-0181"},
        {"id": "c-82", "name": "Nora Lindqvist", "email": NQ, "department": "Finance", "title": "Analyst", "phone": "+1-555-0182"}], "messages": []},
        "calendar": {"events": decoys[:2] + evs + decoys[2:]}},
    tools=["contacts_search", "calendar_list_events", "calendar_search_events", "calendar_get_event", "calendar_update_event"],
    checks=checks, reference=ref,
    alts={
        "wrong replaces attendees with Nora": [("call", "calendar_update_event", {"event_id": e["id"], "attendees": [NORA]}) for e in evs] + [("answer", "Done.")],
        "wrong skips the 31st": [("call", "calendar_update_event", {"event_id": e["id"], "attendees": [A, B, C, NORA]}) for e in evs[:-1]] + [("answer", "Done.")],
        "wrong also design standup and January": [("call", "calendar_update_event", {"event_id": e["id"], "attendees": [A, B, C, NORA]}) for e in evs] + [("call", "calendar_update_event", {"event_id": "evt-291", "attendees": [B, "ivo.petrov@corp.example", NORA]}), ("call", "calendar_update_event", {"event_id": "evt-292", "attendees": [A, B, C, NORA]}), ("answer", "Done.")],
        "correct Nora first, other order": [("call", "calendar_update_event", {"event_id": e["id"], "attendees": [NORA, C, A, B]}) for e in reversed(evs)] + [("answer", "Done.")],
    })
