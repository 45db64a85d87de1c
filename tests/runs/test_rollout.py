"""Rollouts against scripted agents behind a local OpenAI-compatible server (real sockets, the real
``openai`` client): scores equal the verifier's, the conversation protocol, the catalog rows, resume."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from pipeline import RunOptions, load_packages, start_run
from pipeline.catalog.errors import CatalogError
from pipeline.catalog.store import Catalog
from pipeline.core.errors import UserError
from pipeline.core.package import TaskPackage, load_package, passes
from pipeline.env.task_env import play_reference
from pipeline.runs.rollout import RolloutInterrupted, astart_rollouts, resume_rollouts, start_rollouts
from pipeline.runs.rollout_episode import is_question
from pipeline.runs.rollout_options import RolloutOptions, RolloutProgress
from tests.conftest import copy_catalog
from tests.support import processes
from tests.support.agent_server import MALFORMED_ARGUMENTS, ScriptedAgents, mistake_steps
from tests.support.openai_server import OpenAIServer

CAPABILITIES = ("general", "multi-turn", "robustness", "safety")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rollouts") / "catalog.duckdb"
    for capability in CAPABILITIES:
        start_run(RunOptions(capability=capability, count=2), path)
    return path


@pytest.fixture
def catalog(template: Path, tmp_path: Path) -> Path:
    return copy_catalog(template, tmp_path / "catalog.duckdb")


@pytest.fixture
def server(template: Path) -> Iterator[OpenAIServer]:
    agents = ScriptedAgents(p.model_dump(mode="json") for p in load_packages(template))
    with OpenAIServer(agents) as running:
        yield running
    assert agents.unknown == 0, agents.strangers


def _rows(catalog: Path, job: int) -> list[dict[str, object]]:
    with Catalog.open(catalog, read_only=True) as reader:
        result = reader.query(f"SELECT * FROM rollouts WHERE job = {job} ORDER BY package_id, sample")
    return [dict(zip(result.columns, row, strict=True)) for row in result.rows]


def _verifier_score(package: TaskPackage, reference: list[dict[str, object]] | None = None) -> float:
    """The verifier's score of ``reference`` (default: the package's own) played in ``TaskEnv``."""
    if reference is not None:
        package = load_package(package.model_dump(mode="json") | {"reference": reference})
    return play_reference(package).score().score


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_replaying_the_reference_scores_the_verifiers_score(catalog: Path, server: OpenAIServer, stream: bool) -> None:
    summary = start_rollouts(RolloutOptions(model="reference", base_url=server.base_url, stream=stream), catalog)
    packages = {p.id: p for p in load_packages(catalog)}
    rows = _rows(catalog, summary.job_id)
    assert len(rows) == len(packages) == summary.rollouts == 2 * len(CAPABILITIES)
    for row in rows:
        package = packages[str(row["package_id"])]
        assert row["score"] == _verifier_score(package) == 1.0
        assert row["passed"] and row["safety_ok"] and row["finish_reason"] == "answer"
        assert row["turns"] == len(package.reference)
    assert all(bool(r.get("stream")) is stream for r in server.requests)


def test_a_known_mistake_scores_what_the_verifier_gives_that_trajectory(catalog: Path, server: OpenAIServer) -> None:
    summary = start_rollouts(RolloutOptions(model="mistake", base_url=server.base_url), catalog)
    packages = {p.id: p for p in load_packages(catalog)}
    scores = {str(r["package_id"]): r["score"] for r in _rows(catalog, summary.job_id)}
    expected = {i: _verifier_score(p, mistake_steps(p.model_dump(mode="json")["reference"])) for i, p in packages.items()}
    assert scores == expected
    assert any(not passes(s) for s in scores.values())  # the mistake is one the graders catch
    assert summary.passed == sum(passes(s) for s in scores.values())  # a pass is full marks, nothing less


def test_answering_at_once_fails_every_package_and_looping_ends_at_the_turn_limit(
        catalog: Path, server: OpenAIServer) -> None:
    at_once = start_rollouts(RolloutOptions(model="answer-at-once", base_url=server.base_url), catalog)
    assert at_once.passed == 0 and at_once.finish_reasons == {"answer": at_once.rollouts}
    looping = start_rollouts(RolloutOptions(model="loop", base_url=server.base_url, max_turns=3), catalog)
    rows = _rows(catalog, looping.job_id)
    assert {r["finish_reason"] for r in rows} == {"turn_limit"} and {r["turns"] for r in rows} == {3}
    messages = json.loads(str(rows[0]["messages"]))
    assert [m["role"] for m in messages] == ["system", "user"] + ["assistant", "tool"] * 3


def test_malformed_arguments_get_a_400_and_the_agent_recovers(catalog: Path, server: OpenAIServer) -> None:
    summary = start_rollouts(RolloutOptions(model="malformed", base_url=server.base_url), catalog)
    for row in _rows(catalog, summary.job_id):
        messages = json.loads(str(row["messages"]))
        assert messages[2]["tool_calls"][0]["function"]["arguments"] == MALFORMED_ARGUMENTS
        assert json.loads(messages[3]["content"])["status"] == 400
        assert row["score"] == 1.0 and row["finish_reason"] == "answer"


def test_questions_reach_the_user_and_the_reply_comes_back(catalog: Path, server: OpenAIServer) -> None:
    summary = start_rollouts(RolloutOptions(model="reference", base_url=server.base_url,
                                            where="capability = 'multi-turn'"), catalog)
    package = load_packages(catalog, "capability = 'multi-turn'")[0]
    row = next(r for r in _rows(catalog, summary.job_id) if r["package_id"] == package.id)
    messages = json.loads(str(row["messages"]))
    question = next(i for i, m in enumerate(messages) if m["role"] == "assistant" and not m.get("tool_calls"))
    reply = messages[question + 1]
    assert reply["role"] == "user" and any(f.value in reply["content"] for f in package.user.facts)  # type: ignore[union-attr]
    asked = [c for c in json.loads(str(row["checks"])) if c["kind"] == "asked_user"]
    assert asked and all(c["passed"] for c in asked)


def test_the_question_rule() -> None:
    assert is_question("Which day next week works for you?", True)
    assert is_question('Shall I book "Room A?"  ', True)
    assert is_question("**Which team?**", True)
    assert not is_question("Which day works for you?", False)  # no user: every text is the answer
    assert not is_question("Booked it. Is there anything else? Done.", True)
    assert not is_question("", True)


def test_rows_hold_every_field_of_the_rollout(catalog: Path, server: OpenAIServer) -> None:
    summary = start_rollouts(RolloutOptions(model="reference", base_url=server.base_url, samples=2, concurrency=3,
                                            where="capability = 'general'"), catalog)
    rows = _rows(catalog, summary.job_id)
    assert [(r["sample"]) for r in rows] == [0, 1, 0, 1]
    for row in rows:
        assert row["model"] == "reference" and row["job"] == summary.job_id
        assert row["prompt_tokens"] > 0 and row["completion_tokens"] > 0 and row["latency_s"] > 0  # type: ignore[operator]
        checks = json.loads(str(row["checks"]))
        assert checks and {"id", "kind", "weight", "passed", "detail"} <= set(checks[0])
        assert json.loads(str(row["messages"]))[1]["role"] == "user"
    with Catalog.open(catalog, read_only=True) as reader:
        job = reader.rollout_job(summary.job_id)
    assert job.status == "finished" and job.parameters["samples"] == 2 and len(job.parameters["packages"]) == 2


def test_a_stopped_job_resumes_without_repeating_finished_samples(catalog: Path, server: OpenAIServer) -> None:
    options = RolloutOptions(model="answer-at-once", base_url=server.base_url, samples=3, concurrency=1)

    def stop_after_three(p: RolloutProgress) -> None:
        if p.done == 3:
            raise UserError("stopped on purpose")

    with pytest.raises(RolloutInterrupted) as stopped:
        start_rollouts(options, catalog, on_progress=stop_after_three)
    job = stopped.value.job_id
    assert stopped.value.recorded == 3 and f"synth rollout --resume {job} --catalog {catalog}" in str(stopped.value)
    before = {(r["package_id"], r["sample"]): r["created"] for r in _rows(catalog, job)}
    requests = len(server.requests)
    summary = resume_rollouts(job, catalog)
    rows = _rows(catalog, job)
    total = 3 * 2 * len(CAPABILITIES)
    assert len(rows) == total and summary.recorded_before == 3 and summary.rollouts == total - 3
    assert len(server.requests) - requests == total - 3  # one request per episode: only the missing ones ran
    assert all(r["created"] == before[(r["package_id"], r["sample"])] for r in rows if (r["package_id"], r["sample"]) in before)
    with Catalog.open(catalog, read_only=True) as reader:
        assert reader.rollout_job(job).status == "finished"


def test_mistakes_say_what_to_do(catalog: Path, server: OpenAIServer) -> None:
    with pytest.raises(UserError, match="no accepted package matching --where"):
        start_rollouts(RolloutOptions(model="reference", base_url=server.base_url, where="capability = 'nope'"), catalog)
    with pytest.raises(UserError, match="no rollout job 99"):
        resume_rollouts(99, catalog)
    with pytest.raises(UserError, match="only concurrency, base_url, timeout_s may change"):
        resume_rollouts(1, catalog, resources={"samples": 3})


class _HeldAfter(OpenAIServer):
    """Answers the first ``first`` requests, then holds every later one until ``release`` is set:
    the job cannot finish before the test kills it, however slowly it runs."""

    def __init__(self, responder: Any, first: int) -> None:
        super().__init__(responder)
        self.first, self.release, self.holding = first, threading.Event(), threading.Event()

    def answer(self, number: int, body: dict[str, Any], authorization: str) -> Any:
        if number > self.first:
            self.holding.set()
            self.release.wait(120)
        return super().answer(number, body, authorization)


def _settled(catalog: Path, quiet_s: float) -> Callable[[], bool]:
    """A condition: the catalog file and its write-ahead log have not changed for ``quiet_s``
    seconds (six times the rollout writer's group delay)."""
    seen: dict[str, Any] = {"state": None, "since": time.monotonic()}

    def settled() -> bool:
        state = tuple((p.stat().st_size, p.stat().st_mtime_ns) if p.exists() else None
                      for p in (catalog, catalog.with_name(catalog.name + ".wal")))
        if state != seen["state"]:
            seen["state"], seen["since"] = state, time.monotonic()
        return time.monotonic() - seen["since"] >= quiet_s
    return settled


@pytest.mark.slow
def test_a_killed_job_resumes_from_what_it_committed(catalog: Path, template: Path) -> None:
    agents = ScriptedAgents(p.model_dump(mode="json") for p in load_packages(template))
    total = 4 * 2 * len(CAPABILITIES)
    # 20 requests finish an episode or more (two run at once) but never all of them (one request each at least)
    with _HeldAfter(agents, first=20) as server:
        command = [sys.executable, "-m", "pipeline.cli", "rollout", "--model", "reference", "--base-url",
                   server.base_url, "--samples", "4", "--concurrency", "2", "--catalog", str(catalog)]
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                env=os.environ | {"OPENAI_API_KEY": ""})
        try:  # the job holds the catalog open, so its file is watched, not read: once every answer it got is
            # used (the server holds the next request), its writes settle within the writer's group delay
            processes.wait_for(lambda: server.holding.is_set() or proc.poll() is not None, every=0.05,
                               what="the job to use every answer it got")
            processes.wait_for(_settled(catalog, quiet_s=3.0), every=0.1, what="the catalog file to settle")
            assert proc.poll() is None, f"the job ended before it was killed: {proc.communicate()}"
        finally:
            with contextlib.suppress(ProcessLookupError):  # gone already if it ended on its own
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=processes.PATIENCE_S)
            server.release.set()
        committed = {(r["package_id"], r["sample"]): r["created"] for r in _rows(catalog, 1)}
        assert 0 < len(committed) < total
        with Catalog.open(catalog, read_only=True) as reader:
            assert reader.rollout_job(1).status == "running"
        summary = resume_rollouts(1, catalog)
    rows = _rows(catalog, 1)
    assert len(rows) == total and summary.rollouts == total - len(committed)
    assert all(r["score"] == 1.0 for r in rows)
    assert all(r["created"] == committed[k] for r in rows if (k := (r["package_id"], r["sample"])) in committed)


def test_a_failed_group_commit_is_tried_again_and_keeps_every_rollout(
        catalog: Path, server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    real = Catalog.record_rollouts
    tries: list[int] = []

    def busy_once(self: Catalog, job: int, group: list[object]) -> None:
        tries.append(len(group))
        if len(tries) == 1:
            raise CatalogError("the catalog file is busy")
        real(self, job, group)  # type: ignore[arg-type]

    monkeypatch.setattr(Catalog, "record_rollouts", busy_once)
    summary = start_rollouts(RolloutOptions(model="reference", base_url=server.base_url, samples=2, concurrency=2),
                             catalog)
    assert summary.status == "finished" and len(_rows(catalog, summary.job_id)) == summary.rollouts == 2 * 2 * 4
    assert len(tries) >= 2 and sum(tries[1:]) == summary.rollouts  # the failed group went in with a later one


def test_a_catalog_that_stays_unwritable_stops_the_job_early(catalog: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def always_busy(self: Catalog, job: int, group: list[object]) -> None:
        raise CatalogError("the catalog file is busy")

    monkeypatch.setattr(Catalog, "record_rollouts", always_busy)
    monkeypatch.setattr("pipeline.runs.rollout_record.RolloutWriter.MAX_FAILED_COMMITS", 1)
    agents = ScriptedAgents(p.model_dump(mode="json") for p in load_packages(catalog))
    with OpenAIServer(agents, latency_s=0.02) as slow, pytest.raises(RolloutInterrupted, match="busy"):
        start_rollouts(RolloutOptions(model="answer-at-once", base_url=slow.base_url, samples=20, concurrency=1),
                       catalog)
    assert len(slow.requests) < 20 * 2 * 4 / 2  # it stopped soon after the first failed commit


def test_the_async_form_leaves_no_worker_running_after_it_raises(catalog: Path, template: Path) -> None:
    agents = ScriptedAgents(p.model_dump(mode="json") for p in load_packages(template))

    class Revoked(OpenAIServer):
        def answer(self, number: int, body: dict[str, Any], authorization: str) -> Any:
            if number > 3:
                return 401, {}, {"error": {"message": "Incorrect API key", "type": "invalid_request_error"}}, "401"
            return super().answer(number, body, authorization)

    async def run() -> int:
        with Revoked(agents, latency_s=0.05) as server:
            with pytest.raises(RolloutInterrupted):
                await astart_rollouts(RolloutOptions(model="reference", base_url=server.base_url, samples=3,
                                                     concurrency=4), catalog)
            me = asyncio.current_task()
            return sum(1 for t in asyncio.all_tasks() if t is not me and not t.done())

    assert asyncio.run(run()) == 0


def test_resuming_with_other_resources_validates_them(catalog: Path, server: OpenAIServer) -> None:
    options = RolloutOptions(model="answer-at-once", base_url=server.base_url)

    def stop(p: RolloutProgress) -> None:
        raise UserError("stopped on purpose")

    with pytest.raises(RolloutInterrupted) as stopped:
        start_rollouts(options, catalog, on_progress=stop)
    with pytest.raises(ValidationError, match="concurrency"):
        resume_rollouts(stopped.value.job_id, catalog, resources={"concurrency": 0})


def test_tool_call_ids_a_server_reuses_are_made_unique_in_the_conversation(catalog: Path) -> None:
    """A server that numbers each turn's calls from ``call_0``: every tool message still answers
    exactly one call of the conversation."""

    def agent(body: dict[str, Any]) -> dict[str, Any]:
        turns = sum(m["role"] == "assistant" for m in body["messages"])
        if turns < 2:
            name = body["tools"][0]["function"]["name"]
            return {"content": None, "tool_calls": [
                {"id": "call_0", "type": "function", "function": {"name": name, "arguments": "{}"}}]}
        return {"content": "Done."}

    with OpenAIServer(agent) as server:
        summary = start_rollouts(RolloutOptions(model="m", base_url=server.base_url, where="capability = 'general'"),
                                 catalog)
    for row in _rows(catalog, summary.job_id):
        messages = json.loads(str(row["messages"]))
        ids = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
        assert len(ids) == 2 and len(set(ids)) == 2 and answered == ids


def test_a_job_resumes_against_a_server_that_moved(catalog: Path, template: Path, server: OpenAIServer) -> None:
    """``--base-url`` may change on resume: a model server restarted on another port."""
    options = RolloutOptions(model="answer-at-once", base_url=server.base_url, concurrency=1)

    def stop(p: RolloutProgress) -> None:
        raise UserError("stopped on purpose")

    with pytest.raises(RolloutInterrupted) as stopped:
        start_rollouts(options, catalog, on_progress=stop)
    agents = ScriptedAgents(p.model_dump(mode="json") for p in load_packages(template))
    with OpenAIServer(agents) as moved:
        summary = resume_rollouts(stopped.value.job_id, catalog, resources={"base_url": moved.base_url})
        assert summary.recorded_before + summary.rollouts == 2 * len(CAPABILITIES)
        assert 0 < summary.rollouts == len(moved.requests)  # the rest ran against the server where it is now


def test_rollouts_never_create_a_catalog(tmp_path: Path, server: OpenAIServer) -> None:
    missing = tmp_path / "none.duckdb"
    with pytest.raises(CatalogError, match="no catalog at"):
        start_rollouts(RolloutOptions(model="reference", base_url=server.base_url), missing)
    assert not missing.exists()
