"""Service profiles: a package names the catalogue its services come from."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pipeline.core.package import TaskPackage
from pipeline.core.services import catalogue, find_operation, profile_names
from pipeline.generation.tools import catalogue_tool
from pipeline.verify.verifier import verify_package


def _package(**extra: object) -> dict[str, object]:
    return {"capability": "general", "workflow": "hand-built", "services": ["todo"],
            "request": {"text": "Add a todo titled Renew passport."},
            "tools": [catalogue_tool("todo_create_task").model_dump(mode="json")],
            "checks": [{"kind": "state_count", "weight": 1.0, "collection": "todo.tasks", "scope": "created",
                        "where": {"title": {"$regex": "passport"}}, "op": "==", "value": 1, "ignore_case": True}],
            "reference": [{"call": "todo_create_task", "args": {"title": "Renew passport"}}], **extra}


def test_the_default_profile_is_the_folder_s_own_services() -> None:
    assert profile_names()[0] == "default"
    assert find_operation("/todo/tasks/create") == find_operation("/todo/tasks/create", "default")
    assert catalogue() is catalogue("default")


def test_an_unknown_profile_is_refused_with_the_profiles_there_are() -> None:
    with pytest.raises(ValidationError, match="unknown service profile 'nope'; profiles: default, claw"):
        TaskPackage.model_validate(_package(service_profile="nope"))
    with pytest.raises(ValueError, match="unknown service profile 'nope'"):
        catalogue("nope")


def test_the_default_profile_leaves_package_ids_as_they_were() -> None:
    plain = TaskPackage.model_validate(_package())
    named = TaskPackage.model_validate(_package(service_profile="default"))
    assert plain.compute_id() == named.compute_id()
    assert "service_profile" not in plain.content()
    assert verify_package(plain).accepted
