"""One meaning of "passed": full marks (``core.package.passes``), in the grade, ``TaskEnv``, the
rollout record, calibration's pass rates and pass@k, the stored rollouts of an older catalog, and
the verifier's witnesses (a wrong agent that merely loses score does not pass)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipeline.catalog import schema
from pipeline.catalog.store import Catalog
from pipeline.core.package import GRAVE_CEILING, PASS_SCORE, PASS_TOLERANCE, TaskPackage, load_package, passes
from pipeline.env.task_env import Answer, TaskEnv, ToolCall
from pipeline.verify.verifier import verify_package
from tests.catalog.rollout_rows import add_rollouts, record_packages, rollout


def test_the_line_is_full_marks_within_float_rounding() -> None:
    assert PASS_SCORE == 1.0 and GRAVE_CEILING < PASS_SCORE
    assert passes(1.0) and passes(1.0 - PASS_TOLERANCE / 2) and passes(sum([0.1] * 10))  # 0.9999999999999999
    assert not passes(0.999999) and not passes(0.9) and not passes(0.75) and not passes(0.0)


def _answer_weighs_a_tenth(todo_doc: dict[str, Any]) -> TaskPackage:
    """The todo package with its create weighing 0.9 and an answer naming the venue 0.1."""
    todo_doc["checks"] = [{**todo_doc["checks"][0], "weight": 0.9, "where": {"title": {"$regex": r"^book the venue\.?$"}},
                           "ignore_case": True},
                          {"kind": "answer_contains", "weight": 0.1, "values": ["venue"]}]
    return load_package(todo_doc)


def _play(package: TaskPackage, answer: str) -> TaskEnv:
    env = TaskEnv(package)
    env.reset()
    env.step(ToolCall(name="todo_create_task", arguments={"title": "Book the venue"}))
    env.step(Answer(text=answer))
    return env


def test_task_env_a_wrong_agent_at_0_9_does_not_pass_and_full_marks_do(todo_doc: dict[str, Any]) -> None:
    package = _answer_weighs_a_tenth(todo_doc)
    silent = _play(package, "Done.").score()  # does the work, says nothing of it: loses the answer check
    assert silent.score == pytest.approx(0.9) and not silent.passed
    full = _play(package, "Added: Book the venue.").score()
    assert full.score == 1.0 and full.passed


def test_the_verifier_accepts_what_it_did_and_its_wrong_agents_do_not_pass(todo_doc: dict[str, Any]) -> None:
    """The empty answer scores 0.9: under the verifier's bound (the pass line), so the package
    stays accepted, and now that agent is also not called passed."""
    verdict = verify_package(_answer_weighs_a_tenth(todo_doc))
    assert verdict.accepted and verdict.score == 1.0


@pytest.fixture
def packages() -> list[TaskPackage]:
    from tests.conftest import load_examples

    return load_examples()[:2]


def test_rollouts_pass_rates_and_pass_at_k_count_full_marks_only(empty_catalog: Path,
                                                                  packages: list[TaskPackage]) -> None:
    a, b = packages
    assert not rollout(a.id, "m", 0, 0.9).passed and rollout(a.id, "m", 0, 1.0).passed
    record_packages(empty_catalog, packages)
    add_rollouts(empty_catalog, [rollout(a.id, "m", 0, 0.9), rollout(a.id, "m", 1, 0.95), rollout(a.id, "m", 2, 1.0),
                                 rollout(b.id, "m", 0, 0.9), rollout(b.id, "m", 1, 0.8)])
    with Catalog.open(empty_catalog, read_only=True) as catalog:
        rows = {r.package_id: r for r in catalog.calibration(model="m", k=2)}
    assert (rows[a.id].passes, rows[a.id].pass_rate, rows[a.id].pass_at_k) == (1, pytest.approx(1 / 3),
                                                                              pytest.approx(2 / 3))
    assert (rows[b.id].passes, rows[b.id].pass_at_k) == (0, 0.0)  # 0.9 and 0.8: no pass


def test_rows_stored_under_the_old_line_get_the_one_meaning(empty_catalog: Path, packages: list[TaskPackage]) -> None:
    a, _ = packages
    record_packages(empty_catalog, packages)
    add_rollouts(empty_catalog, [rollout(a.id, "m", 0, 0.8), rollout(a.id, "m", 1, 1.0)])
    con = duckdb.connect(str(empty_catalog))
    try:
        con.execute("UPDATE rollouts SET passed = score >= 0.75")  # what a schema-4 catalog holds
        for statement in schema._V6_PASSED:
            con.execute(statement)
        assert con.execute("SELECT sample, passed FROM rollouts ORDER BY sample").fetchall() == [(0, False), (1, True)]
    finally:
        con.close()
    assert schema.latest_version() >= 5
