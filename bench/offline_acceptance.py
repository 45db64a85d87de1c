"""Offline generator acceptance: per capability, generate slots 0..N-1 and verify every package.

Run: ``python bench/offline_acceptance.py`` (defaults: 1,000 packages per capability, seed 7);
``--services claw`` measures the templates of that service profile instead of the default ones.
Prints, per capability: the fraction the verifier accepts, the fraction of distinct request
texts, repeated package ids, near-duplicates (same request and initial state), and generation and
verification speed; multi-turn packages lacking an ``ask`` step or an ``asked_user`` check; then
the rejection reason codes by template, if any.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from pipeline.core.package import AskStep, near_key
from pipeline.core.services import DEFAULT_PROFILE
from pipeline.generation.offline import generate_package, pick_template
from pipeline.taxonomy.capabilities import taxonomy
from pipeline.verify.verifier import verify_package


def measure(capability: str, count: int, seed: int,
            profile: str = DEFAULT_PROFILE) -> tuple[dict[str, float | int], Counter[tuple[str, str]]]:
    """Figures for one capability, and rejection counts by (template, code)."""
    ids: Counter[str] = Counter()
    texts: set[str] = set()
    near: set[str] = set()
    rejected: Counter[tuple[str, str]] = Counter()
    accepted = no_dialogue = not_sft = 0
    gen_s = verify_s = 0.0
    for slot in range(count):
        template = pick_template(capability, slot, profile)
        t0 = time.perf_counter()
        try:
            package = generate_package(capability, template, seed, slot)
        except ValueError as exc:
            rejected[(template, f"generation error: {exc}")] += 1
            continue
        t1 = time.perf_counter()
        verdict = verify_package(package)
        t2 = time.perf_counter()
        gen_s += t1 - t0
        verify_s += t2 - t1
        ids[package.id] += 1
        texts.add(package.request.text)
        near.add(near_key(package))
        accepted += verdict.accepted
        not_sft += verdict.accepted and not verdict.sft_ready
        no_dialogue += not (any(isinstance(step, AskStep) for step in package.reference)
                            and any(check.kind == "asked_user" for check in package.checks))
        for code in verdict.codes:
            rejected[(template, code)] += 1
    figures: dict[str, float | int] = {
        "templates": len(taxonomy()[capability].templates_of(profile)),
        "accepted": accepted / count,
        "distinct_requests": len(texts) / count,
        "repeated_ids": sum(n - 1 for n in ids.values()),
        "near_duplicates": count - len(near),
        "gen_per_s": count / gen_s,
        "verify_per_s": count / verify_s,
        "no_dialogue": no_dialogue,
        "accepted_n": accepted,
        "not_sft_ready": not_sft,
    }
    return figures, rejected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="packages per capability (slots 0..count-1)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--capability", action="append", help="only these capabilities (repeatable)")
    parser.add_argument("--services", default=DEFAULT_PROFILE, help="service profile whose templates are measured")
    args = parser.parse_args()
    capabilities = args.capability or [c.name for c in taxonomy().values() if c.templates_of(args.services)]

    header = f"{'capability':<24}{'tmpl':>5}{'accepted':>10}{'distinct req':>14}{'repeated ids':>14}" \
             f"{'near dups':>11}{'gen pkg/s':>11}{'verify pkg/s':>14}"
    print(f"offline generator, services {args.services}, seed {args.seed}, {args.count} packages per capability")
    print(header)
    print("-" * len(header))
    all_rejected: dict[str, Counter[tuple[str, str]]] = {}
    total_gen = total_n = 0.0
    multi_turn_gaps = ""
    accepted_n = not_sft = 0
    for cap in capabilities:
        f, rejected = measure(cap, args.count, args.seed, args.services)
        all_rejected[cap] = rejected
        total_gen += args.count / f["gen_per_s"]
        total_n += args.count
        accepted_n += int(f["accepted_n"])
        not_sft += int(f["not_sft_ready"])
        print(f"{cap:<24}{f['templates']:>5}{f['accepted']:>10.1%}{f['distinct_requests']:>14.1%}"
              f"{f['repeated_ids']:>14}{f['near_duplicates']:>11}{f['gen_per_s']:>11.0f}{f['verify_per_s']:>14.0f}")
        if cap == "multi-turn":
            multi_turn_gaps = f"{f['no_dialogue']} of {args.count}"
    print("-" * len(header))
    print(f"overall generation speed: {total_n / total_gen:.0f} packages/s")
    print(f"accepted packages not sft_ready (evidence lost under the export's cut): {not_sft} of {accepted_n}")
    if multi_turn_gaps:
        print(f"multi-turn packages without an ask step and an asked_user check: {multi_turn_gaps}")
    for cap, rejected in all_rejected.items():
        for (template, code), n in sorted(rejected.items()):
            print(f"rejected: {cap}/{template}: {code} x{n}")


if __name__ == "__main__":
    main()
