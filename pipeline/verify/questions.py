"""The questions a correct agent may ask for a hidden fact instead of the reference's own.

The phrasing bank. Each ``ask`` of the reference that revealed facts is replaced by the open
question, and, for each fact F it revealed, by each phrasing of F (followed by the first phrasing
of each other fact it revealed; F goes untested when one of those has none):

- for a text fact, the argument it fills, as an agent filling that argument would ask: "What
  <argument words> should I use?" (``location`` -> "What location should I use?"); the agent never
  sees the fact's key, so the key is not a phrasing;
- for a typed fact, its kind: "Which day works for you?", "What time works for you?", "When should
  it be?", "How many should it be?", "What email address should I use?";
- a confirmation of a wrong value of the fact's kind: "Should I go with <value>?" (typed facts);
- an open question: "Is there anything else I should know before I go ahead?";
- for a fact that corrects the request, leave to go ahead: "Can I go ahead with it now?" (a careful
  agent confirms before acting, and a user who holds a correction says what changed).

A package whose facts surface only for its reference's own wording fails one of them.
"""

from __future__ import annotations

import re

from pipeline.core.package import CallStep, TaskPackage
from pipeline.core.references import iter_refs
from pipeline.core.user import kind_of
from pipeline.verify.perturbations import guess_wrong

OPEN_QUESTION = "Is there anything else I should know before I go ahead?"
GO_AHEAD_QUESTION = "Can I go ahead with it now?"
KIND_QUESTIONS = {"date": "Which day works for you?", "time": "What time works for you?",
                  "datetime": "When should it be?", "number": "How many should it be?",
                  "email": "What email address should I use?"}


def phrasings(package: TaskPackage, key: str) -> list[str]:
    """The bank's specific questions for fact ``key`` (the open question aside), see the module
    docstring."""
    fact = package.fact(key)
    if fact is None:
        return []
    kind = kind_of(fact.value)
    if kind == "text":
        out = [f"What {_spoken(argument)} should I use?" for argument in dict.fromkeys(_consumers(package, key))]
    elif kind in KIND_QUESTIONS:
        out = [KIND_QUESTIONS[kind], f"Should I go with {guess_wrong(fact, package)}?"]
    else:
        out = []
    return out + ([GO_AHEAD_QUESTION] if fact.corrects else [])


def _spoken(name: str) -> str:
    """An argument name as words: ``due_date`` -> "due date"."""
    return " ".join(w for w in re.split(r"[_\W]+", name) if w)


_SEARCH_ARGUMENTS = frozenset({"query", "q", "search", "keyword", "keywords", "filter", "text", "term"})


def _consumers(package: TaskPackage, key: str) -> list[str]:
    """The names of the arguments the reference fills with fact ``key``, whole (search terms
    aside: an agent asks about the thing, not about its query; and an argument the fact is only a
    part of, "Cost centre CC-4471" in a task's notes, is not what an agent would ask for)."""
    out = []
    for step in package.reference:
        if isinstance(step, CallStep):
            for name, value in step.args.items():
                if name not in _SEARCH_ARGUMENTS and any(ref.get("$fact") == key and "prefix" not in ref
                                                         and "suffix" not in ref for ref in iter_refs(value)):
                    out.append(name)
    return out
