"""A hidden fact equal to what the service does anyway. Raises ``clarification_unnecessary`` (from
``mutations.py``, beside ``guess_facts``).

A multi-turn fact that fills an argument of a write with the very value the operation gives
that argument when it is left out (``OperationSpec.defaults``, or the parameter schema's
``default``: a todo's priority "medium", a meeting's 30 minutes, a ticket's "normal") needs no
question: an agent that never asks and leaves the argument out writes the same record. Wrong
agent ``omits_facts``: it never asks for such facts (a question that reveals them with others,
"when is it due, and how urgent is it?", is asked for the others alone, in the words of
``questions.py``'s bank) and leaves their arguments out; it must score at most 0.75 (``GRAVE_BOUND``),
and, where the request never raises the facts' topic (none of their ``reveal_when`` words begins a
word of it: "add a todo to renew the parking permit" asks nothing of priority, "I know how urgent
it is, ask me first" does), lose more than the weight of the ``asked_user`` checks on them: an
agent that loses only the asking wrote what the reference writes, to a question nothing invited. (``guess_facts`` guesses a wrong value, which the default is
not.)
"""

from __future__ import annotations

import re
from typing import Any

from pipeline.core.codes import Code
from pipeline.core.outcomes import Finding
from pipeline.core.package import GRAVE_BOUND, AskedUser, AskStep, CallStep, Step
from pipeline.core.references import iter_refs
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.questions import phrasings
from pipeline.verify.witness import witness


def default_fact_findings(run: ReferenceRun) -> list[Finding]:
    """See the module docstring."""
    package = run.package
    if package.user is None or not package.user.facts:
        return []
    values = {f.key: f.value for f in package.user.facts}
    omitted: dict[str, set[str]] = {}  # fact key → the arguments it fills whole, each defaulting to its value
    spoiled: set[str] = set()  # facts that fill some argument that has no such default
    revealed_at = {k: s.index for s in reversed(run.trajectory.steps) if s.kind == "ask" for k in s.revealed}
    for i, step in enumerate(package.reference):
        if not isinstance(step, CallStep) or (bound := run.bound.get(step.call)) is None:
            continue
        props = bound.tool.parameters.get("properties", {})
        for param, arg in step.args.items():
            keys = {r["$fact"] for r in iter_refs(arg) if isinstance(r.get("$fact"), str)}
            literal = {k for k, at in revealed_at.items() if at < i and k in values and _literal(arg, values[k])}
            for key in (keys | literal) & set(values):  # a number the tool takes is written as it is: 30
                whole = key in literal or isinstance(arg, dict) and arg.get("$fact") == key and set(arg) == {"$fact"}
                default = bound.op.defaults.get(bound.op.field_for(param), (props.get(param) or {}).get("default"))
                if bound.op.access == "write" and whole and _same(default, values[key]):
                    omitted.setdefault(key, set()).add(param)
                else:
                    spoiled.add(key)
    keys = set(omitted) - spoiled
    if not keys:
        return []
    asked = _asked_without(run, keys)
    if all(a is package.reference[i] for i, a in asked.items()):
        return []  # every question that reveals them is asked as it was: nothing is left unasked
    steps: dict[int, Step] = {}
    for i, step in enumerate(package.reference):
        if i in asked:
            if (question := asked[i]) is not None:
                steps[i] = question
            continue
        if isinstance(step, CallStep):
            drop = {p for k in keys for p in omitted[k]}
            args = {p: a for p, a in step.args.items() if not (p in drop and (
                isinstance(a, dict) and a.get("$fact") in keys or any(_literal(a, values[k]) for k in keys)))}
            if args != step.args:
                step = CallStep.model_construct(call=step.call, args=args, expect_status=step.expect_status)
        steps[i] = step
    told = {k: values[k] for k in sorted(keys)}
    raised = {w.casefold() for w in re.findall(r"\w+", package.request.text)}
    invited = any(word.startswith(cue.casefold()) for f in package.user.facts if f.key in keys
                  for cue in f.reveal_when for word in raised)  # "how urgent it is, ask me first"
    asking = 0.0 if invited else sum(c.weight for c in package.checks if isinstance(c, AskedUser) and c.fact in keys)
    agent = witness(run, "wrong", "omits_facts", f"never asks for {sorted(keys)}; leaves "
                    f"{sorted({p for k in keys for p in omitted[k]})} out, so the service's default "
                    f"({', '.join(repr(v) for v in told.values())}) fills them",
                    min(GRAVE_BOUND, 1.0 - asking - _ROUNDING), steps, fact_values=told)
    if not agent.holds:
        return []
    return [Finding(code=Code.CLARIFICATION_UNNECESSARY, witness=agent, detail={"facts": sorted(keys), "defaults": told},
                    message=f"hidden {'fact' if len(keys) == 1 else 'facts'} {sorted(keys)} "
                            f"{'equals' if len(keys) == 1 else 'equal'} the service's default ({told}): never asking and "
                            f"leaving the argument out scores {agent.score:.3f}, so the clarification is unnecessary")]


_ROUNDING = 1e-6
"""Scores are rounded to 6 places: an agent that loses only the asking checks' weight scores that."""


def _asked_without(run: ReferenceRun, keys: set[str]) -> dict[int, AskStep | None]:
    """Each question of the reference that reveals one of ``keys``, as an agent that never asks for
    those would put it: None (not asked) when it reveals nothing else; else the bank's first
    question for each other fact it reveals (``questions.phrasings``: "When is it due, and how
    urgent is it?" becomes "Which day works for you?"), or the reference's own when one of them
    has none."""
    out: dict[int, AskStep | None] = {}
    for s in run.trajectory.steps:
        if s.kind != "ask" or not s.revealed or not keys & set(s.revealed):
            continue
        others = [k for k in dict.fromkeys(s.revealed) if k not in keys]
        bank = [phrasings(run.package, k)[:1] for k in others]
        step = run.package.reference[s.index]
        if not others:
            out[s.index] = None
        elif all(bank) and isinstance(step, AskStep):
            out[s.index] = AskStep(ask=" ".join(q[0] for q in bank))
        else:
            out[s.index] = step if isinstance(step, AskStep) else None
    return out


def _same(default: Any, value: str) -> bool:
    if default is None or isinstance(default, (list, dict, bool)) or default == "":
        return False
    if isinstance(default, (int, float)):
        try:
            return abs(float(value) - float(default)) < 1e-9
        except ValueError:
            return False
    return str(default).casefold() == value.strip().casefold()


def _literal(arg: Any, value: str) -> bool:
    """Whether ``arg`` is a number or text written as it is that is the fact's ``value``."""
    if isinstance(arg, bool) or not isinstance(arg, (str, int, float)):
        return False
    return _same(arg, value)
