"""Messages on the claw profile: the thread a draft replies under is no value the request asks
for, and the claw services' message operations know the words by which a request asks for one."""

from __future__ import annotations

import re

import pytest

from pipeline.core.services import catalogue, intent_pattern
from pipeline.generation.tools import catalogue_tool
from tests.verify.builders import Data, by, messages, verify

INBOX = [{"message_id": mid, "from": sender, "to": "me@corp.example", "subject": subject, "body": body,
          "date": day, "read": True, "priority": "normal"}
         for mid, sender, subject, body, day in (
             ("msg_001", "ola@harbour-venues.example", "Deposit", "When will the deposit arrive?", "2026-11-30"),
             ("msg_002", "ola@harbour-venues.example", "Menus", "Menus attached.", "2026-11-27"))]


def _draft() -> Data:
    return {
        "capability": "general", "workflow": "hand-built", "services": ["gmail"], "service_profile": "claw",
        "request": {"text": "Ola asked about the deposit. Draft a reply saying we'll pay it by the 10th; don't send it."},
        "initial_state": {"gmail": {"messages": INBOX, "sent_messages": [], "drafts": []}},
        "tools": [catalogue_tool(n, "claw").model_dump(mode="json") for n in ("list_inbox", "create_draft")],
        "checks": [{"id": "drafted", "kind": "state_count", "weight": 0.8, "collection": "gmail.drafts",
                    "where": {"to": "ola@harbour-venues.example", "body": {"$regex": "(?i)(?=.*deposit)(?=.*10th)"}},
                    "op": "==", "value": 1},
                   {"id": "said", "kind": "answer_matches", "weight": 0.2, "pattern": "(?i)draft"}],
        "reference": [{"call": "list_inbox", "args": {}},
                      {"call": "create_draft", "args": {"to": "ola@harbour-venues.example", "subject": "Re: Deposit",
                                                        "body": "Hi Ola, we'll pay the deposit by the 10th.",
                                                        "reply_to_message_id": "msg_001"}},
                      {"answer": "Saved a draft reply to Ola; nothing was sent."}]}


def test_the_thread_a_draft_replies_under_is_not_perturbed() -> None:
    verdict = verify(_draft())
    assert verdict.accepted, messages(verdict)
    assert not [f for f in by(verdict, "perturb_argument") if f.detail.get("argument") == "reply_to_message_id"]


@pytest.mark.parametrize("request_text", ["give Sven in facilities a heads up that they're coming",
                                          "send Sven a heads-up", "write to Sven about it"])
def test_claw_messages_are_asked_for_in_the_words_the_default_profile_knows(request_text: str) -> None:
    op = next(o for o in catalogue("claw")["contacts"].operations if o.endpoint == "/contacts/send_message")
    assert re.search(rf"\b(?:{intent_pattern(list(op.intents))})", request_text.casefold())
