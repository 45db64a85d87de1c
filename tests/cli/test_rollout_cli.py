"""``synth rollout``: JSON summary, the resume options rule, one-line mistakes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pipeline import RunOptions, load_packages, start_run
from tests.conftest import CliResult
from tests.support.agent_server import ScriptedAgents
from tests.support.openai_server import OpenAIServer


def test_rollout_prints_a_json_summary_and_resume_keeps_the_options(
        empty_catalog: Path, synth: Callable[..., CliResult]) -> None:
    start_run(RunOptions(capability="general", count=2), empty_catalog)
    agents = ScriptedAgents(p.model_dump(mode="json") for p in load_packages(empty_catalog))
    with OpenAIServer(agents) as server:
        result = synth("rollout", "--model", "reference", "--base-url", server.base_url, "--samples", "2",
                       "--stream", "--catalog", empty_catalog, "--json")
        assert result.exit_code == 0, result.stderr
        summary = json.loads(result.stdout)
        assert summary["rollouts"] == 4 and summary["passed"] == 4 and summary["status"] == "finished"
        again = synth("rollout", "--resume", str(summary["job_id"]), "--catalog", empty_catalog, "--json")
        assert again.exit_code == 0 and json.loads(again.stdout)["rollouts"] == 0
        refused = synth("rollout", "--resume", "1", "--samples", "3", "--catalog", empty_catalog)
    assert refused.exit_code == 2
    assert refused.stderr.strip() == ("error: --resume continues rollout job 1 with the options it started with; "
                                      "drop --samples")


def test_mistakes_are_one_line(empty_catalog: Path, synth: Callable[..., CliResult]) -> None:
    missing = synth("rollout", "--catalog", empty_catalog)
    assert missing.exit_code == 2 and missing.stderr.startswith("error: --model is required")
    none = synth("rollout", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--catalog", empty_catalog)
    assert none.exit_code != 0 and len(none.stderr.strip().splitlines()) == 1
    assert "no accepted package" in none.stderr and "Traceback" not in none.stderr
