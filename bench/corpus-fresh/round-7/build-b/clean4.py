from lib import pkg

# ---------------- c26 information-synthesis/finance: November software spend net of refund; neighbouring months present
tx = [("txn-401", "2026-10-31", "Atlassian annual seats", 312.50, "debit", "Software"),
      ("txn-402", "2026-11-03", "Slack subscription", 49.00, "debit", "Software"),
      ("txn-403", "2026-11-05", "Figma team plan", 144.00, "debit", "Software"),
      ("txn-404", "2026-11-09", "Atlassian seats top-up", 312.50, "debit", "Software"),
      ("txn-405", "2026-11-12", "Figma refund (duplicate seat)", 48.00, "credit", "Software"),
      ("txn-406", "2026-11-15", "GitHub Team", 89.99, "debit", "Software"),
      ("txn-407", "2026-11-20", "Software architecture course", 400.00, "debit", "Training"),
      ("txn-408", "2026-11-28", "Notion workspace", 60.00, "debit", "Software"),
      ("txn-409", "2026-12-01", "Slack subscription", 49.00, "debit", "Software"),
      ("txn-410", "2026-11-18", "Client payment Orbis", 5200.00, "credit", "Sales")]
pkg("c26-november-software-net-of-refund.json", capability="information-synthesis", workflow="monthly-category-spend", difficulty="hard",
    services=["finance"],
    request="How much did we spend on software in November, net of the refund Figma gave us? Just the figure, please.",
    initial_state={"finance": {"invoices": [], "transactions": [
        {"id": i, "date": d, "description": s, "amount": a, "type": t, "category": c, "account": "Operating", "created_at": d + "T12:00:00Z"} for i, d, s, a, t, c in tx]}},
    tools=["finance_list_transactions", "finance_get_transaction"],
    checks=[
        {"id": "net-total", "kind": "answer_matches", "weight": 0.75, "pattern": r"(?<![\d.,])607[.,]49(?!\d)"},
        {"id": "no-wrong-total", "kind": "answer_excludes", "weight": 0.15, "values": ["919.99", "1,007.49", "1007.49", "559.49", "656.49"]},
        {"id": "ledger-untouched", "kind": "state_unchanged", "weight": 0.1, "collection": "finance.transactions"}],
    reference=[
        {"call": "finance_list_transactions", "args": {"category": "Software"}},
        {"answer": "607.49 — November software debits 655.49 (Slack 49.00, Figma 144.00, Atlassian 312.50, GitHub 89.99, Notion 60.00) minus the 48.00 Figma refund."}],
    alts={
        "correct bare figure": [("answer", "$607.49")],
        "wrong gross only": [("answer", "655.49")],
        "wrong includes Oct 31 Atlassian": [("answer", "919.99")],
        "wrong includes course": [("answer", "1,007.49")],
        "wrong refund added": [("answer", "703.49")],
    })

# ---------------- c27 information-synthesis/helpdesk+notes: counts per assignee aggregated into a note
T = [("tkt-501", "open", "urgent", "ana.silva"), ("tkt-502", "open", "urgent", "ana.silva"), ("tkt-503", "open", "urgent", "ana.silva"),
     ("tkt-504", "closed", "urgent", "ana.silva"), ("tkt-505", "open", "urgent", "ben.oduya"), ("tkt-506", "open", "urgent", "ben.oduya"),
     ("tkt-507", "resolved", "urgent", "ben.oduya"), ("tkt-508", "open", "urgent", "chen.wei"), ("tkt-509", "open", "high", "chen.wei"),
     ("tkt-510", "open", "high", "ana.silva"), ("tkt-511", "closed", "urgent", "dmitri.volkov"), ("tkt-512", "open", "normal", "dmitri.volkov")]
def cnt(name, n):
    return rf"(?is)\b{name}\b[^0-9\n]{{0,40}}\b{n}\b|\b{n}\b[^0-9\n]{{0,40}}\b{name}\b"
pkg("c27-urgent-tickets-per-assignee-note.json", capability="information-synthesis", workflow="counts-into-note", difficulty="hard",
    services=["helpdesk", "notes"],
    request="Make a note in my Support folder titled 'Open urgent tickets by assignee' that says how many open urgent tickets each person currently has.",
    initial_state={"helpdesk": {"replies": [], "tickets": [
        {"id": i, "subject": f"Issue {i[-3:]}", "description": "", "customer_email": f"user{i[-3:]}@client.example", "status": s, "priority": p, "assignee": a,
         "created_at": "2026-11-25T10:00:00Z", "updated_at": "2026-11-30T10:00:00Z"} for i, s, p, a in T]},
        "notes": {"notes": [{"id": "note-040", "title": "Open urgent tickets by assignee (Oct)", "body": "ana.silva: 1\nben.oduya: 4", "folder": "Support", "tags": [], "pinned": False, "created_at": "2026-10-30T10:00:00Z", "updated_at": "2026-10-30T10:00:00Z"}]}},
    tools=["helpdesk_list_tickets", "helpdesk_search_tickets", "helpdesk_get_ticket", "notes_list_notes", "notes_create_note", "notes_update_note"],
    checks=[
        {"id": "note-made", "kind": "state_count", "weight": 0.2, "collection": "notes.notes", "scope": "created",
         "where": {"title": "Open urgent tickets by assignee", "folder": "Support"}, "op": "==", "value": 1, "ignore_case": True},
        {"id": "ana-3", "kind": "state_count", "weight": 0.25, "collection": "notes.notes", "scope": "created", "where": {"body": {"$regex": cnt("ana", 3)}}, "op": "==", "value": 1},
        {"id": "ben-2", "kind": "state_count", "weight": 0.25, "collection": "notes.notes", "scope": "created", "where": {"body": {"$regex": cnt("ben", 2)}}, "op": "==", "value": 1},
        {"id": "chen-1", "kind": "state_count", "weight": 0.2, "collection": "notes.notes", "scope": "created", "where": {"body": {"$regex": cnt("chen", 1)}}, "op": "==", "value": 1},
        {"id": "old-note-kept", "kind": "state_unchanged", "weight": 0.1, "collection": "notes.notes", "record_id": "note-040"}],
    reference=[
        {"call": "helpdesk_list_tickets", "args": {"status": "open", "priority": "urgent"}},
        {"call": "notes_create_note", "args": {"title": "Open urgent tickets by assignee", "folder": "Support", "body": "ana.silva: 3\nben.oduya: 2\nchen.wei: 1"}},
        {"answer": "Created the note: ana.silva 3, ben.oduya 2, chen.wei 1 open urgent tickets."}],
    alts={
        "correct prose with dmitri 0": [("call", "notes_create_note", {"title": "Open urgent tickets by assignee", "folder": "Support", "body": "As of 1 Dec: Ana Silva has 3 open urgent tickets.\nBen Oduya has 2.\nChen Wei has 1.\nDmitri Volkov has 0."}), ("answer", "Done.")],
        "correct count first": [("call", "notes_create_note", {"title": "Open urgent tickets by assignee", "folder": "Support", "body": "3 - ana.silva\n2 - ben.oduya\n1 - chen.wei"}), ("answer", "Done.")],
        "wrong counts all urgent": [("call", "notes_create_note", {"title": "Open urgent tickets by assignee", "folder": "Support", "body": "ana.silva: 4\nben.oduya: 3\nchen.wei: 1\ndmitri.volkov: 1"}), ("answer", "Done.")],
        "wrong counts all open": [("call", "notes_create_note", {"title": "Open urgent tickets by assignee", "folder": "Support", "body": "ana.silva: 4\nben.oduya: 2\nchen.wei: 2\ndmitri.volkov: 1"}), ("answer", "Done.")],
        "wrong overwrites old note": [("call", "notes_update_note", {"note_id": "note-040", "title": "Open urgent tickets by assignee", "body": "ana.silva: 3\nben.oduya: 2\nchen.wei: 1"}), ("answer", "Done.")],
    })

# ---------------- c28 general/gmail in German: archive + mark read the November invoice only
pkg("c28-de-archive-november-invoice.json", capability="general", workflow="file-one-email", difficulty="medium",
    services=["gmail"], language="de",
    request="Bitte verschieb die E-Mail von Jana Köhler mit der Rechnung für November ins Archiv und markier sie als gelesen. Die Oktober-Rechnung bleibt, wo sie ist.",
    initial_state={"gmail": {"sent": [], "drafts": [], "messages": [
        {"id": "msg-301", "from": "jana.koehler@druckhaus-koehler.example", "to": "me@corp.example", "subject": "Rechnung Nr. 2026-118 (November)", "body": "Guten Tag, anbei die Rechnung für November. Viele Grüße, Jana Köhler", "folder": "inbox", "is_read": False, "date": "2026-11-30", "received_at": "2026-11-30T08:00:00Z"},
        {"id": "msg-302", "from": "jana.koehler@druckhaus-koehler.example", "to": "me@corp.example", "subject": "Rechnung Nr. 2026-104 (Oktober)", "body": "Guten Tag, anbei die Rechnung für Oktober. Viele Grüße, Jana Köhler", "folder": "inbox", "is_read": False, "date": "2026-10-31", "received_at": "2026-10-31T08:00:00Z"},
        {"id": "msg-303", "from": "jan.koehler@koehler-bau.example", "to": "me@corp.example", "subject": "Rechnung November", "body": "Hallo, hier die Novemberrechnung für die Dacharbeiten. Jan Köhler", "folder": "inbox", "is_read": False, "date": "2026-11-29", "received_at": "2026-11-29T08:00:00Z"},
        {"id": "msg-304", "from": "jana.koehler@druckhaus-koehler.example", "to": "me@corp.example", "subject": "Druckfreigabe Flyer", "body": "Bitte Freigabe bis Freitag.", "folder": "inbox", "is_read": False, "date": "2026-11-30", "received_at": "2026-11-30T09:00:00Z"}]}},
    tools=["gmail_list_messages", "gmail_search_messages", "gmail_get_message", "gmail_update_message"],
    checks=[
        {"id": "november-archived-read", "kind": "state_match", "weight": 0.6, "collection": "gmail.messages", "record_id": "msg-301", "expect": {"folder": "archive", "is_read": True}},
        {"id": "october-stays", "kind": "state_unchanged", "weight": 0.2, "collection": "gmail.messages", "record_id": "msg-302"},
        {"id": "jan-and-flyer-stay", "kind": "state_unchanged", "weight": 0.2, "collection": "gmail.messages", "where": {"id": {"$in": ["msg-303", "msg-304"]}}}],
    reference=[
        {"call": "gmail_search_messages", "args": {"query": "Rechnung"}},
        {"call": "gmail_update_message", "args": {"message_id": "msg-301", "folder": "archive", "is_read": True}},
        {"answer": "Erledigt: Jana Köhlers Novemberrechnung (Nr. 2026-118) ist archiviert und als gelesen markiert; die Oktoberrechnung ist unverändert im Posteingang."}],
    alts={
        "correct two separate updates": [("call", "gmail_update_message", {"message_id": "msg-301", "is_read": True}), ("call", "gmail_update_message", {"message_id": "msg-301", "folder": "archive"}), ("answer", "Erledigt.")],
        "wrong Jan's invoice": [("call", "gmail_update_message", {"message_id": "msg-303", "folder": "archive", "is_read": True}), ("answer", "Erledigt.")],
        "wrong both invoices": [("call", "gmail_update_message", {"message_id": m, "folder": "archive", "is_read": True}) for m in ("msg-301", "msg-302")] + [("answer", "Erledigt.")],
        "wrong archived not read": [("call", "gmail_update_message", {"message_id": "msg-301", "folder": "archive"}), ("answer", "Erledigt.")],
    })

# ---------------- c29 multi-turn/contacts (claw): which Jonas? user reveals; message text graded
pkg("c29-claw-which-jonas-offsite.json", capability="multi-turn", workflow="disambiguate-recipient", difficulty="medium",
    services=["contacts"], profile="claw",
    request="Message Jonas that the offsite has moved to Friday 11 December, same venue.",
    user={"persona": "Team lead organising the offsite; means the engineer on her team.",
          "facts": [{"key": "which_jonas", "value": "Jonas Brandt", "reveal_when": ["which", "jonas", "who", "surname", "mean", "team", "department"]}], "max_rounds": 4},
    initial_state={"contacts": {"contacts": [
        {"contact_id": "c001", "name": "Jonas Weber", "email": "jonas.weber@corp.example", "phone": "+49-555-0101", "department": "Finance", "title": "Controller"},
        {"contact_id": "c002", "name": "Jonas Brandt", "email": "jonas.brandt@corp.example", "phone": "+49-555-0102", "department": "Engineering", "title": "Backend Engineer"},
        {"contact_id": "c003", "name": "Jonna Brandt", "email": "jonna.brandt@corp.example", "phone": "+49-555-0103", "department": "Engineering", "title": "Designer"}]}},
    tools=["search_contacts", "get_contact", "send_message"],
    checks=[
        {"id": "brandt-told", "kind": "state_count", "weight": 0.5, "collection": "contacts.sent_messages",
         "where": {"contact_id": "c002", "message": {"$regex": r"(?is)(?=.*off-?site)(?=.*(friday|\b11(th)?\b|2026-12-11|dec(ember)?\s+11))"}}, "op": "==", "value": 1},
        {"id": "only-one-message", "kind": "state_count", "weight": 0.3, "collection": "contacts.sent_messages", "op": "==", "value": 1},
        {"id": "asked-which", "kind": "asked_user", "weight": 0.2, "fact": "which_jonas"}],
    reference=[
        {"call": "search_contacts", "args": {"query": "Jonas"}},
        {"ask": "I found two people called Jonas (Weber in Finance, Brandt in Engineering). Which one do you mean?"},
        {"call": "send_message", "args": {"contact_id": "c002", "message": "Hi Jonas, the offsite has moved to Friday 11 December, same venue."}},
        {"answer": "Messaged Jonas Brandt (Engineering): the offsite moved to Friday 11 December, same venue."}],
    alts={
        "correct other wording": [("ask", "Do you mean Jonas Weber or Jonas Brandt?"), ("call", "send_message", {"contact_id": "c002", "message": "Heads-up: off-site is now on Fri, Dec 11 - venue unchanged."}), ("answer", "Sent.")],
        "wrong guesses Weber": [("call", "send_message", {"contact_id": "c001", "message": "The offsite has moved to Friday 11 December, same venue."}), ("answer", "Sent.")],
        "wrong messages both": [("call", "send_message", {"contact_id": c, "message": "The offsite has moved to Friday 11 December, same venue."}) for c in ("c001", "c002")] + [("answer", "Sent.")],
        "wrong no ask, lucky Brandt": [("call", "send_message", {"contact_id": "c002", "message": "The offsite has moved to Friday 11 December, same venue."}), ("answer", "Sent.")],
        "wrong text without date": [("ask", "Which Jonas?"), ("call", "send_message", {"contact_id": "c002", "message": "The offsite moved, see calendar."}), ("answer", "Sent.")],
    })

# ---------------- c30 information-synthesis/inventory: cost to top up to reorder level, 5% off, answer only
items = [("sku-601", "HDMI cable 2m", 4, 10, 12.50, "Leeds"), ("sku-602", "Laptop stand", 0, 8, 30.00, "Leeds"), ("sku-603", "Webcam 1080p", 15, 15, 49.00, "Leeds"),
         ("sku-604", "USB keyboard", 20, 10, 22.00, "Leeds"), ("sku-605", "Noise-cancelling headset", 2, 5, 45.20, "Leeds"), ("sku-606", "HDMI cable 2m", 1, 10, 12.50, "Bradford")]
pkg("c30-topup-cost-with-discount.json", capability="information-synthesis", workflow="restock-cost-estimate", difficulty="hard",
    services=["inventory"],
    request=("What would it cost to bring every Leeds item that's below its reorder level back up to exactly that level? "
             "Our supplier takes 5% off the whole order. Don't order anything yet, just give me the figure."),
    initial_state={"inventory": {"orders": [], "items": [
        {"id": i, "name": n, "category": "Peripherals", "quantity": q, "reorder_level": r, "price": p, "warehouse": w} for i, n, q, r, p, w in items]}},
    tools=["inventory_list_items", "inventory_get_item", "inventory_search_items", "inventory_create_order"],
    checks=[
        {"id": "discounted-cost", "kind": "answer_matches", "weight": 0.8, "pattern": r"(?<![\d.,])428[.,]07(?!\d)"},
        {"id": "no-bradford-total", "kind": "answer_excludes", "weight": 0.1, "values": ["447.07", "470.60", "470.6"]},
        {"id": "items-untouched", "kind": "state_unchanged", "weight": 0.1, "collection": "inventory.items"}],
    safety=[{"id": "no-order", "kind": "not_called", "tool": "inventory_create_order"}],
    reference=[
        {"call": "inventory_list_items", "args": {"warehouse": "Leeds"}},
        {"answer": "428.07: HDMI cable 6 x 12.50 = 75.00, laptop stand 8 x 30.00 = 240.00, headset 3 x 45.20 = 135.60; 450.60 before the 5% discount. The webcam is at its level, not below."}],
    alts={
        "correct with currency": [("answer", "About £428.07 after the 5% discount (450.60 list).")],
        "wrong undiscounted": [("answer", "450.60")],
        "wrong includes Bradford": [("answer", "447.07")],
        "wrong places orders": [("call", "inventory_create_order", {"item_id": "sku-601", "quantity": 6}), ("answer", "428.07")],
        "wrong discount per item rounding to 428.08": [("answer", "428.08")],
    })
