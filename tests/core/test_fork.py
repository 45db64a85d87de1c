"""Copy on write and forks: a forked world or episode goes on independently of its original, the
package's own data is never changed, and the verifier's checkpointed replays give exactly what a
replay from scratch gives."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from pipeline.core.episode import Answer, Ask, Episode, EpisodeOver, ToolCall, execute
from pipeline.core.grading import Grader
from pipeline.core.package import AnswerStep, AskStep, CallStep, TaskPackage, load_package
from pipeline.core.trajectory import trajectory_data
from pipeline.core.world import World
from pipeline.generation.offline import generate_package, pick_template
from pipeline.taxonomy.capabilities import taxonomy
from pipeline.verify.execution import ReferenceRun


@pytest.fixture
def todo(todo_doc: dict[str, Any]) -> TaskPackage:
    return load_package(todo_doc)


def titles(world: World) -> list[str]:
    return [r["title"] for r in world.state["todo"]["tasks"]]


def test_a_fork_and_its_original_never_see_each_others_writes(todo: TaskPackage) -> None:
    world = World.from_package(todo)
    world.call("todo_create_task", {"title": "Before the fork"})
    twin = world.fork()
    world.call("todo_create_task", {"title": "Original only"})
    twin.call("todo_create_task", {"title": "Twin only"})
    assert titles(world) == ["Renew parking permit", "Before the fork", "Original only"]
    assert titles(twin) == ["Renew parking permit", "Before the fork", "Twin only"]
    assert [a.args["title"] for a in world.audit] == ["Before the fork", "Original only"]
    assert [a.args["title"] for a in twin.audit] == ["Before the fork", "Twin only"]
    # both handed out the same next id, independently
    assert world.state["todo"]["tasks"][-1]["id"] == twin.state["todo"]["tasks"][-1]["id"] == "todo-003"


def test_updates_and_deletes_copy_the_record_not_change_it(todo: TaskPackage) -> None:
    pristine = copy.deepcopy(todo.initial_state)
    world = World.from_package(todo)
    record = world.state["todo"]["tasks"][0]
    twin = world.fork()
    assert twin.call_endpoint("/todo/tasks/update", {"task_id": "todo-001", "priority": "high"}).ok
    assert record["priority"] == "low" and world.state["todo"]["tasks"][0] is record
    assert twin.state["todo"]["tasks"][0]["priority"] == "high"
    assert world.call_endpoint("/todo/tasks/delete", {"task_id": "todo-001"}).ok
    assert world.state["todo"]["tasks"] == [] and len(twin.state["todo"]["tasks"]) == 1
    assert todo.initial_state == pristine  # the package's records are never written


def test_reset_restores_the_initial_state_and_forgets_faults(todo_doc: dict[str, Any]) -> None:
    todo = load_package({**todo_doc, "faults": [{"tool": "todo_create_task", "on_call": 1}]})
    world = World.from_package(todo)
    assert world.call("todo_create_task", {"title": "x"}).status == 503
    assert world.call("todo_create_task", {"title": "x"}).ok
    world.reset()
    assert world.state == world.initial and world.audit == []
    assert world.call("todo_create_task", {"title": "x"}).status == 503


def test_an_episode_fork_keeps_its_own_dialogue(example_doc: Any) -> None:
    package = load_package(example_doc("multi-turn-schedule-meeting"))
    episode = Episode(package)
    twin = episode.fork()
    record = twin.apply(Ask(text="Which day next week works for you?"))
    assert record.revealed == ["day"] and twin.facts == {"day": "2026-12-03"}
    assert episode.facts == {} and episode.user.revealed == [] and episode.steps == []
    twin.apply(Answer(text="Booked."))
    with pytest.raises(EpisodeOver):
        twin.apply(ToolCall(name="contacts_search", arguments={"query": "Maya"}))
    episode.apply(ToolCall(name="contacts_search", arguments='{"query": "Maya"}'))
    assert not episode.answered and len(episode.steps) == 1 and len(twin.steps) == 2


def _variants(package: TaskPackage, rng: random.Random) -> list[tuple[list[int], list[Any], dict[str, str] | None]]:
    """Mutated step lists of the kinds the verifier makes: a step dropped, a call's arguments
    changed, a call repeated under a new id, the answer emptied, asks dropped with guessed facts."""
    steps = list(package.reference)
    ids = list(range(len(steps)))
    out: list[tuple[list[int], list[Any], dict[str, str] | None]] = [([], [], None), (ids, steps, None)]
    for i in range(len(steps)):
        out.append(([j for j in ids if j != i], [s for j, s in enumerate(steps) if j != i], None))
    calls = [i for i, s in enumerate(steps) if isinstance(s, CallStep)]
    for i in rng.sample(calls, min(2, len(calls))):
        changed = CallStep(call=steps[i].call, args={**steps[i].args, "zzz": 1})
        out.append((ids, [changed if j == i else s for j, s in enumerate(steps)], None))
        out.append((ids[:i + 1] + [len(steps)] + ids[i + 1:], steps[:i + 1] + [steps[i]] + steps[i + 1:], None))
    out.append((ids, [AnswerStep(answer="") if isinstance(s, AnswerStep) else s for s in steps], None))
    if package.user and package.user.facts:
        kept = [(j, s) for j, s in zip(ids, steps, strict=True) if not isinstance(s, AskStep)]
        guesses = {f.key: f.value + "x" for f in package.user.facts}
        out.append(([j for j, _ in kept], [s for _, s in kept], guesses))
    return out


@pytest.mark.parametrize("capability", sorted(taxonomy()))
def test_a_variant_from_a_checkpoint_equals_a_replay_from_scratch(capability: str) -> None:
    rng = random.Random(capability)
    for slot in range(6):
        package = generate_package(capability, pick_template(capability, slot), 5, slot)
        run = ReferenceRun(package, Grader(package))
        assert trajectory_data(run.trajectory) == trajectory_data(execute(package))
        for ids, steps, facts in _variants(package, rng):
            from_checkpoint = run.run(ids, steps, facts)
            from_scratch = execute(package, steps, facts, ids)
            assert trajectory_data(from_checkpoint) == trajectory_data(from_scratch), (package.workflow, ids)
        # running variants left the reference and its checkpoints as they were
        assert trajectory_data(run.trajectory) == trajectory_data(execute(package))


def test_arguments_are_checked_again_until_they_pass_and_per_endpoint(todo: TaskPackage) -> None:
    """A world remembers the package's own argument objects that passed their endpoint's check (a
    replayed step brings the same object again): bad arguments are refused every time, passing one
    endpoint's check says nothing of another's, and an agent's arguments are checked every call,
    even when the agent changes one dict in place between calls."""
    world = World.from_package(todo)
    bad: dict[str, Any] = {"title": 5}
    assert [world.call("todo_create_task", bad, known=True).status for _ in range(2)] == [400, 400]
    args: dict[str, Any] = {"title": "Book the venue"}
    assert world.call("todo_create_task", args, known=True).status == 200
    assert world.fork().call("todo_create_task", args, known=True).status == 200  # forks share what passed
    assert world.call_endpoint("/todo/tasks/update", args).status == 400  # no task_id: not this endpoint's
    assert world.call_endpoint("/calendar/events/create", args).status == 404  # a service not in this world
    agent: dict[str, Any] = {"title": "Order chairs"}
    assert world.call("todo_create_task", agent).status == 200
    agent["title"] = 12345  # an agent's dict, changed in place: checked again
    assert world.call("todo_create_task", agent).status == 400


def test_a_replay_through_the_remembered_paths_is_a_replay_from_scratch() -> None:
    """Checkpointed variants, which reuse remembered arguments, routes and clocks, leave exactly the
    trajectory a fresh replay of the same steps leaves, on packages of every capability."""
    for capability in taxonomy():
        package = generate_package(capability, pick_template(capability, 1), 4, 1)
        run = ReferenceRun(package, Grader(package))
        steps = list(package.reference)
        for dropped in range(len(steps)):
            ids = [i for i in range(len(steps)) if i != dropped]
            assert run.run(ids, [steps[i] for i in ids]) == execute(package, [steps[i] for i in ids], step_ids=ids)


def test_a_world_played_many_episodes_keeps_the_arguments_of_one(todo: TaskPackage) -> None:
    """``reset`` (a new episode in ``TaskEnv`` or ``synth serve``) forgets the arguments a world
    remembered as checked, so a long training run does not keep every call it ever saw."""
    world = World.from_package(todo)
    for episode in range(3):
        world.reset()
        for n in range(5):
            assert world.call("todo_create_task", {"title": f"Task {episode}.{n}"}, known=True).status == 200
        assert len(world._valid) == 5


def test_a_deleted_id_is_never_handed_out_again_as_the_ids_section_says() -> None:
    """``docs/package.md``, "Ids": 1 + the highest number the collection ever held; on the claw
    profile's counted collections, the length plus one (an id the state holds can recur)."""
    world = World(["todo"], {"todo": {"tasks": [{"id": "todo-007", "title": "Seven", "status": "open"}]}},
                  now="2026-12-01T09:00:00Z")
    first = world.call_endpoint("/todo/tasks/create", {"title": "Eight"}).body["task"]
    deleted = world.call_endpoint("/todo/tasks/delete", {"task_id": first["id"]})
    second = world.call_endpoint("/todo/tasks/create", {"title": "Nine"}).body["task"]
    assert deleted.ok and (first["id"], second["id"]) == ("todo-008", "todo-009")
    jobs = [{"job_id": f"JOB-{n:03d}", "name": f"job {n}", "cron_expression": "0 7 * * *", "action": "run",
             "enabled": True} for n in (4, 7, 9)]
    claw = World(["scheduler"], {"scheduler": {"jobs": jobs}}, now="2026-12-01T09:00:00Z", profile="claw")
    made = claw.call_endpoint("/scheduler/jobs/create", {"name": "new", "cron_expression": "0 8 * * *",
                                                               "action": "run"})
    assert made.ok and made.body["job"]["job_id"] == "JOB-004"
    assert [j["job_id"] for j in claw.state["scheduler"]["jobs"]].count("JOB-004") == 2
