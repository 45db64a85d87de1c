"""Detection matrix: every known defect seeded into clean offline packages.

    python bench/defects.py [--per-template 4] [--seed 7] [--services default]

(The hand-written corpus, by set, family and code, is ``bench/precision.py``.)

A defect counts as detected when its reason code is among the verdict's refusal codes; for
``evidence_truncated`` (about the training export), when the verdict marks the package not
``sft_ready`` with it; for ``vacuous_safety`` (basis review), when a review note carries it.
``nondeterministic`` is seeded by running the reference in a world whose clock leaks wall time; ``duplicate_package``
by verifying each clean package again against an index that already holds it; ``schema_invalid``
by corrupting a check kind. The clock leak is only counted as seeded where it is observable (the
reference writes a timestamp).
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from unittest import mock

from pipeline.core.codes import BASIS, Basis, Code
from pipeline.core.episode import execute
from pipeline.core.outcomes import Verdict
from pipeline.core.services import DEFAULT_PROFILE
from pipeline.core.world import World
from pipeline.generation.defects import DEFECTS, apply_defect
from pipeline.generation.offline import generate_package
from pipeline.taxonomy.capabilities import taxonomy
from pipeline.verify.dedup import MemoryDedup
from pipeline.verify.verifier import verify_package


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-template", type=int, default=4, help="clean packages per workflow template")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--services", default=DEFAULT_PROFILE, help="service profile whose templates are seeded")
    args = parser.parse_args()

    templates = [(cap.name, tpl.name) for cap in taxonomy().values() for tpl in cap.templates_of(args.services)]
    clean = [generate_package(cap, tpl, args.seed, slot) for cap, tpl in templates for slot in range(args.per_template)]
    seeded: Counter[str] = Counter()
    detected: Counter[str] = Counter()
    started = time.perf_counter()
    false_rejections = [(p.capability, p.workflow, verify_package(p).codes) for p in clean]
    false_rejections = [f for f in false_rejections if f[2]]
    rng = random.Random(args.seed)
    for package in clean:
        for name in DEFECTS:
            broken = apply_defect(package, name, rng)
            if broken is None:
                continue
            seeded[name] += 1
            detected[name] += _detected(name, verify_package(broken))
        data = package.model_dump(mode="json")
        data["checks"][0]["kind"] = "state_cnt"
        seeded["schema_invalid"] += 1
        detected["schema_invalid"] += "schema_invalid" in verify_package(data).codes
        index = MemoryDedup()
        index.add(package)
        seeded["duplicate_package"] += 1
        detected["duplicate_package"] += "duplicate_package" in verify_package(package, dedup=index).codes
    with mock.patch.object(World, "_clock", lambda self: str(time.perf_counter_ns())):
        for package in clean:
            if execute(package) == execute(package):
                continue  # the reference never reads the clock: the leak is not observable
            seeded["nondeterministic"] += 1
            detected["nondeterministic"] += "nondeterministic" in verify_package(package).codes
    elapsed = time.perf_counter() - started

    print(f"{len(clean)} clean packages from {len(templates)} templates of service profile {args.services}")
    print(f"{'code':28} {'detected':>9} / {'seeded':<7} ratio")
    for code in Code:
        s, d = seeded[code.value], detected[code.value]
        ratio = f"{d / s:.3f}" if s else "  -  "
        print(f"{code.value:28} {d:>9} / {s:<7} {ratio}")
    print(f"false rejections on clean packages: {len(false_rejections)} of {len(clean)}")
    for cap, workflow, codes in false_rejections[:10]:
        print(f"    {cap}/{workflow}: {codes}")
    print(f"codes never seeded: {[c.value for c in Code if not seeded[c.value]] or 'none'}")
    print(f"elapsed {elapsed:.1f} s")


def _detected(code: str, verdict: Verdict) -> bool:
    if BASIS[Code(code)] is Basis.TRAINING:
        return any(f.code == code for f in verdict.sft)
    if BASIS[Code(code)] is Basis.REVIEW:
        return code in verdict.review_codes
    return code in verdict.codes


if __name__ == "__main__":
    main()
