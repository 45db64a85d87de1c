"""The deterministic simulated user (pipeline/core/user.py): each way a question asks for a fact,
and the questions that must get the neutral reply."""

from __future__ import annotations

import re

import pytest

from pipeline.core.package import Fact, User
from pipeline.core.user import (
    NEUTRAL_REPLY,
    SimulatedUser,
    asks_for,
    asks_to_go_ahead,
    fact_sentence,
    kind_of,
)

DAY = Fact(key="day", value="2026-12-03", reveal_when=["day", "date", "when"])
ROOM = Fact(key="meeting_room", value="Room 4", reveal_when=["room", "where"])
SLOT = Fact(key="start_slot", value="15:00", reveal_when=["timeslot"])
SEATS = Fact(key="headcount", value="12", reveal_when=["headcount"])
EMAIL = Fact(key="billing_contact", value="ap@lumen.example", reveal_when=["billing"])
MOVE = Fact(key="new_date", value="2026-12-08", reveal_when=["reschedule"], corrects="2026-12-07")


def user(*facts: Fact, max_rounds: int = 6) -> SimulatedUser:
    return SimulatedUser(User(persona="Answers briefly.", facts=list(facts), max_rounds=max_rounds))


@pytest.mark.parametrize("question", ["Which day works for you?", "WHEN should it be?", "What Date?",
                                      "Any preferred days?", "day?"])
def test_a_reveal_word_at_a_word_start_in_any_case(question: str) -> None:
    reply = user(DAY, ROOM).reply(question)
    assert reply.revealed == ["day"]
    assert reply.text == "Please make it 2026-12-03."


@pytest.mark.parametrize(("fact", "question"), [
    (SLOT, "What time works for you?"),           # the kind of value, not the narrow reveal word
    (SLOT, "When should we start?"),
    (SEATS, "How many people are coming?"),
    (EMAIL, "What email address should the invoice go to?"),
    (SLOT, "Which start slot do you prefer?"),     # a word of the key
    (SEATS, "Headcount?"),
])
def test_a_question_for_the_kind_of_value_or_the_key_reveals_it(fact: Fact, question: str) -> None:
    assert user(fact, ROOM).reply(question).revealed == [fact.key]


@pytest.mark.parametrize(("fact", "question"), [
    (MOVE, "Should I move it to Tuesday 2026-12-08 at 15:00?"),   # proposes a date to confirm
    (MOVE, "Is Monday still right?"),                              # a weekday is a date
    (MOVE, "Just to confirm, it stays on 2026-12-07?"),            # names the value being corrected
    (SLOT, "Shall we say 2 pm?"),                                  # a 12-hour time is a time
    (SEATS, "Is 10 enough?"),
    (EMAIL, "Should I send it to billing@lumen.example?"),
])
def test_a_confirmation_of_a_proposed_value_reveals_it(fact: Fact, question: str) -> None:
    reply = user(fact).reply(question)
    assert reply.revealed == [fact.key]


def test_a_correction_is_given_as_one() -> None:
    assert user(MOVE).reply("Should it still be 2026-12-07?").text == "Let me correct that. It's 2026-12-08, not 2026-12-07."


@pytest.mark.parametrize("question", ["Anything else I should know about the meeting?", "Is there anything else?",
                                      "Any other details before I book it?", "What else?"])
def test_an_open_question_reveals_what_is_not_yet_revealed(question: str) -> None:
    simulated = user(DAY, ROOM)
    assert simulated.reply("Which day?").revealed == ["day"]
    assert simulated.reply(question).revealed == ["meeting_room"]


@pytest.mark.parametrize("question", [
    "Shall I update the invite?",          # no fact named, no value proposed
    "Somewhen soon, or anytime?",          # "when" inside a word
    "What's your favourite colour?",
    "Should I book Room 5?",               # proposes a room, not a date
    "Do you want me to add a note?",
])
def test_never_volunteers_a_fact_nobody_asked_about(question: str) -> None:
    simulated = user(DAY)
    reply = simulated.reply(question)
    assert (reply.text, reply.revealed) == (NEUTRAL_REPLY, [])
    assert simulated.revealed == []


def test_generic_key_words_do_not_reveal() -> None:
    which = Fact(key="which_lina", value="Lina Okafor in Procurement", reveal_when=["lina"])
    assert not asks_for("Which day works?", which)
    assert asks_for("Which Lina do you mean?", which)


def test_one_question_can_reveal_several_facts_and_revealed_has_no_duplicates() -> None:
    simulated = user(DAY, ROOM)
    reply = simulated.reply("Which day, and where?")
    assert reply.revealed == ["day", "meeting_room"]
    assert reply.text == "Please make it 2026-12-03. Please go with Room 4."
    simulated.reply("And the date again?")
    assert simulated.revealed == ["day", "meeting_room"]


def test_max_rounds_then_only_neutral() -> None:
    simulated = user(DAY, ROOM, max_rounds=2)
    assert simulated.reply("How are you?").revealed == []
    assert simulated.reply("Which day?").revealed == ["day"]
    late = simulated.reply("Which room?")
    assert (late.text, late.revealed) == (NEUTRAL_REPLY, [])
    assert simulated.revealed == ["day"]


def test_the_same_question_gets_the_same_answer() -> None:
    answers = {user(DAY, ROOM, SLOT).reply("When, and where?").text for _ in range(5)}
    assert len(answers) == 1


def test_no_user_always_neutral() -> None:
    simulated = SimulatedUser(None)
    assert simulated.reply("Which day?").text == NEUTRAL_REPLY
    assert simulated.revealed == []


@pytest.mark.parametrize(("value", "kind"), [("2026-12-03", "date"), ("2026-12-03T10:00", "datetime"), ("9:30", "time"),
                                             ("12", "number"), ("a@b.example", "email"), ("Room 4", "text")])
def test_kind_of(value: str, kind: str) -> None:
    assert kind_of(value) == kind


# --------------------------------------------------------------------------- rule 6: leave to go ahead

PRICE = Fact(key="unit_price", value="2,600 EUR", reveal_when=["price"], corrects="2,400 EUR")


@pytest.mark.parametrize("question", ["Shall I go ahead and book it?", "OK to send?", "Do you want me to send it?",
                                      "Ready for me to proceed?", "Are we all set?", "Is it okay if I send it?",
                                      "Can I go ahead with it now?"])
def test_a_go_ahead_question_reveals_every_unrevealed_correction_and_nothing_else(question: str) -> None:
    assert asks_to_go_ahead(question)
    simulated = user(DAY, ROOM, MOVE, PRICE)
    reply = simulated.reply(question)
    assert reply.revealed == ["new_date", "unit_price"]
    assert reply.text == ("Let me correct that. It's 2026-12-08, not 2026-12-07. "
                          "Actually, not 2,400 EUR. Please use 2,600 EUR instead.")
    assert simulated.revealed == ["new_date", "unit_price"]  # the day and the room stay hidden


def test_a_go_ahead_question_reveals_only_corrections_not_yet_revealed() -> None:
    simulated = user(DAY, MOVE, PRICE)
    assert simulated.reply("Which day?").revealed == ["day", "new_date"]
    assert simulated.reply("Can I go ahead?").revealed == ["unit_price"]
    again = simulated.reply("Can I go ahead?")
    assert (again.text, again.revealed) == (NEUTRAL_REPLY, [])


def test_a_go_ahead_question_without_corrections_gets_the_neutral_reply() -> None:
    simulated = user(DAY, ROOM)
    reply = simulated.reply("Shall I go ahead and book it?")
    assert (reply.text, reply.revealed) == (NEUTRAL_REPLY, [])


@pytest.mark.parametrize("question", ["Is the office open?", "Does Omar work in Finance?", "Is it raining?"])
def test_a_yes_no_question_that_asks_no_leave_reveals_nothing(question: str) -> None:
    assert not asks_to_go_ahead(question)
    simulated = user(DAY, MOVE, PRICE)
    reply = simulated.reply(question)
    assert (reply.text, reply.revealed) == (NEUTRAL_REPLY, [])
    assert simulated.revealed == []


# --------------------------------------------------------------------------- how a reply reads

KEY_VALUE = re.compile(r"^\s*[\w ]+:\s")
"""The form of a data line ("day: 2026-12-03", "Correction: not ..."), which a reply must not take."""
STARTS = Fact(key="starts_at", value="2026-12-03T10:00", reveal_when=["start"])


def is_sentence(text: str) -> bool:
    """A sentence as a person writes it: capitalised, no leading ``key:``, ends with punctuation."""
    return text[:1].isupper() and not KEY_VALUE.match(text) and text.rstrip()[-1:] in ".!?"


@pytest.mark.parametrize("fact", [DAY, ROOM, SLOT, SEATS, EMAIL, MOVE, PRICE, STARTS], ids=lambda f: f.key)
def test_a_reply_is_a_sentence_holding_the_value_verbatim(fact: Fact) -> None:
    reply = user(fact).reply(f"What about the {fact.reveal_when[0]}?")
    assert reply.revealed == [fact.key]
    assert is_sentence(reply.text) and fact.value in reply.text, reply.text
    assert fact.corrects is None or fact.corrects in reply.text


def test_the_wording_depends_on_the_fact_and_is_the_same_for_the_same_fact() -> None:
    days = [Fact(key="day", value=f"2026-12-{d:02d}", reveal_when=["day"]) for d in range(1, 29)]
    said = {fact_sentence(f).replace(f.value, "<value>") for f in days}
    assert len(said) > 1  # varied, not one frame for every fact
    assert all(fact_sentence(f) == fact_sentence(f.model_copy()) for f in days)
