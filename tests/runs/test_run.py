"""The batch job end to end: offline and LLM runs into a real catalog, regeneration, resume after
SIGKILL, and input errors."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.catalog.store import Catalog
from pipeline.core.outcomes import Failure, FailureCode
from pipeline.core.package import TaskPackage, near_key
from pipeline.generation.base import Generated
from pipeline.generation.llm import LLMGenerator
from pipeline.generation.model_client import Backoff
from pipeline.generation.offline import OfflineGenerator, generate_package, pick_template
from pipeline.runs.batch import BatchRun
from pipeline.runs.options import RunOptions, run_parameters
from pipeline.verify.verifier import verify_package
from tests.conftest import CliResult, accepted_now
from tests.support import FaultPlan, OpenAIServer, processes

SYNTH = [sys.executable, "-m", "pipeline.cli"]


def start(catalog: Catalog, generator, **options) -> BatchRun:  # type: ignore[no-untyped-def]
    opts = RunOptions(verify_processes=0, **options)
    run_id = catalog.start_run("test", generator.name, generator.model, opts.capability,
                               run_parameters(opts, generator.name, generator.model, None))
    return BatchRun(catalog, generator, opts, run_id)


def accepted_ids(catalog: Catalog, run_id: int) -> list[str]:
    return [r[0] for r in catalog.query(f"SELECT id FROM packages WHERE run = {run_id} AND status = 'accepted'").rows]


def test_offline_run_reaches_its_target_with_distinct_verified_packages(empty_catalog: Path) -> None:
    with Catalog.open(empty_catalog) as catalog:
        batch = start(catalog, OfflineGenerator(), capability="multi-turn", count=6, concurrency=3)
        summary = asyncio.run(batch.run())
        ids = accepted_ids(catalog, batch.run_id)
        stored = catalog.query(f"SELECT near_key, package FROM packages WHERE run = {batch.run_id}").rows
    assert summary.accepted == 6 and summary.status == "finished"
    assert len(ids) == len(set(ids)) == 6
    assert all(key == near_key(TaskPackage.model_validate_json(text)) for key, text in stored)  # the writer's key


@pytest.mark.slow
def test_defects_are_rejected_and_regeneration_repairs_them_with_parent_links(empty_catalog: Path) -> None:
    with Catalog.open(empty_catalog) as catalog:
        batch = start(catalog, OfflineGenerator(defect_rate=0.6), capability="general", count=8, max_attempts=1)
        summary = asyncio.run(batch.run())
        assert summary.accepted == 8
        assert summary.failed_slots == summary.rejected_attempts > 0
        failed = [s.slot for s in catalog.slot_states(batch.run_id).values() if not s.accepted]
        labelled = catalog.query(  # each injected defect is labelled beside its package, and caught by its code
            f"SELECT p.slot, p.injected_defect, list(f.code) FROM packages p LEFT JOIN findings f "
            f"ON f.package_row = p.row_id WHERE p.run = {batch.run_id} AND p.injected_defect IS NOT NULL "
            "GROUP BY ALL").rows
        assert sorted(slot for slot, _, _ in labelled) == sorted(failed)
        assert all(label in codes for _, label, codes in labelled)
        repaired = asyncio.run(batch.regenerate(failed, attempts=1))
        assert sum(repaired) == len(failed)
        rows = catalog.query(f"SELECT slot, attempt, parent, status FROM packages WHERE run = {batch.run_id} "
                             "AND attempt = 2 ORDER BY slot").rows
        first = dict(catalog.query(f"SELECT slot, id FROM packages WHERE run = {batch.run_id} AND attempt = 1").rows)
    assert [r[0] for r in rows] == sorted(failed)
    assert all(parent == first[slot] and status == "accepted" for slot, _, parent, status in rows)


def test_failed_slots_filter_by_the_last_attempts_reason(empty_catalog: Path) -> None:
    with Catalog.open(empty_catalog) as catalog:
        batch = start(catalog, OfflineGenerator(defect_rate=0.6), capability="general", count=8, max_attempts=1)
        asyncio.run(batch.run())
        failed = catalog.failed_slots(batch.run_id)[batch.run_id]
        codes = dict(catalog.query(f"SELECT p.slot, list(f.code) FROM packages p JOIN findings f ON "
                                   f"f.package_row = p.row_id WHERE p.run = {batch.run_id} GROUP BY p.slot").rows)
        reason = codes[failed[0]][0]
        by_reason = catalog.failed_slots(batch.run_id, reason=reason)[batch.run_id]
        assert by_reason == [slot for slot in failed if reason in codes[slot]]
        assert catalog.failed_slots(batch.run_id, limit=1) == {batch.run_id: failed[:1]}
        assert catalog.failed_slots(reason="x' OR '1'='1") == {}  # a value, never SQL


def test_duplicate_packages_are_not_accepted_twice(empty_catalog: Path) -> None:
    """A generator that returns the same package for every slot yields one accepted package."""

    class Same(OfflineGenerator):
        async def generate(self, attempt):  # type: ignore[no-untyped-def]
            first = {"slot": 0, "attempt": 1, "template": pick_template("general", 0)}
            return await super().generate(attempt.model_copy(update=first))

    with Catalog.open(empty_catalog) as catalog:
        batch = start(catalog, Same(), capability="general", count=3, max_attempts=2, concurrency=2)
        summary = asyncio.run(batch.run())
    assert summary.accepted == 1
    assert summary.rejection_codes == {"duplicate_package": summary.rejected_attempts}
    assert summary.status == "failed" and "slot limit" in summary.stop_reason


def test_generation_failures_are_counted_under_the_code_the_catalog_stores(empty_catalog: Path) -> None:
    """A failure's code is data: the run summary counts it under the code the catalog stores."""

    class Failing(OfflineGenerator):
        async def generate(self, attempt):  # type: ignore[no-untyped-def]
            return Generated(failure=Failure(code=FailureCode.TEMPLATE_ERROR,
                                             message="general/lookup: the package body is not YAML"))

    with Catalog.open(empty_catalog) as catalog:
        batch = start(catalog, Failing(), capability="general", count=1, max_attempts=2)
        summary = asyncio.run(batch.run())
        stored = {r.code: r.packages for r in catalog.rejections()}
    assert summary.rejection_codes == {"template_error": summary.rejected_attempts}
    assert stored == summary.rejection_codes


def test_an_invalid_reply_is_repaired_from_its_error_and_a_rejected_package_from_its_findings(
        empty_catalog: Path) -> None:
    """Attempt 1 returns no valid package, attempt 2 a rejected one: attempt 2 is told the first
    reply and its error, attempt 3 the rejected package and its findings."""
    seen = []

    class Scripted(OfflineGenerator):
        async def generate(self, attempt):  # type: ignore[no-untyped-def]
            seen.append(attempt)
            if attempt.attempt == 1:
                return Generated(failure=Failure(code=FailureCode.SCHEMA_INVALID, message="checks: field required"),
                                 raw='{"request": {"text": "hi"}}')
            generated = await super().generate(attempt)
            if attempt.attempt == 2:
                package = generated.package.model_copy(update={"checks": generated.package.checks[:1]})
                return generated.model_copy(update={"package": package})
            return generated

    with Catalog.open(empty_catalog) as catalog:
        batch = start(catalog, Scripted(), capability="general", count=1, max_attempts=3)
        summary = asyncio.run(batch.run())
    assert summary.accepted == 1
    first, second, third = seen
    assert first.invalid is None and first.parent is None
    assert second.invalid is not None and second.invalid.code == FailureCode.SCHEMA_INVALID
    assert second.raw == '{"request": {"text": "hi"}}' and second.parent is None
    assert third.parent is not None and third.findings and third.invalid is None


def _distinct_packages():  # type: ignore[no-untyped-def]
    """A responder that answers each request with the next offline package, as JSON."""
    counter = itertools.count()

    def respond(_request: dict) -> str:  # type: ignore[type-arg]
        n = next(counter)
        return generate_package("general", pick_template("general", n), 11, n).model_dump_json()

    return respond


@pytest.mark.slow
def test_llm_run_against_a_failing_server_accounts_for_every_slot(empty_catalog: Path) -> None:
    plan = FaultPlan(rate=0.3, seed=3, slow_s=1.5)
    with OpenAIServer(_distinct_packages(), faults=plan) as server, Catalog.open(empty_catalog) as catalog:
        generator = LLMGenerator(model="local-test", base_url=server.base_url, api_key="sk-test-secret-123456",
                                 timeout=1.0, max_attempts=3, backoff=Backoff(initial=0.001, maximum=0.01))
        batch = start(catalog, generator, capability="general", count=50, concurrency=8)

        async def run_and_close():  # type: ignore[no-untyped-def]
            async with generator:
                return await batch.run()

        summary = asyncio.run(run_and_close())
        states = catalog.slot_states(batch.run_id)
        rows = catalog.query(f"SELECT status, (SELECT count(*) FROM findings f WHERE f.package_row = p.row_id) "
                             f"FROM packages p WHERE run = {batch.run_id}").rows
        calls = catalog.query("SELECT count(*), count(*) FILTER (WHERE status <> 'ok') FROM llm_calls").rows[0]
        dump = json.dumps(catalog.query("SELECT * FROM llm_calls").rows, default=str)
    assert summary.accepted == 50
    assert sum(server.counts.values()) >= 50 and calls[1] > 0  # faults happened and were recorded
    assert len(states) == summary.slots
    assert all(s.accepted or s.attempts == 3 for s in states.values())  # every slot ends accounted for
    assert all(status == "accepted" or n_findings > 0 for status, n_findings in rows)
    assert "sk-test-secret-123456" not in dump


def _wait_for_rows(catalog_path: Path, at_least: int) -> None:
    """Return once the run writing ``catalog_path`` has ``at_least`` accepted rows, as a reader sees them."""
    processes.wait_for(lambda: accepted_now(catalog_path) >= at_least, every=0.1,
                       what=f"the run to reach {at_least} accepted rows")


@pytest.mark.slow
def test_sigkill_and_resume_end_with_exactly_the_target_and_no_duplicates(tmp_path: Path) -> None:
    catalog_path = tmp_path / "c.duckdb"
    env = {**os.environ, "SYNTH_MODEL": "offline"}
    run = [*SYNTH, "run", "-c", "general", "-n", "600", "--catalog", str(catalog_path), "--json",
           "--verify-processes", "0", "--concurrency", "1"]
    proc = subprocess.Popen(run, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _wait_for_rows(catalog_path, 3)
    assert proc.poll() is None, "the run ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=processes.PATIENCE_S)
    for round_ in range(2):
        resumed = subprocess.Popen([*SYNTH, "run", "--resume", "1", "--catalog", str(catalog_path), "--json",
                                    "--verify-processes", "0"],
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if round_ == 0:
            _wait_for_rows(catalog_path, 120)
            assert resumed.poll() is None, "the resumed run ended before it could be killed"
            resumed.send_signal(signal.SIGKILL)
            resumed.wait(timeout=processes.PATIENCE_S)
            continue
        out, err = resumed.communicate(timeout=120)
        assert resumed.returncode == 0, err
        assert json.loads(out)["accepted"] == 600
    with Catalog.open(catalog_path, read_only=True) as catalog:
        ids = accepted_ids(catalog, 1)
        packages = [p for p in (catalog.show(i)[0].package for i in ids[:10])]
    assert len(ids) == len(set(ids)) == 600
    assert all(verify_package(p).accepted for p in packages if p is not None)


@pytest.mark.parametrize("args", [["run"], ["run", "-c", "no-such-capability"],
                                  ["run", "--resume", "1", "--concurrency", "8", "-n", "5"]])
def test_run_input_errors_are_one_line(tmp_path: Path, args: list[str], synth: Callable[..., CliResult]) -> None:
    result = synth(*args, "--catalog", tmp_path / "c.duckdb")
    assert result.exit_code == 2
    assert result.stderr.startswith("error:") and result.stderr.strip().count("\n") == 0
    assert not (tmp_path / "c.duckdb").exists()  # refused before any file is made
    if "--resume" in args:  # options a run stores are not silently ignored on resume
        assert result.stderr.strip().endswith("drop --count")  # --concurrency may change on resume


def test_a_run_resumes_against_a_model_server_that_moved(tmp_path: Path, synth: Callable[..., CliResult]) -> None:
    """``--base-url`` may change on resume (the error after an unreachable server says to fix it and
    resume); the offline generator ignores it, so the run simply finishes."""
    catalog_path = tmp_path / "c.duckdb"
    assert synth("run", "-c", "general", "-n", "2", "--catalog", catalog_path).exit_code == 0
    resumed = synth("run", "--resume", "1", "--base-url", "http://127.0.0.1:9/v1", "--catalog", catalog_path, "--json")
    assert resumed.exit_code == 0, resumed.stderr
    assert json.loads(resumed.stdout)["status"] == "finished"


def test_runs_keep_what_regeneration_added_apart_from_the_runs_count_of_its_target(
        empty_catalog: Path, synth: Callable[..., CliResult]) -> None:
    with Catalog.open(empty_catalog) as catalog:
        batch = start(catalog, OfflineGenerator(defect_rate=0.6), capability="general", count=6, max_attempts=1)
        asyncio.run(batch.run())
        failed = [s.slot for s in catalog.slot_states(batch.run_id).values() if not s.accepted]
        repaired = sum(asyncio.run(batch.regenerate(failed, attempts=1)))
    assert repaired > 0  # so the run holds more accepted rows than its target
    [counts] = json.loads(synth("catalog", "runs", "--json", "--catalog", empty_catalog).stdout)
    assert (counts["accepted"], counts["regenerated"], counts["target"]) == (6 + repaired, repaired, 6)
    table = synth("catalog", "runs", "--catalog", empty_catalog).stdout
    assert "6 of 6" in table and f"+{repaired} regen" in table and f"{6 + repaired} of 6" not in table


class _SlowToStart(OfflineGenerator):
    """The offline generator behind a start-up that takes ``STARTUP_S`` (as starting Ray, or a model
    server's first answer, does): it is part of the run's time."""

    STARTUP_S = 0.5

    async def check(self) -> None:
        await asyncio.sleep(self.STARTUP_S)  # the start-up being timed, not a wait for something


def test_the_summary_times_the_whole_run_with_its_start_up(empty_catalog: Path,
                                                           synth: Callable[..., CliResult]) -> None:
    from pipeline import start_run

    summary = start_run(RunOptions(capability="general", count=3, verify_processes=0), empty_catalog,
                        generator=_SlowToStart())
    assert summary.elapsed_s - summary.work_s >= _SlowToStart.STARTUP_S
    assert summary.accepted_per_s == pytest.approx(3 / summary.elapsed_s, abs=0.01)
    table = synth("run", "--capability", "general", "--count", "2", "--catalog", empty_catalog).stdout
    assert "elapsed, start-up included" in table and "of which start-up and shutdown" in table
