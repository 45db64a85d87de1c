"""The deterministic simulated user (pipeline/user.py)."""

from __future__ import annotations

import pytest

from pipeline.core.package import Fact, User
from pipeline.core.user import NEUTRAL_REPLY, SimulatedUser, asks_for

DAY = Fact(key="day", value="2026-12-03", reveal_when=["day", "date", "when"])
ROOM = Fact(key="meeting_room", value="Room 4", reveal_when=["room", "where"])


def user(*facts: Fact, max_rounds: int = 6) -> SimulatedUser:
    return SimulatedUser(User(persona="Answers briefly.", facts=list(facts), max_rounds=max_rounds))


@pytest.mark.parametrize(
    "question",
    ["Which day works for you?", "WHEN should it be?", "What Date?", "Any preferred days?", "day?"],
)
def test_reveals_on_a_reveal_word_at_a_word_start_in_any_case(question: str) -> None:
    reply = user(DAY, ROOM).reply(question)
    assert reply.revealed == ["day"]
    assert reply.text == "day: 2026-12-03"


@pytest.mark.parametrize(
    "question",
    ["Is today fine?", "Shall I update the invite?", "Anything else?", "Somewhen soon, or anytime?"],
)
def test_neutral_reply_when_no_reveal_word_starts_a_word(question: str) -> None:
    simulated = user(DAY)
    reply = simulated.reply(question)
    assert (reply.text, reply.revealed) == (NEUTRAL_REPLY, [])
    assert simulated.revealed == []


def test_asks_for_is_whole_word_start() -> None:
    assert asks_for("the date", DAY)
    assert asks_for("dates?", DAY)
    assert not asks_for("update it", DAY)


def test_one_question_can_reveal_several_facts_and_revealed_has_no_duplicates() -> None:
    simulated = user(DAY, ROOM)
    reply = simulated.reply("Which day, and where?")
    assert reply.revealed == ["day", "meeting_room"]
    assert reply.text == "day: 2026-12-03 meeting room: Room 4"
    simulated.reply("And the date again?")
    assert simulated.revealed == ["day", "meeting_room"]


def test_max_rounds_then_only_neutral() -> None:
    simulated = user(DAY, ROOM, max_rounds=2)
    assert simulated.reply("Anything else?").revealed == []
    assert simulated.reply("Which day?").revealed == ["day"]
    late = simulated.reply("Which room?")
    assert (late.text, late.revealed) == (NEUTRAL_REPLY, [])
    assert simulated.revealed == ["day"]


def test_correction_fact_replies_with_a_correction() -> None:
    fix = Fact(key="recipient", value="Omar Reyes", reveal_when=["who", "recipient"], corrects="Omar Haddad")
    reply = user(fix).reply("Who exactly should get it?")
    assert reply.revealed == ["recipient"]
    assert reply.text == "Correction: not Omar Haddad, use Omar Reyes."


def test_no_user_always_neutral() -> None:
    simulated = SimulatedUser(None)
    assert simulated.reply("Which day?").text == NEUTRAL_REPLY
    assert simulated.revealed == []
