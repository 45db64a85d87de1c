"""The capability taxonomy (``capabilities/*.yaml``, ``pipeline/capabilities.py``) and
``synth capabilities`` (``pipeline/cli_capabilities.py``)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from typer.testing import CliRunner

from pipeline.cli import app, main
from pipeline.core.grading import EVALUATORS
from pipeline.core.services import DEFAULT_PROFILE, catalogue, default_tool_name
from pipeline.taxonomy.capabilities import Capability, Contract, _contract, contracts, taxonomy

REQUIRED = ("general", "cross-service", "multi-turn", "safety", "robustness", "long-horizon", "information-synthesis")
runner = CliRunner()


def catalogue_tools(profile: str = DEFAULT_PROFILE) -> dict[str, str]:
    """Tool name → service, for every operation of every service of ``profile``."""
    return {default_tool_name(s.name, op, profile): s.name for s in catalogue(profile).values() for op in s.operations}


def cli_json() -> list[dict[str, Any]]:
    result = runner.invoke(app, ["capabilities", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_required_capabilities_are_shipped_one_file_each() -> None:
    caps = taxonomy()
    assert set(REQUIRED) <= set(caps)
    for name in REQUIRED:
        cap = caps[name]
        assert cap.description and cap.skill
        assert len(cap.templates) >= 3, name
        names = [t.name for t in cap.templates]
        assert len(names) == len(set(names)), f"{name}: duplicate template names"


def test_contracts_read_alone_are_the_taxonomys() -> None:
    assert contracts() == {name: cap.contract for name, cap in taxonomy().items()}
    assert any(c != Contract() for c in contracts().values())  # the shipped files do state contracts


@pytest.mark.parametrize(("text", "faults"), [
    ("name: x\ncontract:\n  faults: 1\ntemplates:\n- name: t\n", 1),  # block style: the entry alone
    ("name: x\ncontract: {faults: 1}\ntemplates: []\ncontract:\n  faults: 3\n", 3),  # the last repeated key
    ("# a comment\n---\nname: x\ntemplates:\n- contract: {faults: 5}\n", 0),  # a template's key is no contract
    ("{name: x, contract: {faults: 2}}\n", 2),  # flow style: read whole
    ('"contract": {faults: 4}\n', 4),  # a quoted key: read whole
])
def test_a_contract_is_read_as_a_whole_parse_reads_it(text: str, faults: int) -> None:
    assert _contract(text) == Contract(faults=faults)


def test_check_kinds_are_kinds_the_engine_evaluates() -> None:
    for cap in taxonomy().values():
        assert set(cap.check_kinds) <= set(EVALUATORS), cap.name


def test_template_tools_are_catalogue_operations_of_the_template_services() -> None:
    for cap in taxonomy().values():
        for t in cap.templates:
            tools = catalogue_tools(t.profile)
            assert t.tools, f"{cap.name}/{t.name} offers no tools"
            assert set(t.services) <= set(catalogue(t.profile)), f"{cap.name}/{t.name}: unknown service"
            for name in t.tools:
                assert name in tools, f"{cap.name}/{t.name}: {name} is not a catalogue operation"
                assert tools[name] in t.services, f"{cap.name}/{t.name}: {name} is outside its services"
            assert t.package.strip(), f"{cap.name}/{t.name} has no package body"


def test_knob_values_pick_the_entry_for_the_difficulty() -> None:
    cap = Capability.model_validate({
        "name": "x", "description": "d", "skill": "s", "check_kinds": ["state_count"],
        "knobs": {"distractors": {"easy": 1, "hard": 4}, "flat": 7},
        "templates": [{"name": "t", "description": "d", "services": ["todo"], "steps": ["s"], "checks": ["c"]}],
    })
    assert cap.knob_values("easy") == {"distractors": 1, "flat": 7}
    assert cap.knob_values("hard") == {"distractors": 4, "flat": 7}


def test_cli_json_lists_every_capability_with_its_templates() -> None:
    data = cli_json()
    assert [c["name"] for c in data] == list(taxonomy())
    templates = [t for c in data for t in c["templates"]]
    services = {s for t in templates for s in t["services"]}
    assert len(data) >= 7
    assert all(len(c["templates"]) >= 3 for c in data)
    assert len(templates) >= 25
    assert len(services) >= 8
    for cap in data:
        assert {"name", "description", "skill", "check_kinds", "knobs", "templates"} <= set(cap)
    for t in templates:
        assert {"name", "profile", "services", "difficulty", "steps", "checks"} <= set(t)
        assert "package" not in t  # the Jinja body is generator input, not a listing


def test_cli_table_names_every_template() -> None:
    result = runner.invoke(app, ["capabilities"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    total = sum(len(c.templates) for c in taxonomy().values())
    assert f"{len(taxonomy())} capabilities, {total} workflow templates" in result.stdout
    for cap in taxonomy().values():
        for t in cap.templates:
            assert t.name in result.stdout


def test_cli_broken_capability_file_is_one_error_line(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    def broken() -> dict[str, Capability]:
        raise ValueError("general.yaml: capability name 'generl' must match the file name\nmore detail")

    monkeypatch.setattr("pipeline.taxonomy.capabilities.taxonomy", broken)
    monkeypatch.setattr(sys, "argv", ["synth", "capabilities", "--json"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "capability name 'generl' must match the file name" in err and "fix that YAML file" in err
