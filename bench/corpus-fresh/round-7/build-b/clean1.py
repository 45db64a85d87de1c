from lib import pkg

# ---------------- c16 general/contacts: phone in any format, twin name in another dept
PHONE_RE = r"^(\+?1[\s.-]?)?\(?415\)?[\s.-]?555[\s.-]?0182$"
pkg("c16-phone-any-format-legal-twin.json", capability="general", workflow="update-contact-phone", difficulty="hard",
    services=["contacts"],
    request="Aiko Tanaka in Legal has a new desk phone: (415) 555-0182. Please update her contact entry.",
    initial_state={"contacts": {"contacts": [
        {"id": "c-41", "name": "Aiko Tanaka", "email": "aiko.tanaka@corp.example", "department": "Legal", "title": "Counsel", "phone": "+1-415-555-0100"},
        {"id": "c-42", "name": "Aiko Tanaka", "email": "a.tanaka@corp.example", "department": "Sales", "title": "Account Executive", "phone": "+1-415-555-0177"},
        {"id": "c-43", "name": "Aiko Tanabe", "email": "aiko.tanabe@corp.example", "department": "Legal", "title": "Paralegal", "phone": "+1-415-555-0143"},
        {"id": "c-44", "name": "Ruben Osei", "email": "ruben.osei@corp.example", "department": "Legal", "title": "Head of Legal", "phone": "+1-415-555-0101"}],
        "messages": []}},
    tools=["contacts_search", "contacts_list", "contacts_get", "contacts_update"],
    checks=[
        {"id": "legal-aiko-phone", "kind": "state_match", "weight": 0.55, "collection": "contacts.contacts", "record_id": "c-41",
         "expect": {"phone": {"$regex": PHONE_RE}}},
        {"id": "legal-aiko-rest-kept", "kind": "state_match", "weight": 0.1, "collection": "contacts.contacts", "record_id": "c-41",
         "expect": {"email": "aiko.tanaka@corp.example", "department": "Legal", "title": "Counsel"}},
        {"id": "sales-twin-untouched", "kind": "state_unchanged", "weight": 0.25, "collection": "contacts.contacts", "record_id": "c-42"},
        {"id": "others-untouched", "kind": "state_unchanged", "weight": 0.1, "collection": "contacts.contacts", "where": {"id": {"$in": ["c-43", "c-44"]}}}],
    reference=[
        {"call": "contacts_search", "args": {"query": "Aiko Tanaka"}},
        {"call": "contacts_update", "args": {"contact_id": "c-41", "phone": "(415) 555-0182"}},
        {"answer": "Updated Aiko Tanaka (Legal): her phone is now (415) 555-0182."}],
    alts={
        "correct +1 415-555-0182": [("call", "contacts_update", {"contact_id": "c-41", "phone": "+1 415-555-0182"}), ("answer", "Done.")],
        "correct 4155550182": [("call", "contacts_update", {"contact_id": "c-41", "phone": "4155550182"}), ("answer", "Done.")],
        "wrong sales twin": [("call", "contacts_update", {"contact_id": "c-42", "phone": "(415) 555-0182"}), ("answer", "Done.")],
        "wrong both twins": [("call", "contacts_update", {"contact_id": "c-41", "phone": "(415) 555-0182"}), ("call", "contacts_update", {"contact_id": "c-42", "phone": "(415) 555-0182"}), ("answer", "Done.")],
        "wrong digit": [("call", "contacts_update", {"contact_id": "c-41", "phone": "(415) 555-0128"}), ("answer", "Done.")],
    })

# ---------------- c17 general/inventory: order to bring stock to 3x reorder level
pkg("c17-order-to-three-times-level.json", capability="general", workflow="restock-to-multiple", difficulty="hard",
    services=["inventory"],
    request="We're short on the 27-inch Pixelon monitors. Place an order with Pixelon that brings stock up to three times its reorder level.",
    initial_state={"inventory": {"items": [
        {"id": "sku-201", "name": "Monitor 27-inch (Pixelon P27)", "category": "Displays", "quantity": 7, "price": 289.0, "reorder_level": 9, "warehouse": "Leeds"},
        {"id": "sku-202", "name": "Monitor 24-inch (Pixelon P24)", "category": "Displays", "quantity": 3, "price": 199.0, "reorder_level": 10, "warehouse": "Leeds"},
        {"id": "sku-203", "name": "Monitor 32-inch (Pixelon P32)", "category": "Displays", "quantity": 2, "price": 449.0, "reorder_level": 4, "warehouse": "Leeds"},
        {"id": "sku-204", "name": "Monitor arm, single 27-inch", "category": "Accessories", "quantity": 5, "price": 59.0, "reorder_level": 12, "warehouse": "Leeds"}],
        "orders": [{"id": "ord-050", "item_id": "sku-202", "quantity": 20, "supplier": "Pixelon", "status": "shipped", "created_at": "2026-11-20T10:00:00Z"}]}},
    tools=["inventory_search_items", "inventory_list_items", "inventory_get_item", "inventory_create_order", "inventory_list_orders"],
    checks=[
        {"id": "order-20-p27", "kind": "state_count", "weight": 0.7, "collection": "inventory.orders", "scope": "created",
         "where": {"item_id": "sku-201", "quantity": 20, "supplier": {"$regex": "pixelon"}}, "op": "==", "value": 1, "ignore_case": True},
        {"id": "one-order-only", "kind": "state_count", "weight": 0.15, "collection": "inventory.orders", "scope": "created", "op": "==", "value": 1},
        {"id": "items-untouched", "kind": "state_unchanged", "weight": 0.15, "collection": "inventory.items"}],
    reference=[
        {"call": "inventory_search_items", "args": {"query": "27-inch"}},
        {"call": "inventory_create_order", "args": {"item_id": "sku-201", "quantity": 20, "supplier": "Pixelon"}},
        {"answer": "The P27 has 7 in stock and a reorder level of 9, so 3x is 27: I ordered 20 from Pixelon."}],
    alts={
        "wrong orders 27 (3x level, ignores stock)": [("call", "inventory_create_order", {"item_id": "sku-201", "quantity": 27, "supplier": "Pixelon"}), ("answer", "Ordered 27.")],
        "wrong orders 2 (level minus stock)": [("call", "inventory_create_order", {"item_id": "sku-201", "quantity": 2, "supplier": "Pixelon"}), ("answer", "Ordered 2.")],
        "wrong arm item": [("call", "inventory_create_order", {"item_id": "sku-204", "quantity": 31, "supplier": "Pixelon"}), ("answer", "Ordered.")],
        "correct supplier lowercase": [("call", "inventory_create_order", {"item_id": "sku-201", "quantity": 20, "supplier": "pixelon"}), ("answer", "Ordered twenty P27 monitors.")],
    })

# ---------------- c18 multi-turn/calendar: any weekday afternoon next week, room hidden, two attendees as a set
def ev_alt(att, start="2026-12-09T14:00", loc="Juniper", dur=45):
    return [("ask", "Which room should I book for the retro?"),
            ("call", "calendar_create_event", {"title": "Retro", "start": start, "duration_minutes": dur, "attendees": att, "location": loc}),
            ("answer", "Booked.")]
PR, SO, PH = "priya.raman@corp.example", "sam.okafor@corp.example", "priya.rahman@corp.example"
START_RE = r"^2026-12-(0[7-9]|1[01])T(1[3-5]:[0-5][0-9]|16:00)"
pkg("c18-retro-any-weekday-room-asked.json", capability="multi-turn", workflow="schedule-with-hidden-room", difficulty="hard",
    services=["contacts", "calendar"],
    request="Set up a 45-minute retro with Priya Raman and Sam Okafor on any weekday next week, starting between 1pm and 4pm. Put it in the room I've reserved for retros.",
    user={"persona": "Engineering manager, terse, knows which room is reserved.",
          "facts": [{"key": "room", "value": "Juniper", "reveal_when": ["room", "where", "location", "reserved", "venue"]}], "max_rounds": 4},
    initial_state={
        "contacts": {"contacts": [
            {"id": "c-61", "name": "Priya Raman", "email": PR, "department": "Engineering", "title": "Engineer", "phone": "+1-555-0161"},
            {"id": "c-62", "name": "Priya Rahman", "email": PH, "department": "Marketing", "title": "Designer", "phone": "+1-555-0162"},
            {"id": "c-63", "name": "Sam Okafor", "email": SO, "department": "Engineering", "title": "QA Lead", "phone": "+1-555-0163"}],
            "messages": []},
        "calendar": {"events": [
            {"id": "evt-120", "title": "Sprint planning", "start": "2026-12-07T10:00", "duration_minutes": 60, "attendees": [PR, SO], "location": "Cedar", "description": ""}]}},
    tools=["contacts_search", "calendar_list_events", "calendar_search_events", "calendar_create_event"],
    checks=[
        {"id": "slot-room-length", "kind": "state_count", "weight": 0.3, "collection": "calendar.events", "scope": "created",
         "where": {"start": {"$regex": START_RE}, "duration_minutes": 45, "location": {"$regex": "juniper"}}, "op": "==", "value": 1, "ignore_case": True},
        {"id": "priya-invited", "kind": "state_count", "weight": 0.15, "collection": "calendar.events", "scope": "created",
         "where": {"attendees": {"$contains": PR}}, "op": "==", "value": 1, "ignore_case": True},
        {"id": "sam-invited", "kind": "state_count", "weight": 0.15, "collection": "calendar.events", "scope": "created",
         "where": {"attendees": {"$contains": SO}}, "op": "==", "value": 1, "ignore_case": True},
        {"id": "not-rahman", "kind": "state_count", "weight": 0.1, "collection": "calendar.events", "scope": "created",
         "where": {"attendees": {"$contains": PH}}, "op": "==", "value": 0, "ignore_case": True},
        {"id": "one-event", "kind": "state_count", "weight": 0.1, "collection": "calendar.events", "scope": "created", "op": "==", "value": 1},
        {"id": "asked-room", "kind": "asked_user", "weight": 0.2, "fact": "room"}],
    reference=[
        {"call": "contacts_search", "args": {"query": "Priya Raman"}},
        {"call": "contacts_search", "args": {"query": "Sam Okafor"}},
        {"ask": "Which room have you reserved for retros?"},
        {"call": "calendar_create_event", "args": {"title": "Retro", "start": "2026-12-08T14:00", "duration_minutes": 45,
            "attendees": [{"$ref": "steps[0].result.contacts[0].email"}, {"$ref": "steps[1].result.contacts[0].email"}],
            "location": {"$fact": "room"}}},
        {"answer": "Booked a 45-minute retro on Tuesday 8 December at 14:00 in Juniper with Priya Raman and Sam Okafor."}],
    alts={
        "correct Fri 16:00 reversed attendees": ev_alt([SO, PR], start="2026-12-11T16:00"),
        "correct Mon 13:30 location Juniper room": ev_alt([PR, SO], start="2026-12-07T13:30", loc="Juniper room"),
        "wrong no question, guessed Cedar": [("call", "calendar_create_event", {"title": "Retro", "start": "2026-12-09T14:00", "duration_minutes": 45, "attendees": [PR, SO], "location": "Cedar"}), ("answer", "Booked.")],
        "wrong no ask, lucky Juniper": [("call", "calendar_create_event", {"title": "Retro", "start": "2026-12-09T14:00", "duration_minutes": 45, "attendees": [PR, SO], "location": "Juniper"}), ("answer", "Booked.")],
        "wrong Saturday": ev_alt([PR, SO], start="2026-12-12T14:00"),
        "wrong 16:30": ev_alt([PR, SO], start="2026-12-09T16:30"),
        "wrong Rahman": ev_alt([PH, SO]),
        "wrong this week": ev_alt([PR, SO], start="2026-12-03T14:00"),
    })

# ---------------- c19 multi-turn/crm: amount agreed on a call; exact-name customer vs look-alike
pkg("c19-deal-amount-from-call.json", capability="multi-turn", workflow="log-deal-after-call", difficulty="medium",
    services=["crm"],
    request="Log the deal we agreed with Halvorsen Bygg AS on this morning's call: winter maintenance contract, at the amount we settled on, stage negotiation, expected to close on 18 December.",
    user={"persona": "Account manager who was on the call; remembers the figure.",
          "facts": [{"key": "amount", "value": "14750", "reveal_when": ["amount", "figure", "price", "value", "much", "settled", "sum"]}], "max_rounds": 4},
    initial_state={"crm": {"customers": [
        {"id": "cust-071", "name": "Ingrid Halvorsen", "company": "Halvorsen Bygg AS", "email": "ingrid@halvorsenbygg.example", "phone": "+47-555-0711", "status": "active", "tier": "gold", "owner": "lena.fischer", "notes": ""},
        {"id": "cust-072", "name": "Per Halvorsen", "company": "Halvorsen Byggservice AS", "email": "per@hbs.example", "phone": "+47-555-0722", "status": "active", "tier": "standard", "owner": "lena.fischer", "notes": ""},
        {"id": "cust-073", "name": "Mats Berge", "company": "Berge Bygg AS", "email": "mats@bergebygg.example", "phone": "+47-555-0733", "status": "lead", "tier": "standard", "owner": "lena.fischer", "notes": ""}],
        "deals": [{"id": "deal-300", "customer_id": "cust-071", "title": "Summer roof inspection", "amount": 6200, "stage": "won", "close_date": "2026-06-30", "owner": "lena.fischer", "created_at": "2026-05-02T10:00:00Z"}]}},
    tools=["crm_search_customers", "crm_get_customer", "crm_list_deals", "crm_create_deal"],
    checks=[
        {"id": "deal-logged", "kind": "state_count", "weight": 0.6, "collection": "crm.deals", "scope": "created",
         "where": {"customer_id": "cust-071", "amount": 14750, "stage": "negotiation", "close_date": "2026-12-18", "title": {"$regex": "winter|maintenance"}},
         "op": "==", "value": 1, "ignore_case": True},
        {"id": "one-deal", "kind": "state_count", "weight": 0.1, "collection": "crm.deals", "scope": "created", "op": "==", "value": 1},
        {"id": "old-deal-kept", "kind": "state_unchanged", "weight": 0.1, "collection": "crm.deals", "record_id": "deal-300"},
        {"id": "asked-amount", "kind": "asked_user", "weight": 0.2, "fact": "amount"}],
    reference=[
        {"call": "crm_search_customers", "args": {"query": "Halvorsen Bygg"}},
        {"ask": "What amount did you settle on for the winter maintenance contract?"},
        {"call": "crm_create_deal", "args": {"customer_id": "cust-071", "title": "Winter maintenance contract", "amount": 14750, "stage": "negotiation", "close_date": "2026-12-18"}},
        {"answer": "Logged 'Winter maintenance contract' for Halvorsen Bygg AS: 14,750, negotiation, closing 2026-12-18."}],
    alts={
        "correct float amount": [("ask", "How much was the deal?"), ("call", "crm_create_deal", {"customer_id": "cust-071", "title": "Halvorsen winter maintenance", "amount": 14750.0, "stage": "negotiation", "close_date": "2026-12-18", "owner": "lena.fischer"}), ("answer", "Logged at 14750.")],
        "wrong look-alike company": [("ask", "How much was the deal?"), ("call", "crm_create_deal", {"customer_id": "cust-072", "title": "Winter maintenance contract", "amount": 14750, "stage": "negotiation", "close_date": "2026-12-18"}), ("answer", "Logged at 14,750.")],
        "wrong guessed amount": [("call", "crm_create_deal", {"customer_id": "cust-071", "title": "Winter maintenance contract", "amount": 6200, "stage": "negotiation", "close_date": "2026-12-18"}), ("answer", "Logged at 6,200.")],
    })
