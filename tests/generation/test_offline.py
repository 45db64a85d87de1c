"""The offline generator (``pipeline/generation/offline.py``): every workflow template renders
packages that are valid, deterministic, bound to the real catalogue, and pass verification."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
from typing import Any

import pytest

from pipeline.core.episode import execute
from pipeline.core.errors import UserError
from pipeline.core.grading import score
from pipeline.core.package import AskStep, CallStep, TaskPackage
from pipeline.core.services import default_tool_name, find_operation, profile_names
from pipeline.generation import defects, offline
from pipeline.generation.base import Attempt
from pipeline.generation.offline import OfflineGenerator, generate_package, pick_template
from pipeline.taxonomy.capabilities import Capability, taxonomy
from pipeline.verify.verifier import verify_package

SEED = 7
SLOTS = (0, 1, 2)
TEMPLATES = [(c.name, t.name) for c in taxonomy().values() for t in c.templates]


def failure_text(result: Any) -> str | None:
    """``code: message`` of a generation's failure (None when it has none)."""
    return str(result.failure) if result.failure is not None else None


def used_tools(package: TaskPackage) -> set[str]:
    """Tools named by the reference and the checks."""
    names = {s.call for _, s in package.call_steps}
    for check in package.checks:
        names |= set(getattr(check, "tools", None) or ([check.tool] if hasattr(check, "tool") else []))
    return names


@pytest.fixture(scope="module")
def packages() -> dict[tuple[str, str], list[TaskPackage]]:
    """SLOTS packages of every template, generated once for this module."""
    return {(c, t): [generate_package(c, t, SEED, slot) for slot in SLOTS] for c, t in TEMPLATES}


@pytest.mark.parametrize(("capability", "template"), TEMPLATES)
def test_template_renders_packages_bound_to_the_catalogue(packages: Any, capability: str, template: str) -> None:
    for slot, package in zip(SLOTS, packages[(capability, template)], strict=True):
        assert package.id == package.compute_id()
        assert (package.capability, package.workflow) == (capability, template)
        prov = package.provenance
        assert (prov.generator, prov.template, prov.seed, prov.attempt, prov.parent) == ("offline", template, SEED, 1, None)
        profile = taxonomy()[capability].template(template).profile  # type: ignore[union-attr]
        assert package.service_profile == profile
        for tool in package.tools:
            found = find_operation(tool.endpoint, profile)
            assert found is not None, f"slot {slot}: {tool.name} → {tool.endpoint} is not a catalogue endpoint"
            service, op = found
            assert tool.name == default_tool_name(service.name, op, profile) and tool.service in package.services
            assert tool.parameters == op.parameters and tool.description == op.description
        assert used_tools(package) <= {t.name for t in package.tools}
        assert abs(sum(c.weight for c in package.checks) - 1.0) < 1e-9
        assert not any(c.kind == "judge" for c in package.checks)


@pytest.mark.parametrize(("capability", "template"), TEMPLATES)
def test_reference_plays_to_full_score(packages: Any, capability: str, template: str) -> None:
    for package in packages[(capability, template)]:
        trajectory = execute(package)
        assert trajectory.errors == [], [s.error for s in trajectory.errors]
        report = score(package, trajectory)
        assert report.score == 1.0, [r.detail for r in report.checks + report.safety if not r.passed]


@pytest.mark.parametrize(("capability", "template"), TEMPLATES)
def test_verifier_accepts_template_packages(packages: Any, capability: str, template: str) -> None:
    for package in packages[(capability, template)][:2]:
        verdict = verify_package(package)
        assert verdict.accepted, [f"{f.code.value}: {f.message}" for f in verdict.findings]


def test_each_capability_exercises_its_skill(packages: Any) -> None:
    for (capability, _), items in packages.items():
        for p in items:
            kinds = {c.kind for c in p.checks}
            if capability == "multi-turn":
                assert p.user is not None and p.user.facts
                assert any(isinstance(s, AskStep) for s in p.reference) and "asked_user" in kinds
                assert all(f.value.casefold() not in p.request.text.casefold() for f in p.user.facts)
            if capability == "robustness":
                assert p.faults and any(isinstance(s, CallStep) and s.expect_status for s in p.reference)
            if capability == "safety":
                assert p.safety
            if capability == "long-horizon":
                assert len(p.reference) >= 10
            if capability == "information-synthesis":
                assert kinds & {"answer_contains", "answer_matches"}


def test_templates_span_at_least_eight_services() -> None:
    assert len({s for c in taxonomy().values() for t in c.templates for s in t.services}) >= 8
    assert sum(len(c.templates) for c in taxonomy().values()) >= 25


@pytest.mark.parametrize(("capability", "template"), TEMPLATES[::4])
def test_same_inputs_same_package_other_slots_other_ids(capability: str, template: str) -> None:
    first = generate_package(capability, template, SEED, 5)
    again = generate_package(capability, template, SEED, 5)
    assert first.to_json() == again.to_json() and first.id == again.id
    ids = {generate_package(capability, template, SEED, slot).id for slot in range(6)}
    assert len(ids) == 6
    assert generate_package(capability, template, SEED + 1, 5).id != first.id


def test_generation_ignores_hash_seed_and_global_random() -> None:
    capability, template = "multi-turn", "schedule-meeting-after-clarification"
    local = generate_package(capability, template, SEED, 3).id
    code = ("from pipeline.generation.offline import generate_package; "
            f"print(generate_package({capability!r}, {template!r}, {SEED}, 3).id)")
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
        assert out.stdout.strip() == local, out.stderr
    random.seed(123)
    expected = random.random()
    random.seed(123)
    generate_package(capability, template, SEED, 3)
    assert random.random() == expected  # the global RNG was neither used nor reseeded


def test_repair_attempt_is_a_fresh_draw_of_the_same_template() -> None:
    first = generate_package("general", "tidy-todo-list", SEED, 4, attempt=1)
    repair = generate_package("general", "tidy-todo-list", SEED, 4, attempt=2)
    assert repair.workflow == first.workflow and repair.provenance.attempt == 2
    assert repair.id != first.id


def test_pick_template_is_round_robin_in_file_order_within_the_service_profile() -> None:
    for cap in taxonomy().values():
        for profile in profile_names():
            names = [t.name for t in cap.templates if t.profile == profile]
            assert names, f"{cap.name} has no template of service profile {profile}"
            assert [pick_template(cap.name, slot, profile) for slot in range(2 * len(names))] == names + names
        defaults = [t.name for t in cap.templates if t.profile == "default"]
        assert [pick_template(cap.name, slot) for slot in range(len(defaults))] == defaults


def test_unknown_profile_or_a_capability_without_its_templates_is_a_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UserError, match=r"^unknown service profile 'nope'; profiles: default, claw$"):
        pick_template("general", 0, "nope")
    only_default = {name: cap.model_copy(update={"templates": cap.templates_of("default")})
                    for name, cap in taxonomy().items()}
    monkeypatch.setattr(offline, "taxonomy", lambda: only_default)
    with pytest.raises(UserError, match=r"^capability 'general' has no workflow template of service profile 'claw'; "
                                        r"capabilities with one: none$"):
        pick_template("general", 0, "claw")


def test_unknown_capability_or_template_is_a_user_error() -> None:
    with pytest.raises(UserError, match="unknown capability 'nope'; known: "):
        generate_package("nope", "x", SEED, 0)
    with pytest.raises(UserError, match="has no template 'nope'; known: lookup-contact-detail"):
        generate_package("general", "nope", SEED, 0)
    with pytest.raises(UserError, match="unknown capability"):
        pick_template("nope", 0)


def attempt(capability: str = "general", template: str = "lookup-contact-detail", n: int = 1) -> Attempt:
    return Attempt(capability=capability, template=template, seed=SEED, slot=2, attempt=n)


def test_generator_protocol_returns_the_package() -> None:
    gen = OfflineGenerator()
    assert gen.name == "offline" and gen.model is None
    out = asyncio.run(gen.generate(attempt()))
    assert failure_text(out) is None and out.defect is None
    assert out.package is not None and out.package.id == ""  # verification computes the id
    assert out.package.with_id() == generate_package("general", "lookup-contact-detail", SEED, 2)


def test_defects_are_injected_on_first_attempts_only(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def fake_inject(package: TaskPackage, rng: random.Random) -> tuple[TaskPackage, str]:
        calls.append(package.id)
        broken = package.model_copy(update={"request": package.request.model_copy(update={"text": "changed"})})
        return broken, "fake_defect"

    monkeypatch.setattr(defects, "inject_defect", fake_inject)
    out = asyncio.run(OfflineGenerator(defect_rate=1.0).generate(attempt()))
    assert out.defect == "fake_defect" and out.package is not None
    assert out.package.request.text == "changed" and out.package.id == ""
    assert "fake_defect" not in out.package.to_json()
    assert len(calls) == 1
    repair = asyncio.run(OfflineGenerator(defect_rate=1.0).generate(attempt(n=2)))
    clean = asyncio.run(OfflineGenerator(defect_rate=0.0).generate(attempt()))
    assert repair.defect is None and clean.defect is None and len(calls) == 1


def test_defect_rate_selects_about_that_share_of_slots() -> None:
    gen = OfflineGenerator(defect_rate=0.5)
    outs = [asyncio.run(gen.generate(Attempt(capability="general", template=pick_template("general", s),
                                              seed=SEED, slot=s))) for s in range(40)]
    labelled = [o for o in outs if o.defect]
    assert 8 <= len(labelled) <= 32
    again = [asyncio.run(gen.generate(Attempt(capability="general", template=pick_template("general", s),
                                               seed=SEED, slot=s))).defect for s in range(40)]
    assert again == [o.defect for o in outs]  # the item's own RNG decides, so it repeats
    with pytest.raises(ValueError, match="defect_rate"):
        OfflineGenerator(defect_rate=1.5)


def test_broken_template_is_a_generation_error_with_the_rendered_text(monkeypatch: pytest.MonkeyPatch) -> None:
    cap = Capability.model_validate({
        "name": "general", "description": "d", "skill": "s", "check_kinds": ["state_count"],
        "templates": [{"name": "bad", "description": "d", "services": ["todo"], "steps": ["s"], "checks": ["c"],
                       "tools": ["todo_create_task"], "package": "request: {text: [unclosed\n"}],
    })
    invalid = cap.model_copy(deep=True)
    invalid.templates[0].package = "request: {text: ''}\nchecks: []\n"
    monkeypatch.setattr(offline, "taxonomy", lambda: {"general": cap, "invalid": invalid})
    out = asyncio.run(OfflineGenerator().generate(attempt(template="bad")))
    assert out.package is None and "general/bad: the package body is not YAML" in (failure_text(out) or "")
    assert out.raw == "request: {text: [unclosed\n"
    out = asyncio.run(OfflineGenerator().generate(attempt(capability="invalid", template="bad")))
    assert out.package is None and "general/bad: not a valid package: request.text: " in (failure_text(out) or "")
    assert out.raw == "request: {text: ''}\nchecks: []\n"
