"""Generic cheating agents against accepted packages: none should pass.

    python bench/cheat_agents.py [--per-capability 150] [--seed 7]

For every package of an offline run over all capabilities that verification accepts, scripted
cheats play it through ``TaskEnv`` (the RL interface), written here without the verifier's code:

- ``duplicator``: does the reference's work, making every item it creates twice;
- ``hedger``: makes the reference's reads, writes nothing, and answers with the reference's answer
  hedged: each record value it names followed by the same field of the collection's other
  records, each whole number by one less and one more ("3 (or possibly 2, 4)");
- ``stuffer``: makes the reference's reads, writes nothing, answers with every value of the state;
- ``wiper``: does the work, then deletes every record any offered tool can delete;
- ``editor``: does the work, then changes one field of every record any offered tool can update;
- ``state_reader``: never asks the user; fills each hidden fact with the value of its field that
  most records of the state hold (multi-turn packages only).

A cheat *wins* a package when it passes (full marks; ``bench/pass_meaning.py`` counts them at 0.75 too). Prints, per cheat, the packages it could
play (it had something to do there) and the packages it won, then the first wins.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict
from typing import Any

from bench.agent_variants import accepted_offline, play
from pipeline.core.jsonvalues import leaves
from pipeline.core.package import AnswerStep, AskStep, CallStep, Step, TaskPackage, passes
from pipeline.core.references import iter_refs
from pipeline.verify.effects import bound_tools

Steps = list[tuple[int, Step]]
CHEATS = ("duplicator", "hedger", "stuffer", "wiper", "editor", "state_reader")


def _answer(steps: Steps, text: str) -> Steps:
    return [(i, AnswerStep(answer=text) if isinstance(s, AnswerStep) else s) for i, s in steps]


def _before_answer(steps: Steps, extra: list[Step]) -> Steps:
    cut = next((n for n, (_, s) in enumerate(steps) if isinstance(s, AnswerStep)), len(steps))
    new = max((i for i, _ in steps), default=0) + 1
    return steps[:cut] + [(new + n, s) for n, s in enumerate(extra)] + steps[cut:]


def duplicator(package: TaskPackage, steps: Steps) -> Steps | None:
    bound = bound_tools(package)
    out: Steps = []
    new = len(steps) + 100
    for i, s in steps:
        out.append((i, s))
        if isinstance(s, CallStep) and (b := bound.get(s.call)) and b.op.effect == "create":
            out.append((new, s))
            new += 1
    return out if len(out) > len(steps) else None


def hedger(package: TaskPackage, steps: Steps) -> Steps | None:
    answer = next((s.answer for _, s in steps if isinstance(s, AnswerStep)), "")
    extra: list[str] = []
    for collections in package.initial_state.values():
        for records in collections.values():
            for r in records:
                for key, value in r.items():
                    if isinstance(value, str) and len(value) >= 4 and value in answer:
                        extra += [str(o[key]) for o in records if o is not r and o.get(key) and str(o[key]) not in answer]
    for m in re.finditer(r"(?<![\w.,:/-])(\d{1,3})(?![\w.,:/-])", answer):
        n = int(m.group(1))
        extra += [str(n - 1), str(n + 1)]
    extra = list(dict.fromkeys(extra))[:8]
    if not extra:
        return None
    bound = bound_tools(package)
    reads = [(i, s) for i, s in steps if not (isinstance(s, CallStep) and (b := bound.get(s.call))
                                              and b.op.access == "write")]
    return _answer(reads, f"{answer} (or possibly {', '.join(extra)})")


def stuffer(package: TaskPackage, steps: Steps) -> Steps | None:
    bound = bound_tools(package)
    values = list(dict.fromkeys(str(v) for v in leaves(package.initial_state) if v not in (None, "", True, False)))
    reads = [(i, s) for i, s in steps if isinstance(s, CallStep) and (b := bound.get(s.call)) and b.op.access == "read"]
    return reads + [(len(steps) + 100, AnswerStep(answer="; ".join(values)))]


def _records(package: TaskPackage, collection: tuple[str, str]) -> list[dict[str, Any]]:
    return package.initial_state.get(collection[0], {}).get(collection[1], [])


def wiper(package: TaskPackage, steps: Steps) -> Steps | None:
    calls: list[Step] = [CallStep.model_construct(call=name, args={b.op.id_param: r[b.spec.id_field]})
                         for name, b in bound_tools(package).items() if b.op.effect == "delete"
                         for r in _records(package, b.collection) if r.get(b.spec.id_field) is not None]
    return _before_answer(steps, calls) if calls else None


def editor(package: TaskPackage, steps: Steps) -> Steps | None:
    calls: list[Step] = []
    for name, b in bound_tools(package).items():
        if b.op.effect != "update":
            continue
        props = b.tool.parameters.get("properties", {})
        enum = next(((p, s["enum"]) for p, s in props.items() if p != b.op.id_param and s.get("enum")), None)
        if enum is None:
            continue
        param, options = enum
        for r in _records(package, b.collection):
            other = next((o for o in options if o != r.get(b.op.field_for(param))), None)
            if other is not None and r.get(b.spec.id_field) is not None:
                calls.append(CallStep.model_construct(call=name, args={b.op.id_param: r[b.spec.id_field], param: other}))
    return _before_answer(steps, calls) if calls else None


def state_reader(package: TaskPackage, steps: Steps) -> Steps | None:
    if package.user is None or not package.user.facts:
        return None
    bound = bound_tools(package)
    guesses: dict[str, Any] = {}
    for _, s in steps:
        if isinstance(s, CallStep) and (b := bound.get(s.call)):
            for param, value in s.args.items():
                for ref in iter_refs(value):
                    if "$fact" in ref:
                        held = Counter(str(r.get(b.op.field_for(param))) for r in _records(package, b.collection)
                                       if r.get(b.op.field_for(param)) not in (None, ""))
                        if held:
                            guesses[ref["$fact"]] = held.most_common(1)[0][0]
    if not guesses:
        return None

    def fill(value: Any) -> Any:
        if isinstance(value, dict) and "$fact" in value:
            guess = guesses.get(value["$fact"], "")
            return f"{value.get('prefix', '')}{guess}{value.get('suffix', '')}"
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fill(v) for v in value]
        return value

    return [(i, CallStep.model_construct(call=s.call, args=fill(s.args)) if isinstance(s, CallStep) else s)
            for i, s in steps if not isinstance(s, AskStep)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-capability", type=int, default=150, help="offline packages per capability")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    played: Counter[str] = Counter()
    won: Counter[str] = Counter()
    wins: dict[str, list[str]] = defaultdict(list)
    accepted = 0
    for capability, slot, package in accepted_offline(args.per_capability, args.seed):
        accepted += 1
        steps = list(enumerate(package.reference))
        for name in CHEATS:
            cheat = globals()[name](package, steps)
            if cheat is None:
                continue
            played[name] += 1
            score = play(package, cheat)
            if passes(score):
                won[name] += 1
                wins[name].append(f"{capability}/{package.workflow} slot {slot}: {score:.3f}")
    print(f"{accepted} accepted packages (offline, seed {args.seed}, {args.per_capability} per capability)")
    print(f"{'cheat':14}{'played':>8}{'won':>6}")
    for name in CHEATS:
        print(f"{name:14}{played[name]:>8}{won[name]:>6}")
    for name in CHEATS:
        for line in wins[name][:5]:
            print(f"  {name} won {line}")


if __name__ == "__main__":
    main()
