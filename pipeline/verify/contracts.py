"""Capability contracts: a package must contain what its capability is about. Raises
``capability_unmet``.

Each capability states its contract as data (``contract:`` in ``capabilities/<name>.yaml``,
``taxonomy.capabilities.Contract``); a package of an unknown capability (an import) has none.
The clauses, each a minimum count:

- ``faults``: faults that fire on the reference's path and that it recovers from (a later
  successful call of the same tool);
- ``revealed_facts``: facts the reference gets the user to reveal, when an agent that never asks
  (guessing every fact) cannot reach the reference's score;
- ``live_safety_rules``: safety rules an agent could break with the tools offered and that the
  task tempts it to break (``safety.py``: ``vacuous_findings``, ``tempted``);
- ``services_acted_on``: services the reference calls successfully;
- ``dependent_steps``: reference calls whose arguments use something an earlier step showed: a
  ``$ref``, a revealed fact, or a value (six characters or more, or a number) of an earlier read's
  result;
- ``aggregated_records``: records behind the graded answer: an answer value is a total or a count
  over that many observed records, or the answer checks name values of that many records.
"""

from __future__ import annotations

from typing import Any

from pipeline.core.codes import Code
from pipeline.core.jsonvalues import leaves
from pipeline.core.outcomes import Finding
from pipeline.core.package import AskStep, CallStep, TaskPackage
from pipeline.core.patterns import compile_pattern
from pipeline.core.references import iter_refs
from pipeline.core.trajectory import Trajectory
from pipeline.taxonomy.capabilities import Contract, taxonomy
from pipeline.verify.aggregates import groups, number_forms, totals
from pipeline.verify.effects import bound_tools
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.perturbations import guess_wrong
from pipeline.verify.safety import tempted, vacuous_findings


def contract_findings(run: ReferenceRun) -> list[Finding]:
    capability = taxonomy().get(run.package.capability)
    if capability is None:
        return []
    contract: Contract = capability.contract
    counts = {
        "faults": lambda: _recovered_faults(run.package, run.trajectory),
        "revealed_facts": lambda: _needed_facts(run),
        "live_safety_rules": lambda: _live_rules(run),
        "services_acted_on": lambda: _services(run.package, run.trajectory),
        "dependent_steps": lambda: _dependent_steps(run.package, run.trajectory),
        "aggregated_records": lambda: _aggregated(run.package, run.trajectory, contract.aggregated_records),
    }
    out: list[Finding] = []
    for clause, count in counts.items():
        need = getattr(contract, clause)
        if need <= 0:
            continue
        have = count()
        if have < need:
            out.append(Finding(code=Code.CAPABILITY_UNMET, detail={"clause": clause, "need": need, "have": have},
                               message=f"capability {capability.name} needs at least {need} "
                                       f"{clause.replace('_', ' ')} ({Contract.model_fields[clause].description}); "
                                       f"this package has {have}"))
    return out


def _recovered_faults(package: TaskPackage, ref: Trajectory) -> int:
    n = 0
    for fault in package.faults:
        fired = [i for i, a in enumerate(ref.audit) if a.tool == fault.tool and a.status == fault.status]
        n += bool(fired) and any(a.tool == fault.tool and a.ok for a in ref.audit[fired[-1] + 1:])
    return n


def _needed_facts(run: ReferenceRun) -> int:
    package = run.package
    if package.user is None or not run.trajectory.revealed:
        return 0
    guesses = {f.key: guess_wrong(f, package) for f in package.user.facts}
    kept = [(i, s) for i, s in enumerate(package.reference) if not isinstance(s, AskStep)]
    s = run.variant_score([i for i, _ in kept], [step for _, step in kept], guesses)
    return len(set(run.trajectory.revealed)) if s < run.score else 0


def _live_rules(run: ReferenceRun) -> int:
    vacuous = {f.check for f in vacuous_findings(run.package, run.trajectory)}
    return sum(rule.id not in vacuous and tempted(run, rule) for rule in run.package.safety)


def _services(package: TaskPackage, ref: Trajectory) -> int:
    bound = bound_tools(package)
    return len({bound[a.tool].service.name for a in ref.audit if a.ok and a.tool in bound})


def _dependent_steps(package: TaskPackage, ref: Trajectory) -> int:
    bound = bound_tools(package)
    records = {s.index: s for s in ref.steps}
    seen: set[str] = set()
    revealed: set[str] = set()
    n = 0
    for i, step in enumerate(package.reference):
        record = records.get(i)
        if isinstance(step, CallStep) and record is not None:
            uses_ref = any(True for _ in iter_refs(step.args))
            values = {_key(v) for v in leaves(record.args or {}) if _key(v)}
            n += uses_ref or bool(values & (seen | revealed))
            tool = bound.get(step.call)
            if tool is not None and tool.op.access == "read" and record.result:
                seen |= {_key(v) for v in leaves(record.result) if _key(v)}
        elif isinstance(step, AskStep) and record is not None:
            revealed |= {_key(package.fact(k).value) for k in record.revealed if package.fact(k)}  # type: ignore[union-attr]
    return n


def _key(value: Any) -> str:
    """A value as evidence of a dependency: numbers, and strings of six characters or more."""
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, (int, float)):
        return f"{float(value):g}"
    return value.casefold() if isinstance(value, str) and len(value) >= 6 else ""


def _aggregated(package: TaskPackage, ref: Trajectory, enough: int) -> int:
    """How many observed records the graded answer is computed or gathered from; counting stops
    at ``enough`` (the contract asks no more)."""
    bound = bound_tools(package)
    lists = [value for s in ref.steps if s.kind == "call" and s.result and (b := bound.get(s.tool or ""))
             and b.op.access == "read" for value in s.result.values() if isinstance(value, list)]
    records = [r for lst in lists for r in lst if isinstance(r, dict)]
    wanted = [v for c in package.checks if c.kind == "answer_contains" for v in c.values]
    patterns = [compile_pattern(c.pattern, c.ignore_case)
                for c in package.checks if c.kind == "answer_matches"]

    folded_wanted = [w.casefold() for w in wanted]
    said: dict[str, bool] = {}  # text → says(text): records repeat their values

    def says(text: str) -> bool:
        if text not in said:
            folded = text.casefold()
            said[text] = any(folded and (folded == w or (len(folded) >= 3 and folded in w)) for w in folded_wanted) \
                or any(p.search(text) for p in patterns)
        return said[text]

    best, seen = 0, set()
    for r in records:
        if id(r) not in seen and any(says(str(v)) for v in leaves(r) if v not in (None, "", True, False)):
            best += 1
            if best >= enough:
                return best
        seen.add(id(r))
    for lst in lists:
        for group in groups([r for r in lst if isinstance(r, dict)]):
            if len(group) < 2 or len(group) <= best:
                continue  # one record is no aggregate; a group no larger cannot raise the count
            figures = [float(len(group)), *totals(group)]
            if any(says(form) for figure in figures for form in number_forms(figure)):
                best = len(group)
                if best >= enough:
                    return best
    return best
