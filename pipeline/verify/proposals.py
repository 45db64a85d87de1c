"""Proposals: what a model reader reads the request to ask that the reference does otherwise,
proved or dropped by execution. Raises ``request_check_mismatch``.

A reader that only confirms the rules' claims cannot see what the rules never read (a formula
worded another way, the month the request names, the record it leaves out of a total). A model
reader may also propose values (``Proposal``): "the request makes this order quantity 26, the
reference writes 17". A proposal never refuses on the reader's word: the verifier plays a correct
agent that does what it says — the reference with ``instead_of`` replaced by ``value`` in the
writes of ``tool`` (any write when None) and in the answer, with a write it leaves out added, or
without a write it should not make — and refuses only when that agent loses score. Its finding carries the proposal as its claim, read by the reader that made it.

``proposal_context`` is what the reader is shown: the request, the initial state, the
reference's calls with the arguments they resolved to, and its answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pipeline.core.codes import Code
from pipeline.core.episode import actions_of
from pipeline.core.grading import Grader
from pipeline.core.outcomes import Claim, Finding, Proposal, Reading, Verdict
from pipeline.core.package import CallStep, Step, TaskPackage
from pipeline.verify.claims import named_records, request_words, today
from pipeline.verify.execution import ReferenceRun
from pipeline.verify.readers import Reader, ReadingCache, read_verdict
from pipeline.verify.reference_edits import before_answer, dependents
from pipeline.verify.witness import said_instead, substituted, witness

MAX_PROPOSALS = 5
MAX_STATE_CHARS = 12_000


def reference_run(package: TaskPackage) -> ReferenceRun:
    """The reference of ``package`` run once, for its context and its proposals' correct agents."""
    return ReferenceRun(package, Grader(package, remember_records=True))


def proposal_context(run: ReferenceRun) -> dict[str, Any]:
    """The request, what the simulated user answers when asked (its facts), the initial state (as
    JSON, cut at ``MAX_STATE_CHARS``), and the reference's actions as ``run`` ran them (calls with
    their resolved arguments, questions, the answer)."""
    package = run.package
    state = json.dumps(package.initial_state, ensure_ascii=False)
    return {"request": package.request.text, "today": today(package),
            "facts": [f"{fact.key}: {fact.value}" for fact in (package.user.facts if package.user else [])],
            "state": state if len(state) <= MAX_STATE_CHARS else state[:MAX_STATE_CHARS] + "…",
            "actions": [json.dumps(a, ensure_ascii=False) for a in actions_of(run.trajectory)]}


def proposal_findings(run: ReferenceRun, proposals: list[Proposal], reading: Reading) -> list[Finding]:
    """A ``request_check_mismatch`` for each of ``proposals`` (the first ``MAX_PROPOSALS``) whose
    correct agent — the reference ``run`` with the proposed value in place of the one it writes or
    reports — scores below the reference; the rest prove nothing and are dropped."""
    package = run.package
    if run.score < 1.0:
        return []
    out: list[Finding] = []
    for proposal in proposals[:MAX_PROPOSALS]:
        added = _added_call(run, proposal) or _dropped_call(run, proposal)
        steps, order = added if added is not None else (_proposed(run, proposal), None)
        if steps is None:
            continue
        agent = witness(run, "correct", "reader_proposal",
                        f"writes or reports {proposal.value!r} where the reference has {proposal.instead_of!r}",
                        run.score, steps, order)
        if not agent.holds:
            continue
        message = (f"the reader reads the request to make it {proposal.value!r}, not {proposal.instead_of!r}; an "
                   f"agent doing so scores {agent.score:.3f}, not {run.score:.3f}: {proposal.reason}")
        said = f"{proposal.value} {proposal.instead_of} {proposal.reason}"
        claim = Claim(reading=f"A careful person doing this task writes or reports {proposal.value!r} where the "
                              f"reference has {proposal.instead_of!r}: {proposal.reason}",
                      words=request_words(package.request.text, said),
                      instead=f"The checks give that agent {agent.score:.2f}, below the {run.score:.2f} it must reach.",
                      alternative=f"The reference's {proposal.instead_of!r} is what the request asks.",
                      records=named_records(package, said, agent.actions), today=today(package))
        out.append(Finding(code=Code.REQUEST_CHECK_MISMATCH, message=message, witness=agent, claim=claim,
                           reading=reading, detail={"proposal": proposal.model_dump(mode="json")}))
    return out


def _added_call(run: ReferenceRun, proposal: Proposal) -> tuple[dict[int, Step], list[int]] | None:
    """For a proposal of a write the reference leaves out (``instead_of`` None, ``value`` the
    arguments of a call of ``tool``, a create or update the package offers: the fifth todo the
    request asks for): the reference with that call added before its answer, and the order to run
    them in; None for any other proposal."""
    bound = run.bound.get(proposal.tool or "")
    if proposal.instead_of is not None or not isinstance(proposal.value, dict) or not proposal.value \
            or bound is None or bound.op.effect not in ("create", "update"):
        return None
    if not all(isinstance(k, str) and (v is None or isinstance(v, (str, int, float, bool, list))) for k, v in proposal.value.items()):
        return None
    extra = CallStep.model_construct(call=bound.tool.name, args=dict(proposal.value))
    return before_answer(dict(enumerate(run.package.reference)), [extra])


def _dropped_call(run: ReferenceRun, proposal: Proposal) -> tuple[dict[int, Step], list[int]] | None:
    """For a proposal of a write the request does not ask for (``instead_of`` the arguments of a
    write of ``tool`` the reference makes, ``value`` anything but arguments: null, or words that
    say it is not done, "kb-003 stays published"): the reference without that write (and the steps
    that read its result), and the order to run them in; None for any other proposal, or when no
    one write of ``tool`` carries every argument ``instead_of`` names."""
    bound = run.bound.get(proposal.tool or "")
    old = proposal.instead_of
    if not isinstance(old, dict) or not old or isinstance(proposal.value, dict) or bound is None \
            or bound.op.access != "write":
        return None
    matching = [i for i, s in enumerate(run.package.reference) if isinstance(s, CallStep) and s.call == bound.tool.name
                and all(run.args.get(i, {}).get(k) == v for k, v in old.items())]
    if len(matching) != 1:
        return None
    dropped = dependents(run.package, matching[0])
    steps = {i: s for i, s in enumerate(run.package.reference) if i not in dropped}
    return steps, sorted(steps)


def _proposed(run: ReferenceRun, proposal: Proposal) -> dict[int, Step] | None:
    """The reference with ``proposal.value`` in place of ``instead_of`` (in the writes of its tool,
    or every write, and in the answer); for two lists of items, the writes' lists with the items
    of ``instead_of`` replaced by those of ``value`` (``_items_in_place``). None when nothing holds
    it, or they are the same."""
    old, new = proposal.instead_of, proposal.value
    items = isinstance(old, list) and isinstance(new, list)  # items of a list argument: tags dropped or added
    if str(old) == str(new) or isinstance(old, dict) or isinstance(new, dict) or \
            (isinstance(old, list) or isinstance(new, list)) and not (items and old and _scalars(old + new)):
        return None
    steps: dict[int, Step] = dict(enumerate(run.package.reference))
    if items:
        return _items_swapped(run, steps, old, new, proposal.tool)
    if proposal.tool is not None:
        own = {i for i, s in steps.items() if isinstance(s, CallStep) and s.call == proposal.tool}
        written = substituted(run, lambda v: _in_place(v, old, new), steps=steps)
        written = None if written is None else {i: (written[i] if i in own else steps[i]) for i in steps}
    else:
        written = substituted(run, lambda v: _in_place(v, old, new))
    answered = said_instead(written or steps, old, new)
    if written is None and answered == steps:
        return None
    return answered


def _in_place(value: Any, old: Any, new: Any) -> Any:
    """``new`` where ``value`` is ``old`` (a number matching its written form, "17" and 17 alike),
    of ``value``'s type when ``new`` reads as one; a text that writes ``old`` (three characters or
    more, as a whole: not inside a word or a longer number) with ``new`` there instead ("a
    reminder that GBP 3,930.00 is outstanding" for "GBP 3,930.00" → "GBP 2,780.00"); else
    ``value``."""
    if isinstance(value, str) and isinstance(old, str) and len(old) >= 3 and value != old and old in value:
        return re.sub(rf"(?<![\w.,]){re.escape(old)}(?![\w]|[.,]\d)", lambda _: str(new), value)
    if isinstance(value, bool) or str(value) != str(old) and not _same_number(value, old):
        return value
    if isinstance(value, (int, float)):
        try:
            number = float(str(new).replace(",", ""))
        except ValueError:
            return new
        return int(number) if isinstance(value, int) and number.is_integer() else number
    return str(new) if isinstance(value, str) else new


def _items_swapped(run: ReferenceRun, steps: dict[int, Step], old: list[Any], new: list[Any],
                   tool: str | None) -> dict[int, Step] | None:
    """``steps`` with each list argument of the writes (of ``tool``, or any) that holds every item
    of ``old`` given those of ``new`` instead (``_items_in_place``); None when none holds them."""
    out = dict(steps)
    for i, step in steps.items():
        if not isinstance(step, CallStep):
            continue
        bound = run.bound.get(step.call)
        if bound is None or bound.op.access != "write" or tool is not None and step.call != tool:
            continue
        args = run.args.get(i, {})
        swapped = {k: _items_in_place(v, old, new) for k, v in args.items()}
        if swapped != args:
            out[i] = CallStep.model_construct(call=step.call, args=swapped, expect_status=step.expect_status)
    return out if out != steps else None


def _items_in_place(value: Any, old: list[Any], new: list[Any]) -> Any:
    """A list ``value`` holding every item of ``old`` with those items taken out and the items of
    ``new`` it lacks added at its end (a tag dropped: ``old`` ``["vip"]``, ``new`` ``[]``); else
    ``value``."""
    if not isinstance(value, list) or any(item not in value for item in old):
        return value
    return [v for v in value if v not in old] + [n for n in new if n not in value]


def _scalars(values: list[Any]) -> bool:
    return all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in values)


def _same_number(a: Any, b: Any) -> bool:
    try:
        return float(str(a).replace(",", "")) == float(str(b).replace(",", ""))
    except ValueError:
        return False


def read_package(verdict: Verdict, package: TaskPackage, reader: Reader, cache: ReadingCache | None = None) -> Verdict:
    """``verdict`` read by ``reader`` (``readers.read_verdict``); then, when it still accepts the
    package and the reader proposes (``readers.Proposer``), with the findings its proposals prove
    (the proposals' requests in ``reader_calls``)."""
    verdict = read_verdict(verdict, package.request.text, reader, cache)
    propose = getattr(reader, "propose", None)
    if not verdict.accepted or propose is None or verdict.score is None or verdict.score < 1.0:
        return verdict
    run = reference_run(package)
    proposals, calls = propose(proposal_context(run))
    found = proposal_findings(run, proposals, Reading(answer="agrees", reason="its own proposal",
                                                             reader=reader.name))
    out = verdict.model_copy(update={"reader_calls": verdict.reader_calls + calls})
    return out.resorted(out.findings + found + out.review) if found else out
