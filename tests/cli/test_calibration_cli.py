"""``synth catalog stats`` with rollouts and ``synth catalog unsolved``: tables and ``--json``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.catalog.rollout_rows import add_rollouts, record_packages, rollout
from tests.conftest import CliResult, load_examples
from tests.support import processes

SYNTH = Path(sys.executable).parent / "synth"


def rolled(path: Path) -> dict[str, str]:
    """m: message 1 pass of 2, meeting 0 of 2 (asked-day failing twice)."""
    ids = {p.workflow: p.id for p in load_examples()}
    record_packages(path, load_examples())
    message, meeting = ids["message-a-colleague"], ids["schedule-meeting-after-clarification"]
    add_rollouts(path, [rollout(message, "m", 0, 1.0), rollout(message, "m", 1, 0.0, ["called:sent"]),
                        rollout(meeting, "m", 0, 0.5, ["asked_user:asked-day"]),
                        rollout(meeting, "m", 1, 0.2, ["asked_user:asked-day", "answer_contains:confirmed"])])
    return ids


def test_stats_shows_rollouts_per_capability_and_model(empty_catalog: Path, synth: Callable[..., CliResult]) -> None:
    before = synth("catalog", "stats", "--catalog", empty_catalog)
    assert "rollouts by capability" not in before.stdout
    rolled(empty_catalog)
    result = synth("catalog", "stats", "--catalog", empty_catalog)
    assert result.exit_code == 0, result.stderr
    assert "rollouts by capability and model" in result.stdout and "synth catalog unsolved" in result.stdout
    data = json.loads(synth("catalog", "stats", "--k", "2", "--json", "--catalog", empty_catalog).stdout)
    groups = {g["capability"]: g for g in data["rollouts"]}
    assert (groups["general"]["packages"], groups["general"]["mean_pass_rate"], groups["general"]["pass_at_k"],
            groups["general"]["k"]) == (1, 0.5, 1.0, 2)
    assert (groups["multi-turn"]["unsolved"], groups["multi-turn"]["pass_at_k"]) == (1, 0.0)


def test_unsolved_lists_packages_and_failed_checks(empty_catalog: Path, synth: Callable[..., CliResult]) -> None:
    ids = rolled(empty_catalog)
    result = synth("catalog", "unsolved", "--catalog", empty_catalog)
    assert result.exit_code == 0, result.stderr
    assert "unsolved: 1 of 2 packages rolled out, where no rollout passes" in result.stdout
    assert ids["schedule-meeting-after-clarification"] in result.stdout and "asked-day 2" in result.stdout
    data = json.loads(synth("catalog", "unsolved", "--model", "m", "--json", "--catalog", empty_catalog).stdout)
    assert [p["package_id"] for p in data["packages"]] == [ids["schedule-meeting-after-clarification"]]
    assert [(c["kind"], c["failures"]) for c in data["by_kind"]] == [("asked_user", 2), ("answer_contains", 1)]
    missing = synth("catalog", "unsolved", "--model", "zz", "--catalog", empty_catalog)
    assert missing.exit_code != 0 and "no rollouts of that model" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1


def test_unsolved_at_120_columns_keeps_names_whole_and_each_row_on_one_line(empty_catalog: Path) -> None:
    ids = rolled(empty_catalog)
    done = subprocess.run([str(SYNTH), "catalog", "unsolved", "--catalog", str(empty_catalog)], capture_output=True,
                          text=True, timeout=processes.PATIENCE_S, env=os.environ | {"COLUMNS": "120"})
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("│")]
    assert max(len(line) for line in done.stdout.splitlines()) <= 120
    meeting = next(row for row in rows if ids["schedule-meeting-after-clarification"] in row)
    assert "schedule-meeting-after-clarification" in meeting and "asked-day 2, confirmed 1" in meeting
    assert all(row.split("│")[1].strip() for row in rows), "a row went on to a second line:\n" + done.stdout
