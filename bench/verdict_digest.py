"""A digest of verdicts: whether a change to the verifier changed any verdict, to the letter.

    python bench/verdict_digest.py [--out verdicts.json]

Verifies 1,900 offline packages (seeds 7 and 13, every capability), the realistic corpus
(``tests/corpus/``) and every defect of ``pipeline/generation/defects.py`` seeded into 2 clean
packages per template (the default service profile's, as ``pick_template`` picks by default), and prints how many verdicts there are and a SHA-256 of all of them (id,
score, and each finding's code, step, message and detail). Run it at two commits: equal digests
mean equal verdicts. ``--out`` writes the verdicts themselves; ``--against OLD`` reads verdicts an
earlier run wrote with ``--out`` and lists, by tag and package id, the verdicts only the old run has,
those only this run has, and those of a package both verified that differ (a change that adds or
removes seeded packages moves the digest; the list shows whether any unchanged package's verdict
moved). Set seeding walks sets of strings, so the script runs with ``PYTHONHASHSEED=0`` (it restarts itself
with it when unset).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
from pathlib import Path

if os.environ.get("PYTHONHASHSEED") != "0":  # string hashing decides set order, and seeding walks sets
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable, *sys.argv])

from pipeline.core.outcomes import Verdict
from pipeline.core.services import DEFAULT_PROFILE
from pipeline.generation.defects import DEFECTS, apply_defect
from pipeline.generation.offline import generate_package, pick_template
from pipeline.taxonomy.capabilities import taxonomy
from pipeline.verify.verifier import verify_package
from tests.support.corpus import CORPUS_DIR


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write every verdict here (JSON)")
    parser.add_argument("--against", type=Path, help="compare with the verdicts an earlier --out wrote")
    args = parser.parse_args()
    earlier = _earlier(parser, args.against) if args.against else None
    verdicts: list[list[object]] = []

    def keep(tag: str, verdict: Verdict) -> None:
        verdicts.append([tag, verdict.id, verdict.score, [
            [f.code, f.step, f.message, json.dumps(f.detail, sort_keys=True, default=str)] for f in verdict.findings]])

    capabilities = list(taxonomy())
    for seed, count in ((7, 1200), (13, 700)):
        for i in range(count):
            capability, slot = capabilities[i % len(capabilities)], i // len(capabilities)
            keep(f"offline-{seed}", verify_package(generate_package(capability, pick_template(capability, slot),
                                                                    seed, slot)))
    for path in sorted(CORPUS_DIR.rglob("*.json")):
        keep(str(path.relative_to(CORPUS_DIR)), verify_package(json.loads(path.read_text(encoding="utf-8"))["package"]))
    rng = random.Random(7)
    for capability in taxonomy().values():
        for template in capability.templates_of(DEFAULT_PROFILE):
            for slot in range(2):
                package = generate_package(capability.name, template.name, 7, slot)
                for name in DEFECTS:
                    broken = apply_defect(package, name, rng)
                    if broken is not None:
                        keep(f"seeded-{name}", verify_package(broken))
    text = json.dumps(verdicts, default=str)
    if args.out:
        args.out.write_text(json.dumps(verdicts, indent=1, default=str), encoding="utf-8")
    print(f"verdicts  {len(verdicts)}")
    print(f"digest    {hashlib.sha256(text.encode()).hexdigest()[:16]}")
    if earlier is not None:
        _compare(earlier, verdicts)


def _earlier(parser: argparse.ArgumentParser, path: Path) -> list[list[object]]:
    """The verdicts ``--out`` wrote to ``path``; a file that is missing or not such a list ends
    the script with one line saying so."""
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        parser.error(f"--against {path}: cannot read it ({e}); give a file written by --out")
    if not isinstance(old, list) or not all(isinstance(v, list) and len(v) == 4 for v in old):
        parser.error(f"--against {path}: not a list of verdicts; give a file written by --out")
    return old


def _compare(old: list[list[object]], new: list[list[object]]) -> None:
    """Print the verdicts only in ``old``, only in ``new``, and those under the same tag and
    package id that differ, each as ``tag id``."""
    before = {(str(v[0]), str(v[1])): v for v in old}
    after = {(str(v[0]), str(v[1])): json.loads(json.dumps(v, default=str)) for v in new}
    for label, keys in (("only before", [k for k in before if k not in after]),
                        ("only after", [k for k in after if k not in before]),
                        ("changed", [k for k in before if k in after and before[k] != after[k]])):
        print(f"{label:11} {len(keys)}")
        for tag, package in keys:
            print(f"    {tag} {package}")


if __name__ == "__main__":
    main()
