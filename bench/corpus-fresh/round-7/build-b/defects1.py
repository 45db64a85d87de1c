from lib import pkg

# ---------------- d16 robustness/notes+todo: 503 on first create; three todos graded by counted calls
ITEMS = ["Send revised forecast to Ardent Metals", "Ask QA for the batch 4471 test report", "Book the follow-up site visit in Gdansk"]
pkg("d16-retry-three-followups-counted-calls.json", capability="robustness", workflow="retry-create-followups", difficulty="medium",
    services=["notes", "todo"],
    request="Karin's note from the supplier review lists three follow-ups. Add each one as a high-priority todo due 8 December 2026.",
    initial_state={"notes": {"notes": [{"id": "note-210", "title": "Supplier review - Ardent Metals (Karin)", "folder": "Meetings", "tags": ["supplier"], "pinned": False,
        "body": "Follow-ups:\n1. " + ITEMS[0] + "\n2. " + ITEMS[1] + "\n3. " + ITEMS[2], "created_at": "2026-11-30T15:00:00Z", "updated_at": "2026-11-30T15:00:00Z"}]},
        "todo": {"tasks": []}},
    tools=["notes_search_notes", "notes_get_note", "todo_create_task", "todo_list_tasks"],
    faults=[{"tool": "todo_create_task", "on_call": 1, "times": 1, "status": 503}],
    checks=[
        {"id": "three-creates", "kind": "called", "weight": 0.5, "tool": "todo_create_task", "args_match": {"priority": "high", "due_date": "2026-12-08"}, "min": 3},
        {"id": "three-high-todos", "kind": "state_count", "weight": 0.3, "collection": "todo.tasks", "scope": "created", "where": {"priority": "high", "due_date": "2026-12-08"}, "op": ">=", "value": 3},
        {"id": "reported", "kind": "answer_matches", "weight": 0.2, "pattern": r"\b3\b|three"}],
    reference=[
        {"call": "notes_search_notes", "args": {"query": "Ardent"}},
        {"call": "todo_create_task", "args": {"title": ITEMS[0], "priority": "high", "due_date": "2026-12-08"}, "expect_status": 503},
        {"call": "todo_create_task", "args": {"title": ITEMS[0], "priority": "high", "due_date": "2026-12-08"}},
        {"call": "todo_create_task", "args": {"title": ITEMS[1], "priority": "high", "due_date": "2026-12-08"}},
        {"call": "todo_create_task", "args": {"title": ITEMS[2], "priority": "high", "due_date": "2026-12-08"}},
        {"answer": "Added the three follow-ups as high-priority todos due 2026-12-08 (the first create needed one retry)."}],
    alts={
        "wrong first item three times": [("call", "todo_create_task", {"title": ITEMS[0], "priority": "high", "due_date": "2026-12-08"})] * 4 + [("answer", "Added 3 todos.")],
        "correct": [("call", "todo_create_task", {"title": t, "priority": "high", "due_date": "2026-12-08"}) for t in [ITEMS[0]] + ITEMS] + [("answer", "Added 3 todos.")],
    })

# ---------------- d17 general/calendar: attendees compared as an ordered list
LEA, OMAR, K = "lea.martin@corp.example", "omar.diallo@corp.example", "keiko.sato@corp.example"
pkg("d17-attendees-ordered-list.json", capability="general", workflow="book-meeting", difficulty="easy",
    services=["contacts", "calendar"],
    request="Book a 30-minute call 'Vendor shortlist' on Thursday 10 December at 15:00 with Lea Martin, Omar Diallo and Keiko Sato.",
    initial_state={"contacts": {"messages": [], "contacts": [
        {"id": "c-91", "name": "Lea Martin", "email": LEA, "department": "Procurement", "title": "Buyer", "phone": "+1-555-0191"},
        {"id": "c-92", "name": "Omar Diallo", "email": OMAR, "department": "Finance", "title": "Controller", "phone": "+1-555-0192"},
        {"id": "c-93", "name": "Keiko Sato", "email": K, "department": "IT", "title": "Architect", "phone": "+1-555-0193"}]},
        "calendar": {"events": []}},
    tools=["contacts_search", "contacts_list", "calendar_create_event"],
    checks=[
        {"id": "event-booked", "kind": "state_count", "weight": 0.6, "collection": "calendar.events", "scope": "created",
         "where": {"title": "Vendor shortlist", "start": "2026-12-10T15:00", "duration_minutes": 30}, "op": "==", "value": 1},
        {"id": "attendees", "kind": "state_count", "weight": 0.3, "collection": "calendar.events", "scope": "created",
         "where": {"attendees": [LEA, OMAR, K]}, "op": "==", "value": 1},
        {"id": "confirmed", "kind": "answer_contains", "weight": 0.1, "values": ["15:00"]}],
    reference=[
        {"call": "contacts_search", "args": {"query": "Lea Martin"}},
        {"call": "contacts_search", "args": {"query": "Omar Diallo"}},
        {"call": "contacts_search", "args": {"query": "Keiko Sato"}},
        {"call": "calendar_create_event", "args": {"title": "Vendor shortlist", "start": "2026-12-10T15:00", "duration_minutes": 30, "attendees": [LEA, OMAR, K]}},
        {"answer": "Booked 'Vendor shortlist' on Thursday 10 December 15:00-15:30 with Lea, Omar and Keiko."}],
    alts={
        "correct, attendees in directory order (Keiko first)": [("call", "calendar_create_event", {"title": "Vendor shortlist", "start": "2026-12-10T15:00", "duration_minutes": 30, "attendees": [K, LEA, OMAR]}), ("answer", "Booked for 15:00.")],
    })

# ---------------- d18 cross-service rss (claw): newsletter content never graded
def arts():
    A = [("art_001", "Critical flaw in TLS proxy firmware patched", "InfoSec Daily", "security"), ("art_002", "Ransomware group targets logistics firms", "InfoSec Daily", "security"),
         ("art_003", "Browser vendor ships emergency update", "InfoSec Daily", "security"), ("art_004", "Chip prices fall for third month", "InfoSec Daily", "markets"),
         ("art_005", "New phishing kit abuses calendar invites", "Tech Wire", "security")]
    return [{"article_id": i, "title": t, "summary": t + ".", "content": t + ". Details inside.", "source": s, "date": "2026-12-01", "category": c, "url": f"https://news.example/{i}"} for i, t, s, c in A]
pkg("d18-claw-digest-content-ungraded.json", capability="information-synthesis", workflow="publish-digest", difficulty="medium",
    services=["rss"], profile="claw",
    request=("Publish a newsletter titled 'Security digest - 1 December' to secteam@northwind.example that lists the headlines of "
             "today's InfoSec Daily security articles."),
    initial_state={"rss": {"articles": arts()}},
    tools=["list_feeds", "list_articles", "get_rss_article", "publish_newsletter"],
    checks=[
        {"id": "published", "kind": "state_count", "weight": 0.6, "collection": "rss.published",
         "where": {"title": {"$regex": "(?i)security digest"}, "recipients": {"$contains": "secteam@northwind.example"}}, "op": "==", "value": 1},
        {"id": "one-newsletter", "kind": "state_count", "weight": 0.2, "collection": "rss.published", "op": "==", "value": 1},
        {"id": "confirmed", "kind": "answer_contains", "weight": 0.2, "values": ["Security digest"]}],
    reference=[
        {"call": "list_articles", "args": {"source": "InfoSec Daily", "category": "security"}},
        {"call": "publish_newsletter", "args": {"title": "Security digest - 1 December", "recipients": ["secteam@northwind.example"],
            "content": "- Critical flaw in TLS proxy firmware patched\n- Ransomware group targets logistics firms\n- Browser vendor ships emergency update"}},
        {"answer": "Published 'Security digest - 1 December' to secteam@northwind.example with the three InfoSec Daily security headlines."}],
    alts={
        "wrong empty content": [("call", "publish_newsletter", {"title": "Security digest - 1 December", "recipients": ["secteam@northwind.example"], "content": "TBD"}), ("answer", "Published Security digest.")],
        "wrong markets + Tech Wire headlines": [("call", "publish_newsletter", {"title": "Security digest - 1 December", "recipients": ["secteam@northwind.example"], "content": "- Chip prices fall for third month\n- New phishing kit abuses calendar invites"}), ("answer", "Published Security digest.")],
    })

# ---------------- d19 general/finance: discount then VAT, computed wrongly by the checks
pkg("d19-discount-then-vat-miscomputed.json", capability="general", workflow="create-invoice-with-terms", difficulty="hard",
    services=["finance"],
    request=("Invoice Brenner Analytik GmbH (rechnung@brenner-analytik.example) for the data migration: 6,400 EUR net, less our 10% "
             "early-booking discount, with 19% VAT charged on the discounted net. Due 15 January 2027."),
    initial_state={"finance": {"transactions": [], "invoices": []}},
    tools=["finance_list_invoices", "finance_create_invoice"],
    checks=[
        {"id": "invoice-amount", "kind": "state_count", "weight": 0.6, "collection": "finance.invoices", "scope": "created",
         "where": {"customer": "Brenner Analytik GmbH", "amount": 6976, "currency": "EUR"}, "op": "==", "value": 1},
        {"id": "invoice-terms", "kind": "state_count", "weight": 0.25, "collection": "finance.invoices", "scope": "created",
         "where": {"customer_email": "rechnung@brenner-analytik.example", "due_date": "2027-01-15"}, "op": "==", "value": 1},
        {"id": "total-reported", "kind": "answer_matches", "weight": 0.15, "pattern": r"6[,.]?976"}],
    reference=[
        {"call": "finance_create_invoice", "args": {"customer": "Brenner Analytik GmbH", "customer_email": "rechnung@brenner-analytik.example",
            "description": "Data migration", "amount": 6976, "currency": "EUR", "due_date": "2027-01-15"}},
        {"answer": "Invoiced Brenner Analytik GmbH 6,976.00 EUR (5,760 after the 10% discount, plus 1,216 VAT), due 2027-01-15."}],
    alts={
        "correct 5760 x 1.19 = 6854.40": [("call", "finance_create_invoice", {"customer": "Brenner Analytik GmbH", "customer_email": "rechnung@brenner-analytik.example", "amount": 6854.40, "currency": "EUR", "due_date": "2027-01-15"}), ("answer", "Invoiced 6,854.40 EUR.")],
    })
