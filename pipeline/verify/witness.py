"""Witnesses: the trajectories that prove findings by execution.

A finding of a witnessed code (``pipeline.core.codes.Basis``) refuses a package only with a
``Witness``: what a wrong agent that passes, or a correct agent that fails, did, as the actions
``TaskEnv`` takes. A witness is built from a variant of the reference (steps keyed by the index
their ``$ref``s use, as ``ReferenceRun.run`` takes them), then replayed as plain actions in a fresh
episode of the package: its score is the one ``synth play --witness`` shows, and the one that
decides whether it holds.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any, Literal

from pipeline.core.episode import actions_of, play_actions
from pipeline.core.outcomes import Witness
from pipeline.core.package import AnswerStep, CallStep, Step
from pipeline.core.text_values import ISO_DATE, dates_in
from pipeline.verify.aggregates import number_forms, plain_number
from pipeline.verify.execution import ReferenceRun


def witness(run: ReferenceRun, agent: Literal["wrong", "correct"], name: str, claim: str, threshold: float,
            steps: dict[int, Step], order: list[int] | None = None,
            fact_values: dict[str, str] | None = None) -> Witness:
    """The witness of the variant ``steps`` run in ``order`` (default: by index), fact values
    overridden by ``fact_values``; ``threshold`` is what a wrong agent must stay under, or a
    correct agent must reach."""
    ids = sorted(steps) if order is None else order
    actions = copy.deepcopy(actions_of(run.run(ids, [steps[i] for i in ids], fact_values)))
    return played(run, agent, name, claim, threshold, actions)


def played(run: ReferenceRun, agent: Literal["wrong", "correct"], name: str, claim: str, threshold: float,
           actions: list[dict[str, Any]]) -> Witness:
    """The witness of ``actions`` (``actions_of``'s form), scored by replaying them afresh."""
    score = run.grader.value(play_actions(run.package, actions))
    return Witness(agent=agent, name=name, claim=claim, score=score, threshold=threshold, actions=actions)


def reference_witness(run: ReferenceRun, agent: Literal["wrong", "correct"], claim: str, threshold: float) -> Witness:
    """The reference itself as the witness (a reference that breaks a rule the checks reward, or
    that passes without asking for the facts the package hides)."""
    return played(run, agent, "reference", claim, threshold, copy.deepcopy(actions_of(run.trajectory)))


def substituted(run: ReferenceRun, mapping: dict[Any, Any] | Callable[[Any], Any], writes_only: bool = True,
                steps: dict[int, Step] | None = None) -> dict[int, Step] | None:
    """The reference (or ``steps``, keyed by reference index) with every argument value (a leaf, or
    an item of a list) that is a key of ``mapping`` replaced by its value (or, for a function,
    by what it returns), in the arguments each call resolved to (written literally); only in
    writes when ``writes_only``. None when no argument holds such a value."""
    replace = mapping if callable(mapping) else _lookup(mapping)
    steps = dict(enumerate(run.package.reference)) if steps is None else dict(steps)
    changed = False
    for i, step in steps.items():
        if not isinstance(step, CallStep):
            continue
        bound = run.bound.get(step.call)
        if writes_only and (bound is None or bound.op.access != "write"):
            continue
        own = i < len(run.package.reference) and step is run.package.reference[i]
        args = run.args.get(i, {}) if own else step.args  # a step already rewritten keeps what it says
        new = _replace_leaves(args, replace)
        if new != args:
            steps[i] = CallStep.model_construct(call=step.call, args=new, expect_status=step.expect_status)
            changed = True
    return steps if changed else None


def _lookup(mapping: dict[Any, Any]) -> Callable[[Any], Any]:
    def replace(value: Any) -> Any:
        try:
            return mapping.get(value, value) if not isinstance(value, bool) else value
        except TypeError:  # an unhashable value
            return value
    return replace


def _replace_leaves(value: Any, replace: Callable[[Any], Any]) -> Any:
    if isinstance(value, dict):
        return {k: _replace_leaves(v, replace) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_leaves(v, replace) for v in value]
    return replace(value)


def said_instead(steps: dict[int, Step], value: Any, other: Any) -> dict[int, Step]:
    """``steps`` with the answer saying ``other`` where it says ``value`` (as text; a number in any
    of the forms an answer writes it, 1,234.50 / 1234.5 / 1234; a date of a date-time too): an
    agent that wrote another value reports that one."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return steps
    return {i: (AnswerStep(answer=say_instead(step.answer, value, other)) if isinstance(step, AnswerStep) else step)
            for i, step in steps.items()}


def say_instead(answer: str, value: Any, other: Any) -> str:
    """``answer`` (any text) saying ``other`` where it says ``value`` (see ``said_instead``)."""
    if isinstance(value, (int, float)):
        for form in sorted(number_forms(float(value)), key=len, reverse=True):
            found = re.compile(rf"(?<![\d.,]){re.escape(form)}(?![\d]|[.,]\d)")
            if found.search(answer):
                return found.sub(plain_number(other), answer)
        return answer
    if str(value) in answer:
        return answer.replace(str(value), str(other))
    if not (isinstance(value, str) and isinstance(other, str) and ISO_DATE.match(value) and ISO_DATE.match(other)):
        return answer
    out = answer
    if value[:10] != other[:10]:  # the day, however the answer writes it ("Thursday 10 December")
        for m in sorted(dates_in(answer, date.fromisoformat(value[:10]) - timedelta(days=1)),
                        key=lambda m: -m.start):
            if m.value == value[:10]:
                out = out[:m.start] + other[:10] + out[m.end:]
    if value[11:16] and value[11:16] != other[11:16]:
        out = out.replace(value[11:16], other[11:16])
    return out



def another_value(value: Any) -> Any:
    """A plausible other value of the same kind: a number plus one, a date a day later (a
    date-time an hour later), other text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value + 1
    if isinstance(value, str) and (m := ISO_DATE.match(value)):
        return value.replace(m.group(2), f"{(int(m.group(2)[:2]) + 1) % 24:02d}{m.group(2)[2:]}") if m.group(2) \
            else f"{value[:8]}{(int(value[8:10]) % 28) + 1:02d}{value[10:]}"
    return f"other-{value}"


def earlier_in_the_morning(value: Any) -> Any | None:
    """A morning date-time an hour earlier ("2026-12-17T09:30" gives "2026-12-17T08:30"), else None."""
    if isinstance(value, str) and (m := ISO_DATE.match(value)) and m.group(2) and 1 <= int(m.group(2)[:2]) < 12:
        return value.replace(m.group(2), f"{int(m.group(2)[:2]) - 1:02d}{m.group(2)[2:]}")
    return None


def with_arguments(run: ReferenceRun, index: int, args: dict[str, Any]) -> dict[int, Step]:
    """The reference's steps by index, step ``index`` (a call) given the arguments ``args``."""
    steps: dict[int, Step] = dict(enumerate(run.package.reference))
    step = steps[index]
    assert isinstance(step, CallStep)
    steps[index] = CallStep.model_construct(call=step.call, args=args, expect_status=step.expect_status)
    return steps


def rewritten_value(run: ReferenceRun, index: int | None, value: Any, other: Any, claim: str) -> Witness:
    """A correct agent that writes ``other`` where the reference writes ``value`` (in step
    ``index``, or in every write when None; in the answer too when the value is text there)."""
    steps = substituted(run, {value: other}) or dict(enumerate(run.package.reference))
    if index is not None:
        steps = {i: (step if i == index or not isinstance(step, CallStep) else run.package.reference[i])
                 for i, step in steps.items()}
    return witness(run, "correct", "rewritten_value", claim, run.score, said_instead(steps, value, other))
