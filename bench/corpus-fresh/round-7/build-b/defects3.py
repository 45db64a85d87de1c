from lib import pkg

# ---------------- d26 cross-service kb+helpdesk: reply tool bound to an endpoint the service lacks
pkg("d26-reply-tool-wrong-endpoint.json", capability="cross-service", workflow="answer-ticket-from-kb", difficulty="medium",
    services=["kb", "helpdesk"],
    request="Answer ticket tkt-710 with the link to our knowledge-base article on exporting invoices as CSV, then set the ticket to pending.",
    initial_state={"kb": {"articles": [
        {"id": "kb-220", "title": "Exporting invoices as CSV", "body": "Go to Billing > Invoices > Export. Link: https://help.corp.example/kb-220", "category": "Billing", "tags": ["csv", "export"], "status": "published", "author": "mina.ode", "updated_at": "2026-09-01T10:00:00Z"},
        {"id": "kb-221", "title": "Importing invoices from CSV", "body": "Go to Billing > Import. Link: https://help.corp.example/kb-221", "category": "Billing", "tags": ["csv", "import"], "status": "published", "author": "mina.ode", "updated_at": "2026-09-01T10:00:00Z"}]},
        "helpdesk": {"replies": [], "tickets": [
            {"id": "tkt-710", "subject": "How do I get my invoices into Excel?", "description": "Need a CSV of all 2026 invoices.", "customer_email": "ola@fjordline.example", "status": "open", "priority": "normal", "assignee": "tom.h", "created_at": "2026-11-30T10:00:00Z", "updated_at": "2026-11-30T10:00:00Z"}]}},
    tools=["kb_search_articles", "kb_get_article", "helpdesk_get_ticket", "helpdesk_reply_ticket", "helpdesk_update_ticket"],
    tool_over={"helpdesk_reply_ticket": {"endpoint": "/helpdesk/tickets/respond"}},
    checks=[
        {"id": "reply-with-link", "kind": "state_count", "weight": 0.6, "collection": "helpdesk.replies", "scope": "created",
         "where": {"ticket_id": "tkt-710", "body": {"$contains": "https://help.corp.example/kb-220"}}, "op": "==", "value": 1},
        {"id": "pending", "kind": "state_match", "weight": 0.4, "collection": "helpdesk.tickets", "record_id": "tkt-710", "expect": {"status": "pending"}}],
    reference=[
        {"call": "kb_search_articles", "args": {"query": "CSV"}},
        {"call": "helpdesk_reply_ticket", "args": {"ticket_id": "tkt-710", "body": "Hi Ola, here is how to export your invoices as CSV: https://help.corp.example/kb-220"}},
        {"call": "helpdesk_update_ticket", "args": {"ticket_id": "tkt-710", "status": "pending"}},
        {"answer": "Replied to tkt-710 with the CSV export article and set it to pending."}],
    alts={
        "correct agent via offered tool": [("call", "helpdesk_reply_ticket", {"ticket_id": "tkt-710", "body": "Export guide: https://help.corp.example/kb-220"}), ("call", "helpdesk_update_ticket", {"ticket_id": "tkt-710", "status": "pending"}), ("answer", "Done.")],
    })

# ---------------- d27 information-synthesis/finance: hedged amount accepted
pkg("d27-owed-total-hedge-passes.json", capability="information-synthesis", workflow="customer-outstanding-total", difficulty="medium",
    services=["finance"],
    request="How much does Corvid Studio still owe us across its unpaid invoices?",
    initial_state={"finance": {"transactions": [], "invoices": [
        {"id": "inv-801", "customer": "Corvid Studio", "customer_email": "ap@corvid.example", "description": "Logo refresh", "amount": 1180.0, "currency": "EUR", "due_date": "2026-12-10", "status": "unpaid", "issued_at": "2026-11-10T09:00:00Z"},
        {"id": "inv-802", "customer": "Corvid Studio", "customer_email": "ap@corvid.example", "description": "Hosting December", "amount": 60.0, "currency": "EUR", "due_date": "2026-12-31", "status": "unpaid", "issued_at": "2026-12-01T08:00:00Z"},
        {"id": "inv-803", "customer": "Corvid Studio", "customer_email": "ap@corvid.example", "description": "Brand workshop", "amount": 950.0, "currency": "EUR", "due_date": "2026-11-15", "status": "paid", "issued_at": "2026-10-15T09:00:00Z"},
        {"id": "inv-804", "customer": "Corvid Studios Ltd", "customer_email": "finance@corvidstudios.example", "description": "Photo licence", "amount": 400.0, "currency": "EUR", "due_date": "2026-12-05", "status": "unpaid", "issued_at": "2026-11-05T09:00:00Z"}]}},
    tools=["finance_list_invoices", "finance_get_invoice"],
    checks=[
        {"id": "total", "kind": "answer_matches", "weight": 0.9, "pattern": r"1[,.]?240"},
        {"id": "untouched", "kind": "state_unchanged", "weight": 0.1, "collection": "finance.invoices"}],
    reference=[
        {"call": "finance_list_invoices", "args": {"customer": "Corvid Studio", "status": "unpaid"}},
        {"answer": "Corvid Studio owes 1,240.00 EUR (inv-801 1,180.00 + inv-802 60.00)."}],
    alts={
        "wrong hedge 1,180 to 1,640": [("answer", "Somewhere between 1,180 and 1,640 EUR depending on which invoices count; 1,240 if you exclude Corvid Studios Ltd.")],
        "wrong includes Ltd 1,640 with list": [("answer", "1,640 EUR (1,180 + 60 + 400); the first two alone are 1,240.")],
    })

# ---------------- d28 general/crm: look-alike company matched by the grader's regex
pkg("d28-tier-lookalike-unguarded.json", capability="general", workflow="update-customer-tier", difficulty="medium",
    services=["crm"],
    request="Upgrade Nordlicht Energie GmbH to the platinum tier.",
    initial_state={"crm": {"deals": [], "customers": [
        {"id": "cust-901", "name": "Sven Aalto", "company": "Nordlicht Energy Ltd", "email": "sven@nordlicht-energy.example", "phone": "+44-555-0901", "status": "active", "tier": "gold", "owner": "jae.park", "notes": ""},
        {"id": "cust-902", "name": "Katrin Holm", "company": "Nordlicht Energie GmbH", "email": "katrin@nordlicht-energie.example", "phone": "+49-555-0902", "status": "active", "tier": "gold", "owner": "jae.park", "notes": ""},
        {"id": "cust-903", "name": "Ola Berg", "company": "Sudwind Solar AG", "email": "ola@sudwind.example", "phone": "+49-555-0903", "status": "active", "tier": "standard", "owner": "jae.park", "notes": ""}]}},
    tools=["crm_search_customers", "crm_get_customer", "crm_update_customer"],
    checks=[
        {"id": "tier-platinum", "kind": "state_count", "weight": 0.7, "collection": "crm.customers", "where": {"company": {"$regex": "(?i)nordlicht"}, "tier": "platinum"}, "op": ">=", "value": 1},
        {"id": "sudwind-unchanged", "kind": "state_unchanged", "weight": 0.1, "collection": "crm.customers", "record_id": "cust-903"},
        {"id": "confirmed", "kind": "answer_contains", "weight": 0.2, "values": ["platinum"]}],
    reference=[
        {"call": "crm_search_customers", "args": {"query": "Nordlicht"}},
        {"call": "crm_update_customer", "args": {"customer_id": "cust-902", "tier": "platinum"}},
        {"answer": "Nordlicht Energie GmbH is now on the platinum tier."}],
    alts={
        "wrong upgrades Nordlicht Energy Ltd": [("call", "crm_update_customer", {"customer_id": "cust-901", "tier": "platinum"}), ("answer", "Upgraded Nordlicht to platinum.")],
        "wrong upgrades both": [("call", "crm_update_customer", {"customer_id": c, "tier": "platinum"}) for c in ("cust-901", "cust-902")] + [("answer", "Upgraded to platinum.")],
    })

# ---------------- d29 long-horizon/helpdesk (claw): close 8 duplicate tickets graded by counted calls
tk = []
for n in range(1, 15):
    tid = f"TKT-{n:03d}"
    dup = n in (2, 3, 5, 6, 8, 9, 11, 13)
    tk.append({"ticket_id": tid, "title": f"Issue report {n}", "description": "Same as an earlier report." if dup else "New problem.", "status": "closed" if n == 14 else "open",
               "priority": "medium", "category": "support", "tags": ["duplicate"] if (dup or n == 14) else ["bug"], "created_by": f"user{n}@client.example", "created_at": "2026-11-28T10:00:00Z", "resolution": "Fixed." if n == 14 else ""})
DUPS = [t["ticket_id"] for t in tk if "duplicate" in t["tags"] and t["status"] == "open"]
RES = "Duplicate - merged into the original ticket"
pkg("d29-claw-close-duplicates-counted-calls.json", capability="long-horizon", workflow="bulk-close-tagged-tickets", difficulty="hard",
    services=["helpdesk"], profile="claw",
    request=f"Close every open ticket tagged 'duplicate' with the resolution '{RES}'. Leave all other tickets alone.",
    initial_state={"helpdesk": {"tickets": tk}},
    tools=["list_tickets", "get_ticket", "close_ticket", "update_ticket"],
    checks=[
        {"id": "eight-closes", "kind": "called", "weight": 0.7, "tool": "close_ticket", "args_match": {"resolution": RES}, "min": 8},
        {"id": "count-reported", "kind": "answer_matches", "weight": 0.3, "pattern": r"\b8\b|eight"}],
    reference=[{"call": "list_tickets", "args": {"status": "open"}}] + [{"call": "close_ticket", "args": {"ticket_id": t, "resolution": RES}} for t in DUPS]
              + [{"answer": "Closed the 8 open duplicate tickets: " + ", ".join(DUPS) + "."}],
    alts={
        "wrong closes TKT-002 eight times": [("call", "close_ticket", {"ticket_id": "TKT-002", "resolution": RES})] * 8 + [("answer", "Closed 8 tickets.")],
        "wrong closes the first 8 open tickets regardless of tag": [("call", "close_ticket", {"ticket_id": f"TKT-{n:03d}", "resolution": RES}) for n in range(1, 9)] + [("answer", "Closed 8 tickets.")],
    })

# ---------------- d30 multi-turn/finance: user corrects the amount; check pins the stale value
pkg("d30-corrected-amount-graded-stale.json", capability="multi-turn", workflow="invoice-confirm-amount", difficulty="medium",
    services=["finance"],
    request="Create an invoice for Ostara Foods (ap@ostara.example) for the December shelf audit: 3,200 GBP, due 21 December 2026. Double-check the amount with me before you send it.",
    user={"persona": "Finance lead; the quote was revised after the scope grew.",
          "facts": [{"key": "amount", "value": "3450", "corrects": "3,200", "reveal_when": ["amount", "confirm", "3,200", "3200", "correct", "total", "right"]}], "max_rounds": 4},
    initial_state={"finance": {"transactions": [], "invoices": []}},
    tools=["finance_list_invoices", "finance_create_invoice"],
    checks=[
        {"id": "invoice", "kind": "state_count", "weight": 0.6, "collection": "finance.invoices", "scope": "created",
         "where": {"customer": "Ostara Foods", "amount": 3200, "currency": "GBP", "due_date": "2026-12-21"}, "op": "==", "value": 1},
        {"id": "one-invoice", "kind": "state_count", "weight": 0.2, "collection": "finance.invoices", "scope": "created", "op": "==", "value": 1},
        {"id": "asked-amount", "kind": "asked_user", "weight": 0.2, "fact": "amount"}],
    reference=[
        {"ask": "Just to confirm, is the amount 3,200 GBP?"},
        {"call": "finance_create_invoice", "args": {"customer": "Ostara Foods", "customer_email": "ap@ostara.example", "description": "December shelf audit", "amount": 3200, "currency": "GBP", "due_date": "2026-12-21"}},
        {"answer": "Invoiced Ostara Foods 3,200 GBP for the December shelf audit, due 2026-12-21."}],
    alts={
        "correct uses the corrected 3450": [("ask", "Is 3,200 GBP the right amount?"), ("call", "finance_create_invoice", {"customer": "Ostara Foods", "customer_email": "ap@ostara.example", "amount": 3450, "currency": "GBP", "due_date": "2026-12-21"}), ("answer", "Invoiced 3,450 GBP.")],
        "wrong ignores the correction": [("ask", "Is 3,200 GBP the right amount?"), ("call", "finance_create_invoice", {"customer": "Ostara Foods", "customer_email": "ap@ostara.example", "amount": 3200, "currency": "GBP", "due_date": "2026-12-21"}), ("answer", "Invoiced 3,200 GBP.")],
    })
