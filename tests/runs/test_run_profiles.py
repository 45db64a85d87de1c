"""``synth run --services PROFILE``: the run uses only that profile's templates, records the profile
with its options, and ``synth regen`` keeps it; a wrong profile is one line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pipeline.catalog.store import Catalog
from pipeline.core.package import TaskPackage
from pipeline.taxonomy.capabilities import taxonomy
from tests.conftest import CliResult


def _packages(catalog_path: Path) -> list[TaskPackage]:
    with Catalog.open(catalog_path, read_only=True) as catalog:
        rows = catalog.query("SELECT package FROM packages WHERE package IS NOT NULL").rows
    return [TaskPackage.model_validate_json(text) for (text,) in rows]


def test_a_claw_run_uses_claw_templates_and_regen_keeps_the_profile(tmp_path: Path,
                                                                     synth: Callable[..., CliResult]) -> None:
    catalog_path = tmp_path / "c.duckdb"
    claw = {t.name for t in taxonomy()["general"].templates_of("claw")}
    failed = synth("run", "-c", "general", "--services", "claw", "-n", "2", "--max-attempts", "1",
                   "--defect-rate", "1.0", "--catalog", catalog_path, "--json")
    assert failed.exit_code == 1  # every first attempt carries a defect
    with Catalog.open(catalog_path, read_only=True) as catalog:
        [(parameters,)] = catalog.query("SELECT parameters FROM runs").rows
    assert json.loads(parameters)["service_profile"] == "claw"
    repaired = synth("regen", "--limit", "2", "--catalog", catalog_path, "--json")
    assert repaired.exit_code == 0 and json.loads(repaired.stdout)["repaired"] == 2
    packages = _packages(catalog_path)
    assert packages and {p.service_profile for p in packages} == {"claw"}
    assert {p.workflow for p in packages} <= claw


def test_a_default_run_never_uses_claw_templates(tmp_path: Path, synth: Callable[..., CliResult]) -> None:
    catalog_path = tmp_path / "c.duckdb"
    assert synth("run", "-c", "general", "-n", "7", "--catalog", catalog_path).exit_code == 0
    assert {p.service_profile for p in _packages(catalog_path)} == {"default"}


def test_an_unknown_profile_is_one_line_listing_the_profiles(tmp_path: Path, synth: Callable[..., CliResult]) -> None:
    result = synth("run", "-c", "general", "--services", "clw", "--catalog", tmp_path / "c.duckdb")
    assert result.exit_code == 2
    assert result.stderr == "error: unknown service profile 'clw'; profiles: default, claw\n"
    assert not (tmp_path / "c.duckdb").exists()


def test_resume_keeps_the_stored_profile_and_refuses_a_new_one(tmp_path: Path, synth: Callable[..., CliResult]) -> None:
    catalog_path = tmp_path / "c.duckdb"
    assert synth("run", "-c", "general", "--services", "claw", "-n", "1", "--catalog", catalog_path).exit_code == 0
    refused = synth("run", "--resume", "1", "--services", "default", "--catalog", catalog_path)
    assert refused.exit_code == 2 and refused.stderr.strip().endswith("drop --services")
