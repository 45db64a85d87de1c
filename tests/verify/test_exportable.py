"""The ClawEnvKit export stage of verification (``pipeline/verify/exportable.py``): claw packages
the export cannot carry at full weight, or whose wrong agents their grader does not fail as synth's
does, are refused ``not_exportable`` when the options ask for it (``require_exportable``: runs do,
``synth verify --require-exportable``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.core.clawenvkit.translation import WrongAgentGrade
from pipeline.core.codes import Code
from pipeline.core.grading import Grader
from pipeline.core.package import GRAVE_BOUND, PASS_SCORE, TaskPackage
from pipeline.generation.offline import generate_package
from pipeline.generation.prompting import generate_prompt
from pipeline.taxonomy.capabilities import taxonomy
from pipeline.verify.execution import run_reference
from pipeline.verify.exportable import export_findings, wrong_agents
from pipeline.verify.mutations import mutation_findings
from pipeline.verify.verifier import Options, verify_package


def claw(capability: str, template: str, seed: int = 7) -> dict[str, Any]:
    """An offline claw package of ``template`` as a document (no id), for editing."""
    data = generate_package(capability, template, seed, 0).model_dump(mode="json")
    data.pop("id", None)
    return data


def check(data: dict[str, Any], check_id: str) -> dict[str, Any]:
    return next(c for c in data["checks"] if c["id"] == check_id)


EXPORTABLE = Options(require_exportable=True)


def not_exportable(data: dict[str, Any]) -> list[dict[str, Any]]:
    verdict = verify_package(data, EXPORTABLE)
    return [{"message": f.message, **f.detail} for f in verdict.findings if f.code is Code.NOT_EXPORTABLE]


def test_a_guard_written_as_an_exact_count_exports_and_the_same_guard_as_state_unchanged_is_refused() -> None:
    data = claw("general", "claw-complete-and-reprioritise-tasks")
    assert verify_package(data, EXPORTABLE).accepted  # the template's guard: called update_task min = max = 2
    changed = {check(data, "first-completed")["record_id"], check(data, "second-priority")["record_id"]}
    others = [t["task_id"] for t in data["initial_state"]["todo"]["tasks"] if t["task_id"] not in changed]
    count = check(data, "two-updates")
    data["checks"].remove(count)
    check(data, "first-completed")["weight"] += count["weight"]
    data["safety"].append({"kind": "state_unchanged", "collection": "todo.tasks",
                           "where": {"task_id": {"$in": others}}})
    [found] = not_exportable(data)
    assert found["reason"] == "safety_lost"
    assert "state_unchanged" in found["message"] and "To change: guard a collection" in found["message"]
    assert verify_package(data, Options()).accepted


def test_a_wrong_agent_their_grader_cannot_tell_from_the_reference_is_named() -> None:
    """Without the exact count of posts, a second identical post keeps full completion in their
    grader ("at least one call with these values"), where synth's count of matching records fails it."""
    data = claw("general", "claw-post-status-from-web")
    one = check(data, "one-post")
    data["checks"].remove(one)
    check(data, "posted")["weight"] += one["weight"]
    [found] = not_exportable(data)
    assert found["reason"] == "wrong_agent_passes" and "wrong agent repeat_create" in found["message"]
    assert found["wrong_agent"] and found["wrong_agent_final"] >= 0.5
    assert verify_package(data, Options()).accepted


def test_a_package_whose_reference_asks_the_user_is_not_checked() -> None:
    """ClawEnvKit tasks are single-turn: the export never takes such a package, so the stage
    leaves it to the other stages."""
    data = claw("multi-turn", "claw-book-meeting-ask-day")
    assert verify_package(data, EXPORTABLE).accepted


def test_other_profiles_are_not_checked(example_doc: Any) -> None:
    package = TaskPackage.model_validate(example_doc("todo-three-items")).with_id()
    run, _ = run_reference(package, Grader(package))
    assert run.wrong_agents is None and export_findings(run) == []


def test_the_run_keeps_each_wrong_agent_it_plays_with_its_bound() -> None:
    package = TaskPackage.model_validate(claw("long-horizon", "claw-checklist-note-to-tasks")).with_id()
    run, _ = run_reference(package, Grader(package, remember_records=True), keep_wrong_agents=True)
    mutation_findings(run)
    bounds = {a.name: a.bound for a in run.wrong_agents or []}
    assert len(run.writes) >= 2  # one of nine items skipped, or each made twice, must lose score
    assert bounds["drop_write"] == PASS_SCORE and bounds["everything_twice"] == PASS_SCORE
    assert bounds["undo_writes"] == GRAVE_BOUND
    assert bounds["repeat_create"] == PASS_SCORE and bounds["drop_answer"] == PASS_SCORE
    assert {a.name for a in wrong_agents(package)} >= set(bounds)  # collateral damage too, when it applies


@pytest.mark.parametrize(("grade", "caught", "passes"), [
    (dict(bound=PASS_SCORE, completion=0.9, final=0.92, safety=1.0), True, True),  # loses score: caught, passes their line
    (dict(bound=PASS_SCORE, completion=1.0, final=1.0, safety=1.0), False, True),
    (dict(bound=GRAVE_BOUND, completion=0.8, final=0.84, safety=1.0), False, True),
    (dict(bound=GRAVE_BOUND, completion=0.75, final=0.8, safety=1.0), True, True),
    (dict(bound=GRAVE_BOUND, completion=1.0, final=0.0, safety=0.0), True, False),  # a safety check broken
])
def test_a_wrong_agent_is_caught_there_as_synth_catches_it(grade: dict[str, float], caught: bool, passes: bool) -> None:
    g = WrongAgentGrade(name="w", **grade)
    assert (g.caught, g.passes) == (caught, passes)


def test_a_code_a_page_read_whole_shows_is_carried_into_the_post() -> None:
    """A web page answered as one record ("Incident INC-2160") is a read the misread_value agent
    takes its code from: without the check on the incident number, a wrong one would score full."""
    data = claw("general", "claw-post-status-from-web")
    incident = check(data, "incident-given")
    data["checks"].remove(incident)
    check(data, "status-given")["weight"] += incident["weight"]
    verdict = verify_package(data, Options())
    assert verdict.codes == [Code.GRADER_UNDERCONSTRAINED.value]
    assert [f.detail["mutation"] for f in verdict.findings] == ["misread_value"]


def test_synth_verify_refuses_an_unexportable_claw_package_when_asked(tmp_path: Path, synth: Any) -> None:
    """Checking a file judges the environment; `--require-exportable` also asks what `synth run`
    asks of claw packages."""
    data = claw("general", "claw-post-status-from-web")
    one = check(data, "one-post")
    data["checks"].remove(one)
    check(data, "posted")["weight"] += one["weight"]
    path = tmp_path / "post.json"
    path.write_text(json.dumps(data))
    refused = synth("verify", path, "--json", "--require-exportable")
    assert refused.exit_code == 1 and json.loads(refused.stdout)["codes"] == [Code.NOT_EXPORTABLE.value]
    assert synth("verify", path).exit_code == 0


def test_the_claw_brief_states_the_export_limits_and_the_default_brief_does_not() -> None:
    general = taxonomy()["general"]
    claw_brief = generate_prompt(general, next(t for t in general.templates if t.profile == "claw"), seed=1)
    default_brief = generate_prompt(general, next(t for t in general.templates if t.profile != "claw"), seed=1)
    assert "# ClawEnvKit export" in claw_brief and "not_called without args_match" in claw_brief
    assert "ClawEnvKit" not in default_brief


def test_a_run_refuses_unexportable_claw_packages_unless_it_allows_them() -> None:
    from pipeline.runs.options import RunOptions

    assert RunOptions(capability="general", count=1).verifier_options().require_exportable
    assert not RunOptions(capability="general", count=1, allow_unexportable=True).verifier_options().require_exportable
