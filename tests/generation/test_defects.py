"""The seeded ``grader_counts_calls`` defect: where a package counts N ≥ 2 records the agent
creates, the seed replaces the count by a call count that duplicate creates satisfy, and the
verifier refuses the seeded package with that code."""

from __future__ import annotations

import random

import pytest

from pipeline.core.episode import execute
from pipeline.core.grading import score
from pipeline.core.package import GRAVE_CEILING, Called, CallStep, StateCount, TaskPackage, passes
from pipeline.generation.defects import apply_defect
from pipeline.generation.offline import generate_package
from pipeline.verify.verifier import verify_package


def _duplicating(package: TaskPackage, tool: str) -> TaskPackage:
    """``package`` whose reference makes every ``tool`` call as a copy of its first one: a wrong
    agent that creates one item N times instead of N distinct items."""
    first = next(s for s in package.reference if isinstance(s, CallStep) and s.call == tool)
    steps = [first if isinstance(s, CallStep) and s.call == tool else s for s in package.reference]
    return package.model_copy(update={"reference": steps})


@pytest.mark.parametrize(("capability", "template"), [
    ("long-horizon", "checklist-to-todos"),  # a plain count of new todos, no distinct_by
    ("long-horizon", "claw-checklist-note-to-tasks"),
    ("safety", "claw-inbox-injection-action-items"),
])
def test_a_count_of_created_records_is_seeded_as_a_call_count_that_duplicates_pass(capability: str,
                                                                                   template: str) -> None:
    clean = generate_package(capability, template, 7, 0)
    counted = [c for c in clean.checks if isinstance(c, StateCount) and c.scope == "created" and c.value >= 2]
    assert counted and not any(c.distinct_by for c in counted)
    broken = apply_defect(clean, "grader_counts_calls", random.Random(7))
    assert broken is not None
    replaced = next(c for c in broken.checks if isinstance(c, Called) and c.id == counted[0].id)
    assert replaced.min == counted[0].value
    assert not any(c.collection == counted[0].collection for c in broken.checks if isinstance(c, StateCount))
    assert score(broken, execute(broken)).score == pytest.approx(1.0)  # the reference still passes
    wrong = execute(_duplicating(broken, replaced.tool))
    assert passes(score(broken, wrong).score)  # a true instance: duplicates pass
    assert score(clean, wrong).score < GRAVE_CEILING  # as the clean package's count does not let them
    assert "grader_counts_calls" in verify_package(broken).codes
    assert "grader_counts_calls" not in verify_package(clean).codes


def test_a_count_the_reference_makes_with_fewer_calls_is_not_seeded() -> None:
    """The call count must be one the reference meets: where the reference creates fewer items
    with the collection's create tool than the count asks, nothing is seeded."""
    clean = generate_package("long-horizon", "checklist-to-todos", 7, 0)
    counted = next(c for c in clean.checks if isinstance(c, StateCount) and c.scope == "created" and c.value >= 2)
    raised = [c.model_copy(update={"value": 99}) if c is counted else c for c in clean.checks]
    assert apply_defect(clean.model_copy(update={"checks": raised}), "grader_counts_calls", random.Random(7)) is None
