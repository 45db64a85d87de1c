"""The deterministic simulated user that answers questions during verification and in ``TaskEnv``.

It reveals a fact when a reasonable person would read the question as asking for it, or asking to
confirm it (``asks_for``). A question asks for fact F when it:

1. **names it**: a word of F's key (``due_date``: "due", "date") or one of F's ``reveal_when``
   words starts a word of the question ("day" matches "days", not "today"; generic words such as
   "which" or "new" in a key do not count);
2. **asks for its kind** with a question word: "which day", "what date", "when" for a date;
   "what time", "when", "what hour" for a time; "how many", "how much", "what number" for a
   number; "what email", "which address" for an email;
3. **names the value F corrects** ("Should it still be due on 2026-12-08?" when F corrects that);
4. **proposes a value of F's kind to confirm**: a yes/no question ("Should I", "Is it", "Shall we",
   "OK to", "Do you want", ... or ending with "?" after such a start) that states a date, a time, a
   number or an email when F is one ("Should I move it to Tuesday 2026-12-08 at 15:00?");
5. **asks openly** for anything else it should know ("Anything else I should know about the
   meeting?", "Is there anything else?", "Any other details?"): every fact not yet revealed;
6. **asks leave to go ahead** ("Can I update the vendor meeting now?", "Shall I go ahead and book
   it?", "OK to send?"): every correction (a fact with ``corrects``) not yet revealed. A person
   asked to confirm says what changed.

It never volunteers a fact nobody asked about: a question about something it has no fact for gets
the neutral reply. After ``max_rounds`` questions it only repeats the neutral reply. The same
question always gets the same answer. An LLM can play the persona for rollouts; verification always
uses this user.
"""

from __future__ import annotations

import re
import zlib
from datetime import date
from typing import Protocol

from pipeline.core.package import DEFAULT_NOW, Fact, User
from pipeline.core.strict_model import StrictModel
from pipeline.core.text_values import CLOCK, EMAIL, ISO_DATE, date_values, has_word, numbers_in, times_in

NEUTRAL_REPLY = "I have nothing to add to that. Please go ahead with what I asked."
GENERIC_KEY_WORDS = frozenset({"which", "what", "who", "new", "old", "the", "a", "an", "of", "to", "for", "value",
                               "info", "detail", "details", "preferred", "choice", "user", "actual", "correct"})
_KIND_QUESTIONS = {
    "date": r"\b(which|what)\s+(day|date)\b|\bwhen\b|\bwhat\s+day\b|\bwhich\s+weekday\b",
    "time": r"\b(what|which)\s+(time|hour)\b|\bwhen\b|\bat what time\b|\bwhat\s+slot\b",
    "datetime": r"\b(which|what)\s+(day|date|time)\b|\bwhen\b",
    "number": r"\bhow\s+(many|much)\b|\bwhat\s+(number|quantity|amount)\b",
    "email": r"\b(what|which)\s+(e-?mail|address)\b|\bemail address\b",
}
_YES_NO = re.compile(r"^\s*(?:(?:so|and|just|ok|okay|great|thanks)[,!.]?\s+)*(should|shall|is|are|was|do|does|did|can|could|"
                     r"will|would|may|ok to|okay to|want me to|am i|to confirm|confirm|just to confirm|so)\b",
                     re.IGNORECASE)
_OPEN = re.compile(r"\banything\s+else\b|\bany\s+(other|more|further)\s+(details?|information|info|requirements?|"
                   r"preferences?|constraints?|things?)\b|\bwhat\s+else\b|\banything\s+(i|we)\s+should\s+know\b",
                   re.IGNORECASE)


_GO_AHEAD = re.compile(r"\b(?:(?:can|could|shall|should|may)\s+(?:i|we)\b|ok(?:ay)?\s+(?:to|if)\b|"
                       r"(?:do|would)\s+you\s+(?:want|like)\s+me\s+to\b|want\s+me\s+to\b|go\s+ahead\b|proceed\b|"
                       r"good\s+to\s+go\b|all\s+set\b|confirm\b|ready\s+(?:for\s+me\s+)?to\b)", re.IGNORECASE)


class Reply(StrictModel):
    text: str
    revealed: list[str]


_SAYINGS: dict[str, tuple[str, ...]] = {
    "date": ("It's on {value}.", "The {key} is {value}.", "Let's go with {value}.", "Please make it {value}."),
    "datetime": ("It's at {value}.", "The {key} is {value}.", "Let's go with {value}.", "Please make it {value}."),
    "time": ("It's at {value}.", "The {key} is {value}.", "Let's say {value}.", "Please make it {value}."),
    "number": ("It's {value}.", "The {key} is {value}.", "Please make it {value}.", "Let's go with {value}."),
    "email": ("Use the address {value}.", "The {key} is {value}.", "Please use {value}.", "It's {value}."),
    "text": ("It's {value}.", "Please go with {value}.", "That would be {value}.", "Let's go with {value}."),
}
_CORRECTIONS = ("Actually, not {old}. Please use {value} instead.", "Sorry, that's wrong. It's {value}, not {old}.",
                "Not {old}. The {key} is {value}.", "Let me correct that. It's {value}, not {old}.")
"""What the user says to reveal a fact: sentences a person writes, each with the value verbatim and
free of other values (no number words, no relative dates, no colon after a leading word), so a
reply tells the agent the fact and nothing else. A fact of kind ``text`` is not introduced by its
key: keys such as ``on_call`` do not read as nouns."""


def fact_sentence(fact: Fact) -> str:
    """One sentence revealing ``fact``, its ``value`` (and the ``corrects`` value it replaces)
    verbatim. The wording is chosen from ``_SAYINGS`` by the fact's kind, or from ``_CORRECTIONS``,
    by a checksum of its key and values: the same fact is always said the same way."""
    sayings = _CORRECTIONS if fact.corrects else _SAYINGS[kind_of(fact.value)]
    chosen = sayings[zlib.crc32(f"{fact.key}\0{fact.value}\0{fact.corrects}".encode()) % len(sayings)]
    sentence = chosen.format(key=fact.key.replace("_", " "), value=fact.value, old=fact.corrects)
    return sentence[:-1] if sentence.endswith((".", "!", "?")) and sentence[-2] in ".!?" else sentence


def kind_of(value: str) -> str:
    """``date``, ``datetime``, ``time``, ``number``, ``email`` or ``text``."""
    if ISO_DATE.match(value):
        return "datetime" if "T" in value else "date"
    if CLOCK.fullmatch(value):
        return "time"
    if re.fullmatch(r"-?\d+(?:\.\d+)?", value):
        return "number"
    if EMAIL.fullmatch(value):
        return "email"
    return "text"


def _words(fact: Fact) -> list[str]:
    key_words = [w for w in re.split(r"[_\W]+", fact.key.casefold()) if len(w) > 1 and w not in GENERIC_KEY_WORDS]
    return [*key_words, *(w.casefold() for w in fact.reveal_when)]


def _proposes(question: str, kind: str, today: date) -> bool:
    """Whether the question states a value of ``kind``."""
    if kind in ("date", "datetime") and date_values(question, today):
        return True
    if kind in ("time", "datetime") and times_in(question):
        return True
    if kind == "number" and numbers_in(question):
        return True
    return kind == "email" and EMAIL.search(question) is not None


def asks_for(question: str, fact: Fact, today: date | None = None) -> bool:
    """Whether a reasonable person reads ``question`` as asking for ``fact`` (rules 1–4 above)."""
    today = today or date.fromisoformat(DEFAULT_NOW[:10])
    if any(has_word(question, w, joiners="", prefix=True) for w in _words(fact)):
        return True
    kind = kind_of(fact.value)
    if kind in _KIND_QUESTIONS and re.search(_KIND_QUESTIONS[kind], question, re.IGNORECASE):
        return True
    if fact.corrects and has_word(question, fact.corrects):
        return True
    return bool(kind != "text" and _YES_NO.search(question) and _proposes(question, kind, today))


def asks_openly(question: str) -> bool:
    """Whether ``question`` asks for anything else the user should say (rule 5)."""
    return _OPEN.search(question) is not None


def asks_to_go_ahead(question: str) -> bool:
    """Whether ``question`` asks leave to act, or to confirm before acting (rule 6)."""
    return _GO_AHEAD.search(question) is not None


class UserModelError(RuntimeError):
    """A user model could not answer (the model server is down, the model name is wrong ...)."""


class UserModel(Protocol):
    """Who answers the agent's questions in an episode: ``reply`` to a question (a reply text and
    the keys of the facts it reveals), the ``revealed`` keys so far, and ``fork`` (a copy that goes
    on independently)."""

    revealed: list[str]

    def reply(self, question: str) -> Reply: ...

    def fork(self) -> UserModel: ...


class SimulatedUser:
    """The deterministic user of the module docstring: the one verification always uses."""

    def __init__(self, user: User | None, now: str = DEFAULT_NOW) -> None:
        self.user = user
        self.today = date.fromisoformat(now[:10])
        self.rounds = 0
        self.revealed: list[str] = []

    def fork(self) -> SimulatedUser:
        """A copy of this user as it is now (questions answered, facts revealed)."""
        twin = object.__new__(SimulatedUser)
        twin.user, twin.today, twin.rounds, twin.revealed = self.user, self.today, self.rounds, list(self.revealed)
        return twin

    def reply(self, question: str) -> Reply:
        self.rounds += 1
        if self.user is None or self.rounds > self.user.max_rounds:
            return Reply(text=NEUTRAL_REPLY, revealed=[])
        hits = [f for f in self.user.facts if asks_for(question, f, self.today)]
        if not hits and asks_openly(question):
            hits = [f for f in self.user.facts if f.key not in self.revealed]
        if not hits and asks_to_go_ahead(question):
            hits = [f for f in self.user.facts if f.corrects and f.key not in self.revealed]
        if not hits:
            return Reply(text=NEUTRAL_REPLY, revealed=[])
        for f in hits:
            if f.key not in self.revealed:
                self.revealed.append(f.key)
        return Reply(text=" ".join(fact_sentence(f) for f in hits), revealed=[f.key for f in hits])
