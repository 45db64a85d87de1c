"""Runs and the verdict model of verifier version 3: ``--require-sft`` reaches the worker that
verifies, is stored with the run and kept on resume; a duplicate keeps its review notes and SFT
losses; a repair is fed refusals only."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.catalog.rows import AttemptRow, prepare
from pipeline.catalog.store import Catalog
from pipeline.core.codes import Code
from pipeline.core.outcomes import Finding, Verdict
from pipeline.core.package import TaskPackage, load_package
from pipeline.generation.base import Attempt, Generated
from pipeline.generation.offline import OfflineGenerator
from pipeline.runs import api
from pipeline.runs.batch import BatchRun
from pipeline.runs.options import RunOptions, run_parameters
from pipeline.runs.writer import GroupWriter, kept_verdict
from pipeline.verify.dedup import MemoryDedup
from tests.conftest import EXAMPLES_DIR, CliResult, refusal


def meeting() -> TaskPackage:
    """An example whose reference loses evidence when tool observations are cut to 50 characters."""
    return load_package(json.loads((EXAMPLES_DIR / "multi-turn-schedule-meeting.json").read_text())).with_id()


class Fixed(OfflineGenerator):
    """Returns the meeting example for every attempt."""

    async def generate(self, attempt: Attempt) -> Generated:
        return Generated(package=meeting())


def run_once(catalog: Catalog, **options: Any) -> BatchRun:
    opts = RunOptions(capability="multi-turn", count=1, max_attempts=1, obs_limit=50, **options)
    generator = Fixed()
    run_id = catalog.start_run("t", generator.name, None, opts.capability,
                               run_parameters(opts, generator.name, None, None))
    batch = BatchRun(catalog, generator, opts, run_id)
    try:
        asyncio.run(batch.run())
    finally:
        batch.verifier.close()
    return batch


@pytest.mark.parametrize("processes", [0, 1])
def test_require_sft_reaches_the_verifier(empty_catalog: Path, processes: int) -> None:
    """In this process and in a worker process: without the option the package is accepted and
    stored not sft_ready; with it, rejected with evidence_truncated."""
    with Catalog.open(empty_catalog) as catalog:
        loose = run_once(catalog, verify_processes=processes)
        strict = run_once(catalog, verify_processes=processes, require_sft=True)
        rows = catalog.query("SELECT run, status, sft_ready FROM packages ORDER BY row_id").rows
        refused = catalog.query(f"SELECT f.code, f.kind FROM findings f JOIN packages p ON p.row_id = f.package_row "
                                f"WHERE p.run = {strict.run_id}").rows
        stored = catalog.runs(strict.run_id)[0].parameters
    assert [r for r in rows if r[0] == loose.run_id] == [[loose.run_id, "accepted", False]]
    strict_rows = [r for r in rows if r[0] == strict.run_id]  # every slot it opened refused
    assert strict_rows and all(r == [strict.run_id, "rejected", False] for r in strict_rows)
    assert refused == [["evidence_truncated", "refusal"]] * len(strict_rows)
    assert stored["require_sft"] is True


def test_the_command_line_stores_require_sft_and_resume_keeps_it(tmp_path: Path, synth: Callable[..., CliResult],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = tmp_path / "c.duckdb"
    result = synth("run", "-c", "general", "-n", "1", "--require-sft", "--verify-processes", "0",
                   "--catalog", catalog, "--json")
    assert result.exit_code == 0, result.stderr
    with Catalog.open(catalog, read_only=True) as reader:
        assert reader.runs(1)[0].parameters["require_sft"] is True
    refused = synth("run", "--resume", "1", "--require-sft", "--catalog", catalog)
    assert refused.exit_code == 2 and refused.stderr.strip().endswith("drop --require-sft")
    seen: list[RunOptions] = []

    class Recording(BatchRun):
        def __init__(self, catalog: Catalog, generator: Any, options: RunOptions, *args: Any, **kw: Any) -> None:
            seen.append(options)
            super().__init__(catalog, generator, options, *args, **kw)

    monkeypatch.setattr(api, "BatchRun", Recording)
    resumed = synth("run", "--resume", "1", "--catalog", catalog, "--json")
    assert resumed.exit_code == 0, resumed.stderr
    assert [o.require_sft for o in seen] == [True]


def test_a_duplicate_keeps_its_review_notes_and_sft_losses(empty_catalog: Path) -> None:
    package = meeting()
    note = Finding(code=Code.UNGROUNDED_VALUE, message="a reading")
    loss = Finding(code=Code.EVIDENCE_TRUNCATED, message="cut")
    verdict = Verdict.build(package.id, [note, loss], 1.0, notes=["id recomputed"])
    assert verdict.accepted
    index = MemoryDedup()
    index.add(package)
    with Catalog.open(empty_catalog) as catalog:
        writer = GroupWriter(catalog, index, lambda: 1)
        row = writer._dedup(prepare(AttemptRow(run_id=1, slot=0, attempt=1, package=package, verdict=verdict)))
    rebuilt = kept_verdict(verdict, row.refused_by)
    assert not row.accepted and [f[0] for f in row.findings] == [c.value for c in (
        Code.DUPLICATE_PACKAGE, Code.UNGROUNDED_VALUE, Code.EVIDENCE_TRUNCATED)]
    assert rebuilt is not None and not rebuilt.accepted and rebuilt.codes == ["duplicate_package"]
    assert (rebuilt.review, rebuilt.sft, rebuilt.sft_ready, rebuilt.notes) == ([note], [loss], False, ["id recomputed"])


def test_a_repair_is_fed_refusals_only(empty_catalog: Path) -> None:
    package = meeting()
    witnessed = refusal(Code.GRADER_UNDERCONSTRAINED, "a dropped write passes", step=2, check="invite")
    findings = [witnessed, Finding(code=Code.UNGROUNDED_VALUE, message="a reading"),
                Finding(code=Code.EVIDENCE_TRUNCATED, message="cut")]
    with Catalog.open(empty_catalog) as catalog:
        opts = RunOptions(capability="multi-turn", count=1, verify_processes=0)
        run_id = catalog.start_run("t", "offline", None, "multi-turn", run_parameters(opts, "offline", None, None))
        catalog.record(run_id, 0, 1, package, Verdict.build(package.id, findings, 1.0))
        batch = BatchRun(catalog, OfflineGenerator(), opts, run_id)
        try:
            parent, fed = batch._last_attempt(0)
        finally:
            batch.verifier.close()
    assert parent is not None and parent.id == package.id
    assert fed == [witnessed]  # its check and witness kept; no review note, no SFT loss
