"""What verification leaves to the cycle collector: objects in reference cycles (freed only when the
collector runs, and walked by it every time it does), per package, over offline packages.

    python bench/reference_cycles.py [--count 210] [--seed 7]

Generates ``--count`` offline packages round robin over the capabilities (as
``bench/verify_command.py`` does), verifies each once to import and compile what verification
needs, then verifies them again with the collector off and ``gc.DEBUG_SAVEALL`` on, and counts what
one collection then finds unreachable: the objects only the cycle collector could free, by type.
Run it with ``PYTHONPATH`` naming another checkout to measure that one.
"""

from __future__ import annotations

import argparse
import gc
from collections import Counter

from pipeline.generation.offline import generate_package, pick_template
from pipeline.taxonomy.capabilities import taxonomy
from pipeline.verify.verifier import verify_package


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=210)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    caps = list(taxonomy())
    documents = [generate_package(caps[i % len(caps)], pick_template(caps[i % len(caps)], i // len(caps)),
                                  args.seed, i // len(caps)).model_dump(mode="json") for i in range(args.count)]
    for document in documents:
        verify_package(document)
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    for document in documents:
        verify_package(document)
    gc.collect()
    kinds = Counter(type(o).__name__ for o in gc.garbage)
    found = len(gc.garbage)
    gc.set_debug(0)
    gc.garbage.clear()
    gc.enable()
    print(f"{args.count} packages: {found:,} objects left to the cycle collector "
          f"({found / args.count:,.1f} per package)")
    for kind, n in kinds.most_common(8):
        print(f"  {kind:24s} {n:,}")


if __name__ == "__main__":
    main()
