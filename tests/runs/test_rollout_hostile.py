"""``synth rollout`` against model servers that misbehave (``tests.support.hostile_server``: one
server per misbehaviour, started by the test): every episode ends as a recorded ``finish_reason``
that counts in no pass rate, within the deadline asked for, and a server that keeps failing stops
the job with one line saying how to resume; the resumed job plays those episodes again."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline import RunOptions, start_run
from pipeline.catalog.store import Catalog
from pipeline.env.catalog_packages import load_packages
from pipeline.generation.model_client import Backoff, ModelClient, ModelError
from pipeline.runs.rollout import RolloutInterrupted, RolloutOptions, resume_rollouts, start_rollouts
from pipeline.runs.rollout_record import SERVER_FAILURE_LIMIT
from tests.conftest import CliResult, copy_catalog
from tests.support.agent_server import ScriptedAgents
from tests.support.hostile_server import MISBEHAVIOURS, HostileServer
from tests.support.openai_server import OpenAIServer

pytestmark = pytest.mark.slow  # fault-injecting model servers: the slow tier (CI runs it)

EXPECTED = {
    "not_json": ("malformed_reply", "not JSON"),
    "no_choices": ("malformed_reply", "not a chat completion"),
    "cut_mid_json": ("malformed_reply", "mid-"),
    "never_ends": ("timeout", "no whole reply within"),
    "trickle": ("timeout", "no whole reply within"),
    "stalls": ("timeout", "no whole reply within"),
    "huge": ("malformed_reply", "passed 524,288 bytes, more than a reply may bring"),
    "error_event": ("server_error", "crashed"),
    "deep": ("malformed_reply", "nests deeper than 64 levels"),
    "surrogate_content": ("malformed_reply", "lone surrogate"),
    "nul_tool_name": ("malformed_reply", "NUL character"),
    "surrogate_tool_arguments": ("malformed_reply", "lone surrogate"),
    "surrogate_tool_id": ("malformed_reply", "lone surrogate"),
    "usage_huge": ("malformed_reply", "usage.prompt_tokens is a number of 31 digits"),
    "usage_negative": ("malformed_reply", "usage.prompt_tokens is -5"),
}
DEADLINE_S = 1.5


def test_every_misbehaviour_is_named() -> None:
    assert set(EXPECTED) == set(MISBEHAVIOURS)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_misbehaving_reply_fails_the_request_saying_what_the_server_did(name: str, stream: bool) -> None:
    status, says = EXPECTED[name]
    # the deadline is the point of the timeout cases; the others get room on a loaded machine, and
    # a reply bound of 512 KiB that the 200 MB reply passes at its first event
    deadline = DEADLINE_S if status == "timeout" else 20.0

    async def ask(base_url: str) -> None:
        async with ModelClient("m", base_url, "k", timeout=deadline, deadline=deadline, max_reply_bytes=1 << 19,
                               backoff=Backoff(initial=0.01, maximum=0.02)) as client:
            await client.complete([{"role": "user", "content": "hi"}], stream=stream)

    with HostileServer(MISBEHAVIOURS[name]) as server:
        started = time.monotonic()
        with pytest.raises(ModelError) as failed:
            asyncio.run(ask(server.base_url))
    assert time.monotonic() - started < deadline + 5
    assert failed.value.status == status and says in str(failed.value), str(failed.value)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hostile-rollouts") / "catalog.duckdb"
    start_run(RunOptions(capability="general", count=3), path)
    start_run(RunOptions(capability="safety", count=3), path)
    return path


@pytest.fixture
def catalog(template: Path, tmp_path: Path) -> Path:
    return copy_catalog(template, tmp_path / "catalog.duckdb")


def _reasons(catalog: Path, job: int) -> list[str]:
    with Catalog.open(catalog, read_only=True) as reader:
        return [r[0] for r in reader.query(f"SELECT finish_reason FROM rollouts WHERE job = {job} "
                                           "ORDER BY package_id").rows]


@pytest.mark.parametrize(("name", "reason"), [("surrogate_content", "malformed_reply"), ("usage_huge", "malformed_reply"),
                                              ("never_ends", "server_timeout"), ("error_event", "server_error")])
def test_an_episode_the_server_breaks_is_recorded_and_counts_in_no_pass_rate(catalog: Path, name: str,
                                                                            reason: str) -> None:
    one = load_packages(catalog)[0].id
    deadline = DEADLINE_S if reason == "server_timeout" else 20.0  # room on a loaded machine
    with HostileServer(MISBEHAVIOURS[name]) as server:
        started = time.monotonic()
        summary = start_rollouts(RolloutOptions(model="m", base_url=server.base_url, where=f"id = '{one}'",
                                                samples=2, timeout_s=deadline, stream=name == "error_event"), catalog)
    assert time.monotonic() - started < deadline + 10  # the job's own start and end included
    assert summary.finish_reasons == {reason: 2} and summary.pass_rate is None and summary.mean_score is None
    assert summary.prompt_tokens == 0  # a refused reply's usage is never summed
    assert _reasons(catalog, summary.job_id) == [reason, reason]
    with Catalog.open(catalog, read_only=True) as reader:
        assert reader.query("SELECT count(*) FROM rollouts").rows == [[2]]


def test_a_server_that_keeps_failing_stops_the_job_and_the_resumed_job_plays_those_episodes_again(
        catalog: Path) -> None:
    packages = load_packages(catalog)
    assert len(packages) > SERVER_FAILURE_LIMIT
    with HostileServer(MISBEHAVIOURS["never_ends"]) as hostile:
        started = time.monotonic()
        with pytest.raises(RolloutInterrupted) as stopped:
            start_rollouts(RolloutOptions(model="reference", base_url=hostile.base_url, concurrency=2,
                                          timeout_s=0.5), catalog)
    assert time.monotonic() - started < 0.5 * len(packages) + 5
    text = str(stopped.value)
    assert f"failed {SERVER_FAILURE_LIMIT} episodes in a row, the last with server_timeout" in text
    assert "--timeout" in text and stopped.value.resume_command() in text and "\n" not in text
    job = stopped.value.job_id
    assert set(_reasons(catalog, job)) == {"server_timeout"}
    agents = ScriptedAgents(p.model_dump(mode="json") for p in packages)
    with OpenAIServer(agents) as good:
        summary = resume_rollouts(job, catalog, resources={"base_url": good.base_url, "timeout_s": 60.0})
    assert summary.finish_reasons == {"answer": len(packages)} and summary.pass_rate == 1.0
    assert _reasons(catalog, job) == ["answer"] * len(packages)  # the failed rows were replaced


def test_the_command_stops_on_a_silent_server_with_one_line(catalog: Path, synth: Callable[..., CliResult]) -> None:
    with HostileServer(MISBEHAVIOURS["trickle"]) as hostile:
        started = time.monotonic()
        result = synth("rollout", "--model", "m", "--base-url", hostile.base_url, "--timeout", "0.5",
                       "--concurrency", "4", "--stream", "--catalog", catalog)
    assert time.monotonic() - started < 0.5 * 2 + 5
    assert result.exit_code != 0 and "Traceback" not in result.stderr
    error = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "server_timeout" in error[0] and "synth rollout --resume" in result.stderr


def test_an_episode_whose_conversation_outgrows_its_budget_ends_with_budget(
        catalog: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.runs import rollout_episode

    packages = load_packages(catalog)
    monkeypatch.setattr(rollout_episode, "MAX_CONVERSATION_CHARS", len(packages[0].request.text) + 10)
    agents = ScriptedAgents(p.model_dump(mode="json") for p in packages)
    with OpenAIServer(agents) as good:
        summary = start_rollouts(RolloutOptions(model="reference", base_url=good.base_url,
                                                where=f"id = '{packages[0].id}'"), catalog)
    assert summary.finish_reasons == {"budget": 1}
    with Catalog.open(catalog, read_only=True) as reader:
        [[turns, error]] = reader.query("SELECT turns, error FROM rollouts").rows
    assert turns == 1 and "more than the" in error and "an episode may" in error
