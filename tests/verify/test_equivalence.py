"""Correct agents (pipeline/verify/equivalence.py): an agent that does the task in another correct
way must keep the reference's score, or the checks overconstrain."""

from __future__ import annotations

import pytest

from pipeline.core.codes import Code
from pipeline.core.package import load_package
from pipeline.verify.equivalence import equivalence_findings
from pipeline.verify.questions import GO_AHEAD_QUESTION, KIND_QUESTIONS, phrasings
from tests.verify.builders import reference_run
from tests.verify.tickets import close_two, reply


def test_a_reply_pinned_to_the_letter_punishes_other_wording() -> None:
    run = reference_run(reply("The invoice copy is on its way."))
    found = equivalence_findings(run)
    assert [(f.code, f.detail["variant"], f.detail["score"]) for f in found] == [
        (Code.GRADER_OVERCONSTRAINED, "text_case", 0.0), (Code.GRADER_OVERCONSTRAINED, "text_decorated", 0.0)]
    assert all(f.witness is not None and f.witness.holds for f in found)


def test_a_reply_checked_for_what_the_request_dictates_lets_any_wording_pass() -> None:
    assert equivalence_findings(reference_run(reply({"$contains": "invoice copy"}))) == []


def test_closing_the_tickets_in_either_order_passes_alike() -> None:
    assert equivalence_findings(reference_run(close_two())) == []


def test_a_reference_short_of_full_score_is_not_measured() -> None:
    doc = reply("The invoice copy is on its way.")
    doc["checks"][0]["where"]["body"] = "Something the reference never writes."
    run = reference_run(doc)
    assert run.score == 0.0 and equivalence_findings(run) == []


def test_a_date_fact_is_asked_for_by_the_day_question_and_a_wrong_guess() -> None:
    doc = close_two()
    doc["user"] = {"facts": [{"key": "follow_up_date", "value": "2026-12-09", "reveal_when": ["follow"]}]}
    asked = phrasings(load_package(doc), "follow_up_date")
    assert asked[0] == KIND_QUESTIONS["date"] and asked[1].startswith("Should I go with ")
    assert "2026-12-09" not in asked[1] and GO_AHEAD_QUESTION not in asked
    assert phrasings(load_package(doc), "no_such_fact") == []


# --------------------------------------------------------------------------- a move the request does not measure
def _nudge(request: str, level: int) -> dict:
    from tests.verify.builders import package
    items = [{"id": "sku-7", "name": "Thermal labels 100x150", "category": "Shipping", "quantity": 9, "price": 18.0,
              "reorder_level": 12, "warehouse": "North"},
             {"id": "sku-8", "name": "Packing tape", "category": "Shipping", "quantity": 30, "price": 3.5,
              "reorder_level": 10, "warehouse": "North"}]
    return load_package(package(
        request, {"inventory": {"items": items, "orders": []}}, ["inventory_search_items", "inventory_update_item"],
        [{"id": "level", "kind": "state_match", "weight": 0.8, "collection": "inventory.items", "record_id": "sku-7",
          "expect": {"reorder_level": level}},
         {"id": "others", "kind": "state_unchanged", "weight": 0.2, "collection": "inventory.items",
          "where": {"id": {"$ne": "sku-7"}}}],
        [{"call": "inventory_search_items", "args": {"query": "labels"}},
         {"call": "inventory_update_item", "args": {"item_id": "sku-7", "reorder_level": level}},
         {"answer": f"Raised the thermal labels' reorder level from 12 to {level}."}]))


def test_a_number_moved_a_bit_is_the_agents_to_choose() -> None:
    """"a bit" says which way, not how far: 18 (half as far as 24) is as right as 24."""
    found = [f for f in equivalence_findings(reference_run(_nudge("bump the thermal labels' reorder level up a bit, "
                                                                  "we ran dry twice", 24)))
             if f.witness is not None and f.witness.name == "other_choice"]
    assert [(f.code, f.detail.get("argument"), f.witness.holds) for f in found] == [
        (Code.GRADER_OVERCONSTRAINED, "reorder_level", True)]
    assert any(a.get("arguments", {}).get("reorder_level") == 18 for a in found[0].witness.actions)


def test_a_number_the_request_states_is_not_the_agents_to_choose() -> None:
    found = [f for f in equivalence_findings(reference_run(_nudge("bump the thermal labels' reorder level up a bit, "
                                                                  "to 24", 24)))
             if f.witness is not None and f.witness.name == "other_choice"]
    assert found == []


def test_a_role_copied_from_a_record_is_not_composed_text() -> None:
    """A title an email writes out ("Head of Procurement": capitalized words joined by "of") is
    copied, so no correct agent re-cases or punctuates it; a title of the agent's own words is composed."""
    from pipeline.verify.perturbations import ComposedText
    from tests.verify.builders import package
    mail = {"id": "msg-1", "from": "hw@oldco.example", "to": "me@corp.example", "subject": "News",
            "body": "From Monday I'm Head of Procurement at Brightline.", "folder": "inbox", "is_read": False,
            "date": "2026-11-30", "received_at": "2026-11-30T16:20:00Z"}
    pkg = load_package(package("update her card", {"gmail": {"messages": [mail], "sent": [], "drafts": []}},
                               ["gmail_search_messages"], [{"id": "x", "kind": "answer_contains", "weight": 1.0,
                                                            "values": ["done"]}], [{"answer": "done"}]))
    composed = ComposedText(pkg)
    assert not composed("title", "Head of Procurement", {"type": "string"})
    assert composed("title", "Procurement lead at Brightline", {"type": "string"})



def test_a_name_the_request_gives_and_a_line_of_a_checklist_are_copied_not_composed() -> None:
    """"a playlist called Deep work" gives the name, any case; "- Book movers" of a note's checklist
    made a todo is that line, copied; text of the agent's own is still composed."""
    from pipeline.verify.perturbations import ComposedText
    from tests.verify.builders import package
    note = {"id": "note-1", "title": "Office move", "body": "Before the move:\n- Book movers\n[ ] Order new desk chairs\n"
            "2. Update address on website", "tags": [], "created_at": "2026-11-20T10:00:00Z",
            "updated_at": "2026-11-20T10:00:00Z"}
    pkg = load_package(package("Make a playlist called Deep work, and a todo for each line of my move note.",
                               {"notes": {"notes": [note]}}, ["notes_list_notes"],
                               [{"id": "x", "kind": "answer_contains", "weight": 1.0, "values": ["done"]}],
                               [{"answer": "done"}]))
    composed = ComposedText(pkg)
    assert not composed("name", "Deep work", {"type": "string"}) and not composed("name", "deep work", {"type": "string"})
    assert composed("name", "Deep work mix", {"type": "string"})
    for line in ("Book movers", "Order new desk chairs", "Update address on website"):
        assert not composed("title", line, {"type": "string"})
    assert composed("title", "Book the movers", {"type": "string"})


@pytest.mark.parametrize(("request_text", "value", "copied"), [
    ("Il devient Responsable logistique, toujours dans le même service.", "Responsable logistique", True),
    ("She is now Head of partnerships at the studio.", "Head of partnerships", True),
    ("Book the venue and order the banners.", "Book the venue", False),  # the sentence's own capital
    ("Add a todo to book the venue.", "Book the venue", False),  # not written out as it is written
])
def test_a_title_the_request_writes_out_mid_sentence_is_copied(request_text: str, value: str, copied: bool) -> None:
    """A job title written out with its capital inside a sentence (French capitalizes its first word
    only) is copied, so no correct agent re-cases or punctuates it."""
    from pipeline.verify.perturbations import ComposedText
    from tests.verify.builders import package
    pkg = load_package(package(request_text, {"notes": {"notes": []}}, ["notes_list_notes"],
                               [{"id": "x", "kind": "answer_contains", "weight": 1.0, "values": ["done"]}],
                               [{"answer": "done"}]))
    assert ComposedText(pkg).copied_name(value) is copied

# --------------------------------------------------------------------------- the order of what an answer lists


def _urgent(request: str, pattern: str, answer: str) -> dict:
    from tests.verify.builders import package, ticket

    tickets = [ticket("tkt-201", "API 500s", "it@zephyr.example", "open", "urgent"),
               ticket("tkt-202", "Login loop", "admin@brookline.example", "open", "urgent"),
               ticket("tkt-203", "Slow export", "ops@amberlight.example", "open", "urgent"),
               ticket("tkt-204", "Typo", "hi@corvid.example", "open", "low")]
    return package(request, {"helpdesk": {"tickets": tickets, "replies": []}}, ["helpdesk_list_tickets"],
                   [{"id": "list", "kind": "answer_matches", "weight": 0.7, "pattern": pattern},
                    {"id": "no-low", "kind": "answer_excludes", "weight": 0.3, "values": ["corvid"]}],
                   [{"call": "helpdesk_list_tickets", "args": {"status": "open", "priority": "urgent"}},
                    {"answer": answer}])


ASKED = "Which customers have an open urgent ticket? Just the company names."
LISTED = "Open urgent tickets: Zephyr (tkt-201), Brookline (tkt-202) and Amberlight (tkt-203)."


def test_an_answer_pattern_that_pins_an_order_the_request_never_gives_punishes_a_correct_list() -> None:
    from tests.verify.builders import refused_by, verify

    doc = _urgent(ASKED, "(?s)zephyr.*brookline.*amberlight", LISTED)
    finding = refused_by(doc, verify(doc), Code.GRADER_OVERCONSTRAINED, "answer_order")
    assert finding.witness.actions[-1]["text"] == (
        "Open urgent tickets: Amberlight (tkt-203), Brookline (tkt-202) and Zephyr (tkt-201).")
    assert finding.claim is not None  # no order given: a reading the reader confirms


def test_a_list_in_any_order_or_an_order_the_request_gives_is_not_tried() -> None:
    from tests.verify.builders import by, messages, verify

    unordered = "(?s)(?=.*zephyr)(?=.*brookline)(?=.*amberlight)"
    for doc in (_urgent(ASKED, unordered, LISTED),
                _urgent(ASKED.replace("?", ", oldest ticket first?", 1), "(?s)zephyr.*brookline.*amberlight", LISTED),
                _urgent(ASKED, "(?s)3 urgent.*zephyr", "There are 3 urgent tickets; the first is Zephyr (tkt-201).")):
        verdict = verify(doc)
        assert by(verdict, "answer_order") == [], messages(verdict)


def test_words_that_order_the_steps_do_not_order_the_list() -> None:
    from pipeline.verify.equivalence import orders_a_list

    for said in ("Mark her invoice paid. Then tell me who else still owes.", "First, close it, then list who is left.",
                 "Close it and then tell me who is still open.", "After you've closed it, list the rest.",
                 "Which customers that Ottilie looks after are still only leads?", "List our after-sales tickets."):
        assert not orders_a_list(said), said
    for said in ("List them oldest first.", "Then tell me who owes, sorted by name.", "Name the owners, then by date.",
                 "Steps: 1) hold the button, 2) wait for the light, 3) calibrate."):
        assert orders_a_list(said), said


def test_only_a_chain_of_literal_items_is_an_ordered_list() -> None:
    from pipeline.verify.equivalence import _chained_items

    assert _chained_items("(?s)zephyr.*brookline.*amberlight") == (["zephyr", "brookline", "amberlight"], False)
    assert _chained_items("(?is)Zephyr[\\s\\S]*?Brookline") == (["Zephyr", "Brookline"], True)
    assert _chained_items("total.*\\d+") is None
    assert _chained_items("(?s)zephyr|brookline") is None
    assert _chained_items("(?s)42.*17") is None
    assert _chained_items("(?s)^(?!.*(?:pellow|marshfield)).*halden.*marsh\\s*(?:&|and)\\s*tulley") == (
        ["halden", "marsh\\s*(?:&|and)\\s*tulley"], False)  # exclusions aside, items may be patterns


def test_a_request_that_orders_a_list_by_age_or_name_gives_its_order() -> None:
    from pipeline.verify.equivalence import _ORDER_GIVEN

    for said in ("List the transactions oldest first.", "newest one first please", "in date order",
                 "sorted alphabetically", "in chronological order"):
        assert _ORDER_GIVEN.search(said), said
    assert not _ORDER_GIVEN.search("Invite Lena, Priya and Tomas to the review.")


def test_a_bulleted_list_is_reordered_line_by_line() -> None:
    """Entries that run past their item ("Assembly Rooms, Ludlow (18 Dec)") move whole, bullets kept."""
    from pipeline.verify.equivalence import _chained_items, _reversed_items
    text = "Venues:\n- Assembly Rooms, Ludlow (18 Dec)\n- Corn Exchange, Newbury (11 Dec)\n- Lyric Theatre (4 Dec)"
    chained = _chained_items("(?s)Assembly Rooms.*Corn Exchange.*Lyric")
    assert chained is not None
    assert _reversed_items(text, chained, False) == (
        "Venues:\n- Lyric Theatre (4 Dec)\n- Corn Exchange, Newbury (11 Dec)\n- Assembly Rooms, Ludlow (18 Dec)")
    assert _reversed_items(text, chained, False, [1, 0, 2]) == (
        "Venues:\n- Corn Exchange, Newbury (11 Dec)\n- Assembly Rooms, Ludlow (18 Dec)\n- Lyric Theatre (4 Dec)")
    assert _reversed_items("Assembly Rooms and Lyric, Corn Exchange", chained, False) is None  # not in that order


@pytest.mark.parametrize(("title", "pattern", "reordered"), [
    ("Tide times - Port Mellan, 3 Dec", "(?i)port mellan.*3 dec", False),  # the request dictates the title
    ("Shortlist: Anouk Delacroix, Teodor Vasile", "(?s)Anouk.*Teodor", True),  # the agent's own list
])
def test_a_text_the_request_dictates_keeps_its_order(title: str, pattern: str, reordered: bool) -> None:
    from tests.verify.builders import package
    doc = package("Save a note titled 'Tide times - Port Mellan, 3 Dec' with the names on it.", {"notes": {"notes": []}},
                  ["notes_create_note"],
                  [{"id": "saved", "kind": "state_count", "weight": 1.0, "collection": "notes.notes", "scope": "created",
                    "where": {"title": {"$regex": pattern}}, "op": "==", "value": 1}],
                  [{"call": "notes_create_note", "args": {"title": title, "body": "Names."}}, {"answer": "Saved."}])
    found = [f.detail["variant"] for f in equivalence_findings(reference_run(load_package(doc)))]
    assert ("text_order" in found) is reordered


def _tidy(checks_extra: list[dict]) -> dict:
    from tests.verify.builders import package
    tasks = [{"id": f"todo-{i}", "title": title, "priority": "normal", "due_date": "2026-12-12", "status": "open",
              "notes": "", "created_at": "2026-11-20T09:00:00Z"}
             for i, title in enumerate(["Recital: tune the hall piano", "Recital: print programmes",
                                        "Recital: order flowers (cancelled)", "Recital: book photographer (cancelled)"], 1)]
    return package("The recital prep is finished: mark the two recital tasks still open as done and delete the two "
                   "cancelled ones.", {"todo": {"tasks": tasks}}, ["todo_search_tasks", "todo_update_task", "todo_delete_task"],
                   [{"id": "t1", "kind": "state_match", "weight": 0.2, "collection": "todo.tasks", "record_id": "todo-1",
                     "expect": {"status": "done"}},
                    {"id": "t2", "kind": "state_match", "weight": 0.2, "collection": "todo.tasks", "record_id": "todo-2",
                     "expect": {"status": "done"}},
                    {"id": "gone", "kind": "state_count", "weight": 0.6 - sum(c["weight"] for c in checks_extra),
                     "collection": "todo.tasks", "where": {"id": {"$in": ["todo-3", "todo-4"]}}, "op": "==", "value": 0},
                    *checks_extra],
                   [{"call": "todo_search_tasks", "args": {"query": "Recital"}},
                    {"call": "todo_delete_task", "args": {"task_id": "todo-3"}},
                    {"call": "todo_delete_task", "args": {"task_id": "todo-4"}},
                    {"call": "todo_update_task", "args": {"task_id": "todo-1", "status": "done"}},
                    {"call": "todo_update_task", "args": {"task_id": "todo-2", "status": "done"}},
                    {"answer": "Deleted the two cancelled recital tasks and marked the other two done."}])


def test_a_grader_that_pins_deletes_before_updates_punishes_the_other_order() -> None:
    """The reorder agent moves every independent write of the first one's tool after the rest: an
    order check that wants the deletes first (which the request never asks) fails it."""
    pinned = equivalence_findings(reference_run(_tidy([{"id": "deletes-first", "kind": "order", "weight": 0.2,
                                                        "tools": ["todo_delete_task", "todo_update_task"]}])))
    assert [(f.code, f.detail["variant"]) for f in pinned] == [(Code.GRADER_OVERCONSTRAINED, "reorder")]
    assert [a["name"] for a in pinned[0].witness.actions if a["type"] == "tool_call"][1:] == [
        "todo_update_task", "todo_update_task", "todo_delete_task", "todo_delete_task"]
    assert equivalence_findings(reference_run(_tidy([]))) == []


@pytest.mark.parametrize(("text", "cased"), [
    ("quarterly review with ingrid", "Quarterly Review With Ingrid"),
    ("Escalated INC-20931 to McKay", "Escalated INC-20931 To McKay"),  # ids and names kept
    ("Use the reset page at https://account.ferries.example/reset - it sends a link",
     "Use The Reset Page At https://account.ferries.example/reset - It Sends A Link"),  # a path is case-sensitive
])
def test_a_title_cased_text_keeps_ids_names_and_web_addresses(text: str, cased: str) -> None:
    """The decorated correct agent title-cases a title; what a person would never re-case stays."""
    from pipeline.verify.equivalence import title_cased
    assert title_cased(text) == cased


def _rehearsal_code(expect: dict) -> dict:
    from tests.verify.builders import package
    event = {"id": "evt-001", "title": "Full orchestra rehearsal", "start": "2026-12-05T10:00", "duration_minutes": 180,
             "attendees": [], "location": "St Cuthbert's Main Hall", "description": "Sibelius 2, mvts 1 and 4.",
             "created_at": "2026-11-20T10:00:00Z"}
    return package("Add the side-door code 8305# to the description of Saturday's rehearsal, keeping what's already "
                   "written there.", {"calendar": {"events": [event]}}, ["calendar_get_event", "calendar_update_event"],
                   [{"id": "code-added", "kind": "state_match", "weight": 1.0, "collection": "calendar.events",
                     "record_id": "evt-001", "expect": {"description": expect}}],
                   [{"call": "calendar_get_event", "args": {"event_id": "evt-001"}},
                    {"call": "calendar_update_event", "args": {
                        "event_id": "evt-001", "description": "Sibelius 2, mvts 1 and 4.\nSide door code: 8305#"}},
                    {"answer": "Added the side-door code 8305# to Saturday's rehearsal."}])


def test_text_an_update_keeps_is_the_record_s_and_only_what_it_adds_is_rewritten() -> None:
    """"keeping what's already written there": the correct agents re-case and decorate only what the
    update adds; a check that holds the kept text as written lets them pass, one that pins the
    added words to the letter does not."""
    kept = {"$regex": "(?s)^Sibelius 2, mvts 1 and 4\\..*8305#"}
    assert equivalence_findings(reference_run(_rehearsal_code(kept))) == []
    pinned = equivalence_findings(reference_run(_rehearsal_code("Sibelius 2, mvts 1 and 4.\nSide door code: 8305#")))
    assert [f.detail["variant"] for f in pinned] == ["text_case", "text_decorated"]
    edited = [f.witness.actions[1]["arguments"]["description"] for f in pinned if f.witness is not None]
    assert all(text.startswith("Sibelius 2, mvts 1 and 4.") for text in edited)


def _bumped(priority: str) -> dict:
    from tests.verify.builders import TICKETS, package
    return package("The Harwick invoice-copy ticket is stuck: bump its priority up.", {"helpdesk": {"tickets": TICKETS}},
                   ["helpdesk_get_ticket", "helpdesk_update_ticket"],
                   [{"id": "raised", "kind": "state_match", "weight": 1.0, "collection": "helpdesk.tickets",
                     "record_id": "tkt-004", "expect": {"priority": priority}}],
                   [{"call": "helpdesk_get_ticket", "args": {"ticket_id": "tkt-004"}},
                    {"call": "helpdesk_update_ticket", "args": {"ticket_id": "tkt-004", "priority": priority}},
                    {"answer": f"tkt-004 is now {priority} priority."}])


def test_a_priority_bumped_up_without_a_level_may_go_one_rung() -> None:
    """"bump its priority up" from normal: high is a correct reading, so a check pinning urgent
    punishes it; where the reference goes one rung (high), no other rung is tried."""
    found = [f for f in equivalence_findings(reference_run(_bumped("urgent"))) if f.detail["variant"] == "other_choice"]
    assert [f.detail["value"] for f in found] == ["high"] and found[0].witness is not None
    assert equivalence_findings(reference_run(_bumped("high"))) == []
