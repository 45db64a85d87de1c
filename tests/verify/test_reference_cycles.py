"""Verification leaves no reference cycles: everything it allocates is freed by reference counting
as soon as it is unused. A cycle (a nested function that calls itself, an error whose traceback
holds the frame that keeps it) keeps what it reaches until the cycle collector runs: a package's
whole run, its checkpoints and worlds included, when the frame is the verifier's. With
``tune_collector``'s thresholds that collector runs rarely and walks every young object when it
does."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable

from pipeline.core.outcomes import Verdict
from pipeline.core.package import TaskPackage
from pipeline.generation.offline import generate_package, pick_template
from pipeline.taxonomy.capabilities import taxonomy
from pipeline.verify.verifier import verify_package


def _documents(seed: int) -> list[dict]:
    """One offline package per capability and template slot 0–1, as documents (each is validated
    by the verifier, as ``synth verify`` validates a file)."""
    return [generate_package(cap, pick_template(cap, slot), seed, slot).model_dump(mode="json")
            for cap in taxonomy() for slot in range(2)]


def _cycle_garbage(work: Callable[[], object]) -> list[object]:
    """What the cycle collector finds unreachable after ``work()`` runs (``DEBUG_SAVEALL``), with
    the collector off while it runs; what was garbage before it is freed first, and what it left is
    freed after. Objects an earlier test's command froze (``tune_collector``, run in this process)
    are unfrozen first, so that garbage only they held is freed before ``work()`` runs too."""
    enabled = gc.isenabled()
    gc.unfreeze()
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        work()
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.collect()
        if enabled:
            gc.enable()


def test_verifying_packages_leaves_nothing_for_the_cycle_collector() -> None:
    documents = _documents(seed=11)
    assert any(step.get("ask") for d in documents for step in d["reference"])  # a step tried as a call first
    for document in documents:  # first use: modules imported on first need, their models built
        verify_package(document)
    verdicts: list[Verdict] = []
    garbage = _cycle_garbage(lambda: verdicts.extend(verify_package(document) for document in documents))
    assert len(verdicts) == len(documents) and all(v.score is not None for v in verdicts)
    kinds = Counter(type(o).__name__ for o in garbage).most_common(8)
    assert not garbage, f"reference cycles left by verification: {kinds}"


def test_a_step_refused_as_a_call_leaves_no_cycle(todo_doc: dict) -> None:
    """A step is tried as a call before it is a question or an answer: each failed kind is an error
    raised and caught inside validation, and none of them may keep its frame."""
    todo_doc["reference"][1:1] = [{"ask": "Which list?"}]
    TaskPackage.model_validate(todo_doc)
    assert not _cycle_garbage(lambda: TaskPackage.model_validate(todo_doc))
