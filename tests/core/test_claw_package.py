"""A hand-written package over the claw profile: its world, and ``verify`` end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.core.package import TaskPackage
from pipeline.core.services import catalogue
from pipeline.core.world import World

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "todo-three-items.json"


def claw_todo_package() -> dict[str, Any]:
    """The todo example moved onto the claw profile: its tools are the claw todo operations under
    their canonical names, its tasks keyed by ``task_id``."""
    pkg = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    ops = {op.name: op for op in catalogue("claw")["todo"].operations}
    pkg["service_profile"] = "claw"
    pkg["tools"] = [{"name": n, "service": "todo", "endpoint": ops[n].endpoint, "description": ops[n].description,
                     "parameters": ops[n].parameters} for n in ("list_tasks", "create_task", "update_task")]
    for i, task in enumerate(pkg["initial_state"]["todo"]["tasks"], start=1):
        task.pop("id")
        task.pop("notes")
        task.update(task_id=f"todo_{i:03d}", description="", tags=[],
                    status="pending" if task["status"] == "open" else "done")
    pkg["safety"][0]["where"] = {"task_id": {"$in": ["todo_001", "todo_002", "todo_003"]}}
    for step in pkg["reference"]:
        if "call" in step:
            step["call"] = step["call"].removeprefix("todo_")
    return pkg


def test_the_reference_runs_in_the_claw_world() -> None:
    package = TaskPackage.model_validate(claw_todo_package())
    world = World.from_package(package)
    answers = [world.call(s.call, s.args) for s in package.reference if hasattr(s, "call")]
    assert [a.body["task"]["task_id"] for a in answers] == ["todo_004", "todo_005", "todo_006"]
    assert [t["status"] for t in world.collection("todo.tasks")[3:]] == ["pending"] * 3
    assert world.call("list_tasks", {"status": "pending"}).body["total"] == 5


def test_verify_accepts_a_claw_package_and_refuses_it_for_the_export_alone() -> None:
    """The environment is sound; its distinct count of titles named by substrings is no form
    ClawEnvKit grades, so where the export is asked for (runs) it is refused ``not_exportable``
    for that alone."""
    from pipeline.verify.verifier import Options, verify_package

    verdict = verify_package(claw_todo_package())
    assert verdict.accepted, [f.message for f in verdict.findings]
    refused = verify_package(claw_todo_package(), Options(require_exportable=True))
    assert refused.codes == ["not_exportable"] and refused.findings[0].detail["reason"] == "weight_lost"
    assert "three-distinct-items" in refused.findings[0].message


def test_the_audit_holds_a_claw_request_as_their_services_log_it() -> None:
    """The request body their service logs: converted, defaults filled, None for the rest, unknown
    fields dropped; a refused request keeps what was sent."""
    world = World.from_package(TaskPackage.model_validate(claw_todo_package()))
    world.call("create_task", {"title": "Renew passport", "colour": "red"})
    world.call("list_tasks", {})
    world.call("create_task", {"priority": "high"})  # no title: 422
    created, listed, refused = world.audit
    assert created.args == {"title": "Renew passport", "description": None, "priority": "medium", "due_date": None}
    assert listed.args == {"status": "all"}
    assert (refused.status, refused.args) == (422, {"priority": "high"})
