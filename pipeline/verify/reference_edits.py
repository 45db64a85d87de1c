"""Edits of the reference's steps that the variants (wrong and correct agents) of several stages
are built from: extra steps put before the answer, the steps that depend on one, and the steps of
an agent that never asks, or that asks and keeps the values the user corrected. Steps are keyed by the index their ``$ref``s use."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import date
from typing import Any

from pipeline.core.jsonvalues import leaves
from pipeline.core.package import AnswerStep, AskStep, CallStep, Fact, Step, TaskPackage
from pipeline.core.references import iter_refs, parse_ref
from pipeline.core.text_values import ISO_DATE, shifted
from pipeline.verify.evidence import Evidence, evidence_of
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.perturbations import guess_wrong, in_written_form
from pipeline.verify.witness import substituted

Steps = dict[int, Step]


def before_answer(steps: Steps, extra: Sequence[Step]) -> tuple[Steps, list[int]]:
    """The steps with ``extra`` inserted just before the answer (at the end without one), under new
    ids no ``$ref`` points at; and the order to run them in."""
    ids = sorted(steps)
    cut = next((n for n, i in enumerate(ids) if isinstance(steps[i], AnswerStep)), len(ids))
    new_ids = list(range(max(ids, default=-1) + 1, max(ids, default=-1) + 1 + len(extra)))
    return {**steps, **dict(zip(new_ids, extra, strict=True))}, ids[:cut] + new_ids + ids[cut:]


def dependents(package: TaskPackage, index: int) -> set[int]:
    """``index`` and every step that ``$ref``s it, directly or through another dependent."""
    dropped = {index}
    for i, step in enumerate(package.reference):
        if i > index and isinstance(step, CallStep):
            for ref in iter_refs(step.args):
                if "$ref" in ref and parse_ref(str(ref["$ref"]))[1] in dropped:
                    dropped.add(i)
                    break
    return dropped


def unasked(run: ReferenceRun) -> tuple[Steps, dict[str, str]]:
    """The reference of an agent that never asks, and the fact values it guesses
    (``perturbations.guess_wrong``): no question, each ``$fact`` filled with its guess, and each
    value the reference writes in the form a tool takes of a fact said in words ("2,600 EUR"
    written as 2600, "half past two" as 14:30) written as the guess instead."""
    package = run.package
    guesses = {f.key: guess_wrong(f, package) for f in package.user.facts} if package.user else {}
    steps: Steps = {i: s for i, s in enumerate(package.reference) if not isinstance(s, AskStep)}
    for fact in package.user.facts if package.user else []:
        steps = _written_instead(run, fact.value, guesses[fact.key], steps) or steps
        steps = _worked_out_instead(run, fact, guesses[fact.key], steps) or steps
        steps = _dated_instead(run, fact, guesses[fact.key], steps) or steps
    return steps, guesses


_NEAR_FACT_DAYS = 14
"""A written date this many days or fewer from a date fact may be worked out from it ("the day before
the recital")."""


def _dated_instead(run: ReferenceRun, fact: Fact, guess: str, steps: Steps) -> Steps | None:
    """``steps`` with each ISO date the reference writes that it worked out from the date ``fact``
    (a few days from it, known once the fact is heard, not had the user said ``guess``: a task due
    the day before the recital) moved as the guess moves the fact: an agent that guessed the
    recital's day puts the task the day before the day it guessed. None when the fact is no ISO
    date or nothing written depends on it."""
    if not (ISO_DATE.match(fact.value) and ISO_DATE.match(guess)) or run.package.user is None:
        return None
    shift = (date.fromisoformat(guess[:10]) - date.fromisoformat(fact.value[:10])).days
    told = date.fromisoformat(fact.value[:10])
    written = {v for w in run.writes for v in leaves(run.args.get(w.step, {}))
               if isinstance(v, str) and ISO_DATE.match(v) and v[:10] != fact.value[:10]
               and abs((date.fromisoformat(v[:10]) - told).days) <= _NEAR_FACT_DAYS}
    if not written or not shift:
        return None
    heard, misheard = _heard_and_misheard(run, fact, guess, steps)
    moved = {v: shifted(v[:10], shift) + v[10:] for v in sorted(written)
             if heard.has_day(v[:10]) and not misheard.has_day(v[:10])}
    return substituted(run, moved, steps=steps) if moved else None


def _heard_and_misheard(run: ReferenceRun, fact: Fact, guess: str, steps: Steps) -> tuple[Evidence, Evidence]:
    """What the reference's agent knows, having heard ``fact``; and what an agent running ``steps``
    (no question, so no reply tells the fact) knows, had the user's fact been ``guess``."""
    assert run.package.user is not None
    heard = evidence_of(run.package, run.trajectory, include_writes=False)
    user = run.package.user.model_copy(update={"facts": [f.model_copy(update={"value": guess}) if f.key == fact.key
                                                         else f for f in run.package.user.facts]})
    unasked_run = run.run(sorted(steps), [steps[i] for i in sorted(steps)])
    return heard, evidence_of(run.package.model_copy(update={"user": user}), unasked_run, include_writes=False)


_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _worked_out_instead(run: ReferenceRun, fact: Fact, guess: str, steps: Steps) -> Steps | None:
    """``steps`` with each number the reference writes that it worked out from the numeric
    ``fact`` (known once the fact is heard, unknown had the user said ``guess``: "€38 per guest plus
    €250, less the €500 deposit" with 84 guests is 2,942) scaled as the guess scales the fact: an
    agent that guessed the count bills for the count it guessed. None when the fact is no plain
    number or nothing written depends on it."""
    if (_PLAIN_NUMBER.fullmatch(fact.value.strip()) is None or _PLAIN_NUMBER.fullmatch(guess.strip()) is None
            or float(fact.value) == 0 or run.package.user is None):
        return None
    ratio = float(guess) / float(fact.value)
    written = {v for w in run.writes for v in leaves(run.args.get(w.step, {}))
               if isinstance(v, (int, float)) and not isinstance(v, bool) and v != float(fact.value)}
    if not written:
        return None
    heard, misheard = _heard_and_misheard(run, fact, guess, steps)
    worked = {v: round(v * ratio) if isinstance(v, int) else round(v * ratio, 2) for v in sorted(written)
              if heard.has_number(v) and not misheard.has_number(v)}
    return substituted(run, worked, steps=steps) if worked else None


def kept_corrections(run: ReferenceRun) -> Steps | None:
    """The reference of an agent that asks, hears each correction and still writes the value the
    request stated (a fact with ``corrects``: "3pm" where the user said 16:30), in the form the
    tool takes, or the record it names; its questions are kept, so the user answers them. None when
    no fact corrects a value the reference writes."""
    steps: Steps | None = None
    for fact in run.package.user.facts if run.package.user else []:
        if fact.corrects:
            steps = _written_instead(run, fact.value, fact.corrects, steps) or steps
    return steps


def heeded_corrections(run: ReferenceRun) -> tuple[Steps, dict[str, tuple[str, str]]] | None:
    """The reference of an agent that writes what the user corrected where the reference writes
    the value the request stated (a fact with ``corrects`` the reference was told: it asked and
    heard "2026-12-04" for the request's "2026-12-03"), in the form the tool takes; with each such
    fact's ``(corrects, value)``. None when the reference writes the user's value (its ``$fact``)
    or no value the user corrected."""
    told = {k for s in run.trajectory.steps if s.kind == "ask" for k in s.revealed}
    used = {r["$fact"] for step in run.package.reference if isinstance(step, CallStep)
            for r in iter_refs(step.args) if isinstance(r.get("$fact"), str)}
    today = date.fromisoformat(run.package.now[:10])
    steps: Steps | None = None
    heeded: dict[str, tuple[str, str]] = {}
    for fact in run.package.user.facts if run.package.user else []:
        if not fact.corrects or fact.key not in told or fact.key in used:
            continue  # no correction, not heard, or written as the user gave it
        replace = in_written_form(fact.corrects, fact.value, today)
        if replace is not None and (edited := substituted(run, replace, steps=steps)):
            steps, heeded[fact.key] = edited, (fact.corrects, fact.value)
    return None if steps is None else (steps, heeded)


def _written_instead(run: ReferenceRun, value: str, guess: str, steps: Steps | None) -> Steps | None:
    """``steps`` (default: the reference) with what the reference writes of the fact ``value``
    written as ``guess``: in the form the tool takes (``perturbations.in_written_form``: 2600 for
    "2,600 EUR"), or the guessed record's fields for the named one's (``_record_swap``); None when
    nothing it writes holds the value."""
    today = date.fromisoformat(run.package.now[:10])
    replace: Callable[[Any], Any] | dict[Any, Any] | None = in_written_form(value, guess, today)
    if replace is None:
        replace = _record_swap(run.package, value, guess)
    return None if replace is None else substituted(run, replace, steps=steps)


def _record_swap(package: TaskPackage, value: str, guess: str) -> dict[Any, Any] | None:
    """For a fact that names one record of the initial state (a field equal to ``value``: "Jonas
    Brandt" names the contact whose ``name`` is that) and a guess that names another record of the
    same collection, what an agent that guessed writes instead: each field value of the named
    record that no other record of the collection shares (its id, email, phone, name) swapped
    for the guessed record's. None when either names no record, or several."""
    for collections in package.initial_state.values():
        for records in collections.values():
            named = [r for r in records if value in r.values()]
            guessed = [r for r in records if guess in r.values()]
            if len(named) != 1 or len(guessed) != 1 or named[0] is guessed[0]:
                continue
            a, b = named[0], guessed[0]
            swap = {v: b[k] for k, v in a.items() if isinstance(v, (str, int)) and not isinstance(v, bool)
                    and isinstance(b.get(k), type(v)) and b[k] != v
                    and not any(r is not a and r.get(k) == v for r in records)}
            return swap or None
    return None
