"""The deterministic simulated user that answers ``ask`` steps during verification.

A question reveals every fact one of whose ``reveal_when`` words starts a word in it (any case:
"day" matches "day" and "days", not "today"); anything else gets a neutral reply. After ``max_rounds`` questions the user only repeats the
neutral reply. At training time an LLM can play the persona with the same facts.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from pipeline.core.package import Fact, User

NEUTRAL_REPLY = "I have nothing to add to that. Please go ahead with what I asked."


class Reply(BaseModel):
    text: str
    revealed: list[str]


def fact_sentence(fact: Fact) -> str:
    if fact.corrects:
        return f"Correction: not {fact.corrects}, use {fact.value}."
    return f"{fact.key.replace('_', ' ')}: {fact.value}"


def asks_for(question: str, fact: Fact) -> bool:
    return any(re.search(rf"\b{re.escape(w)}", question, re.IGNORECASE) for w in fact.reveal_when)


class SimulatedUser:
    def __init__(self, user: User | None) -> None:
        self.user = user
        self.rounds = 0
        self.revealed: list[str] = []

    def fork(self) -> SimulatedUser:
        """A copy of this user as it is now (questions answered, facts revealed)."""
        twin = SimulatedUser(self.user)
        twin.rounds, twin.revealed = self.rounds, list(self.revealed)
        return twin

    def reply(self, question: str) -> Reply:
        self.rounds += 1
        if self.user is None or self.rounds > self.user.max_rounds:
            return Reply(text=NEUTRAL_REPLY, revealed=[])
        hits = [f for f in self.user.facts if asks_for(question, f)]
        if not hits:
            return Reply(text=NEUTRAL_REPLY, revealed=[])
        for f in hits:
            if f.key not in self.revealed:
                self.revealed.append(f.key)
        return Reply(text=" ".join(fact_sentence(f) for f in hits), revealed=[f.key for f in hits])
