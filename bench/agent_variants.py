"""Correct agents that act differently from the reference must keep its full score.

    python bench/agent_variants.py [--per-capability 120] [--seed 7]

For every package of an offline run over all capabilities that verification accepts, scripted
agents play it through ``TaskEnv`` (reset, step, score: the RL interface), each doing the task
correctly but not the reference's way:

- ``reordered``: the writes in another valid order (a random order of the reference's steps that
  keeps every step after the steps whose results it uses, the answer last), unless the request
  dictates a sequence;
- ``extra_reads``: before every write, a read: each offered list or search tool called with an
  argument taken from the request;
- ``rephrased``: every question asked in words of its own (not the verifier's phrasing bank);
- ``decorated``: free text it composes (titles, bodies, notes; not text the request quotes or a
  record's name): bodies wrapped in a greeting and a sign-off, other text in capitals;
- ``all``: all four at once.

Arguments come from what the agent has observed (``$ref``/``$fact`` resolved against its own
episode), never from the reference's recorded results. Prints, per capability and agent, the share
of packages that keep full score, the share where the agent acted unlike the reference at all (a
reorder needs two independent steps, a rephrasing a question), and the first packages that lose.
"""

from __future__ import annotations

import argparse
import random
import re
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from pipeline.core.episode import Answer, Ask, ToolCall
from pipeline.core.package import AnswerStep, AskStep, CallStep, Step, TaskPackage
from pipeline.core.references import ResolveError, iter_refs, parse_ref, resolve
from pipeline.core.user import kind_of
from pipeline.env.task_env import TaskEnv
from pipeline.generation.offline import generate_package, pick_template
from pipeline.taxonomy.capabilities import taxonomy
from pipeline.verify.effects import bound_tools
from pipeline.verify.perturbations import ComposedText
from pipeline.verify.verifier import verify_package

AGENTS = ("reordered", "extra_reads", "rephrased", "decorated", "all")
SEQUENCE = re.compile(r"\b(then|afterwards|after that|once (?:that|this|it)(?:'s| is) done|followed by|before )", re.I)
QUESTIONS = {"date": "On which date would you like it?", "time": "At what time would you like it?",
             "datetime": "When exactly should it be?", "number": "How many do you need?",
             "email": "Which email address should I send it to?"}


# --------------------------------------------------------------------------- the agent


def play(package: TaskPackage, steps: list[tuple[int, Step]]) -> float:
    """Play ``steps`` (id, step) through ``TaskEnv``; arguments resolved from the agent's own
    observations. Returns the episode's score."""
    env = TaskEnv(package, max_steps=len(steps) + 5)
    env.reset()
    seen: dict[int, Any] = {}  # the reference's step id -> what the agent observed doing that step
    for sid, step in steps:
        if env.done:
            break
        if isinstance(step, CallStep):
            try:
                args = resolve(step.args, seen, env.episode.facts)
            except ResolveError:
                continue  # the agent lacks what it needs; it skips the call (and loses its score)
            env.step(ToolCall(name=step.call, arguments=args))
        elif isinstance(step, AskStep):
            env.step(Ask(text=step.ask))
        else:
            assert isinstance(step, AnswerStep)
            env.step(Answer(text=step.answer))
        seen[sid] = env.episode.steps[-1]
    return env.score().score


# --------------------------------------------------------------------------- the variations


def _uses(step: Step) -> set[int]:
    if not isinstance(step, CallStep):
        return set()
    return {int(parse_ref(str(r["$ref"]))[1]) for r in iter_refs(step.args) if "$ref" in r}


def reordered(package: TaskPackage, steps: list[tuple[int, Step]], rng: random.Random) -> list[tuple[int, Step]]:
    if SEQUENCE.search(package.request.text) or package.faults:
        return steps
    body = [s for s in steps if not isinstance(s[1], AnswerStep)]
    answer = [s for s in steps if isinstance(s[1], AnswerStep)]
    asks = {sid for sid, s in body if isinstance(s, AskStep)}
    placed: list[tuple[int, Step]] = []
    waiting = list(body)
    while waiting:  # a random topological order: a step goes once what it uses (and every ask before it) is placed
        done = {sid for sid, _ in placed}
        ready = [(sid, s) for n, (sid, s) in enumerate(waiting) if _uses(s) <= done
                 and not ({a for a in asks if a < sid} - done) and not (sid in asks and n > 0)
                 and not any(isinstance(s2, AskStep) for _, s2 in waiting[:n])]
        choice = rng.choice(ready) if ready else waiting[0]
        placed.append(choice)
        waiting.remove(choice)
    return placed + answer


def extra_reads(package: TaskPackage, steps: list[tuple[int, Step]], rng: random.Random) -> list[tuple[int, Step]]:
    words = [w for w in re.findall(r"[A-Za-z]{4,}", package.request.text)]
    reads: list[Step] = []
    for name, b in bound_tools(package).items():
        if b.op.effect == "list" and not b.tool.parameters.get("required"):
            reads.append(CallStep(call=name, args={}))
        elif b.op.effect == "search" and words:
            reads.append(CallStep(call=name, args={"query": rng.choice(words)}))
    if not reads:
        return steps
    writes = {n for n, b in bound_tools(package).items() if b.op.access == "write"}
    out: list[tuple[int, Step]] = []
    extra = 1000
    for sid, step in steps:
        if isinstance(step, CallStep) and step.call in writes or isinstance(step, AnswerStep):
            out.append((extra, rng.choice(reads)))
            extra += 1
        out.append((sid, step))
    return out


def rephrased(package: TaskPackage, steps: list[tuple[int, Step]], rng: random.Random) -> list[tuple[int, Step]]:
    if package.user is None:
        return steps
    out: list[tuple[int, Step]] = []
    facts = package.user.facts
    for sid, step in steps:
        if not isinstance(step, AskStep):
            out.append((sid, step))
            continue
        questions = []
        for fact in facts:
            kind = kind_of(fact.value)
            if kind in QUESTIONS:
                questions.append(QUESTIONS[kind])
            else:
                args = [k for s in package.reference if isinstance(s, CallStep) for k, v in s.args.items()
                        if any(r.get("$fact") == fact.key for r in iter_refs(v))]
                questions.append(f"Could you tell me the {args[0].replace('_', ' ')}?" if args
                                 else "Before I go ahead, is there anything else I should know?")
        out += [(sid if n == 0 else 2000 + sid * 10 + n, AskStep(ask=q)) for n, q in enumerate(questions)]
    return out


def decorated(package: TaskPackage, steps: list[tuple[int, Step]], rng: random.Random) -> list[tuple[int, Step]]:
    composed = ComposedText(package)
    bound = bound_tools(package)
    out: list[tuple[int, Step]] = []
    for sid, step in steps:
        if isinstance(step, CallStep) and step.call in bound and bound[step.call].op.effect in ("create", "update"):
            props = bound[step.call].tool.parameters.get("properties", {})
            args: dict[str, Any] = dict(step.args)
            for key, value in step.args.items():
                if composed(key, value, props.get(key)):
                    body = key in ("body", "message", "description", "notes", "content", "text", "comment", "summary")
                    args[key] = f"Hi there,\n\n{value}\n\nThanks,\nYour assistant" if body else value.upper()
            step = CallStep(call=step.call, args=args, expect_status=step.expect_status)
        out.append((sid, step))
    return out


def variant(agent: str, package: TaskPackage, rng: random.Random) -> list[tuple[int, Step]]:
    steps = list(enumerate(package.reference))
    for name, change in (("reordered", reordered), ("extra_reads", extra_reads), ("rephrased", rephrased),
                         ("decorated", decorated)):
        if agent in (name, "all"):
            steps = change(package, steps, rng)
    return steps


# --------------------------------------------------------------------------- main


def accepted_offline(per_capability: int, seed: int) -> Iterator[tuple[str, int, TaskPackage]]:
    """``(capability, slot, package)`` of every offline package (slots 0.. per capability) that
    verification accepts, with its id."""
    for capability in taxonomy():
        for slot in range(per_capability):
            package = generate_package(capability, pick_template(capability, slot), seed, slot)
            if verify_package(package).accepted:
                yield capability, slot, package.with_id()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-capability", type=int, default=120, help="offline packages per capability")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    kept: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0]))
    losses: list[str] = []
    accepted = 0
    for capability, slot, package in accepted_offline(args.per_capability, args.seed):
        accepted += 1
        for agent in AGENTS:
            rng = random.Random(f"{package.id}:{agent}")
            steps = variant(agent, package, rng)
            score = play(package, steps)
            cell = kept[capability][agent]
            cell[0] += score >= 1.0
            cell[1] += 1
            cell[2] += steps != list(enumerate(package.reference))
            if score < 1.0 and len(losses) < 15:
                losses.append(f"{capability}/{package.workflow} slot {slot}: {agent} scores {score:.3f}")
    print(f"{accepted} accepted packages (offline, seed {args.seed}, {args.per_capability} per capability)")
    print(f"{'capability':24}" + "".join(f"{a:>13}" for a in AGENTS))
    totals = defaultdict(lambda: [0, 0, 0])
    for capability, row in kept.items():
        print(f"{capability:24}" + "".join(f"{row[a][0] / row[a][1]:>13.1%}" for a in AGENTS))
        for a in AGENTS:
            totals[a] = [t + r for t, r in zip(totals[a], row[a], strict=True)]
    print(f"{'all (keep full score)':24}" + "".join(f"{totals[a][0] / totals[a][1]:>13.1%}" for a in AGENTS))
    print(f"{'acted unlike reference':24}" + "".join(f"{totals[a][2] / totals[a][1]:>13.1%}" for a in AGENTS))
    for line in losses:
        print("  lost:", line)


if __name__ == "__main__":
    main()
