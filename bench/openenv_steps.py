"""OpenEnv face throughput: environment steps per second replaying references, in one process.

    python bench/openenv_steps.py [--count 70] [--seed 7] [--sessions 8] [--rounds 5]

One offline run per capability fills a temporary catalog (``count`` packages in all); each
accepted package's reference is turned into the concrete actions it took (``actions_of`` of
``play_reference``), then played ``rounds`` times:

- ``in-process``: ``SynthEnvironment.reset``/``step`` called directly (the server's environment,
  no network): the engine's own rate;
- ``websocket``: through OpenEnv's client (``SynthEnv``) against the app served by uvicorn in this
  process, ``sessions`` clients at once (asyncio), every step a WebSocket round trip.

Every episode's reward is checked against the verifier's stored score. Prints steps/s for each
(a step is one ``step`` call; resets are not counted but their time is).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from pipeline import Catalog, RunOptions, TaskPackage, load_packages, start_run
from pipeline.core.episode import actions_of
from pipeline.env.task_env import play_reference
from pipeline.interop.openenv import SynthAction, SynthEnv
from pipeline.interop.openenv_server import PackagePool, SynthEnvironment, build_app, running
from pipeline.taxonomy.capabilities import taxonomy


def build(count: int, seed: int) -> tuple[list[TaskPackage], dict[str, float]]:
    """An offline run of ``count`` packages split over every capability: the accepted packages
    and the score the verifier stored for each."""
    caps = sorted(taxonomy())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "catalog.duckdb"
        for i, cap in enumerate(caps):
            start_run(RunOptions(capability=cap, count=count // len(caps) + (i < count % len(caps)), seed=seed), path)
        packages = load_packages(path)
        with Catalog.open(path, read_only=True) as catalog:
            scores = dict(catalog.query("SELECT id, score FROM packages WHERE status = 'accepted'", None).rows)
    return packages, scores


def in_process(pool: PackagePool, plays: list[tuple[str, list[SynthAction]]], scores: dict[str, float],
               rounds: int) -> tuple[int, float]:
    env = SynthEnvironment(pool)
    steps, started = 0, time.perf_counter()
    for _ in range(rounds):
        for package_id, actions in plays:
            env.reset(package_id=package_id)
            for action in actions:
                observation = env.step(action)
            steps += len(actions)
            assert observation.reward == scores[package_id], package_id
    return steps, time.perf_counter() - started


async def over_websocket(url: str, plays: list[tuple[str, list[SynthAction]]], scores: dict[str, float],
                         rounds: int, sessions: int) -> tuple[int, float]:
    async def session(share: list[tuple[str, list[SynthAction]]]) -> int:
        steps = 0
        async with SynthEnv(base_url=url) as env:
            for _ in range(rounds):
                for package_id, actions in share:
                    await env.reset(package_id=package_id)
                    for action in actions:
                        result = await env.step(action)
                    steps += len(actions)
                    assert result.reward == scores[package_id], package_id
        return steps

    started = time.perf_counter()
    counts = await asyncio.gather(*(session(plays[i::sessions]) for i in range(sessions)))
    return sum(counts), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=70)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    packages, scores = build(args.count, args.seed)
    plays = [(p.id, [SynthAction.model_validate(a) for a in actions_of(play_reference(p).trajectory())])
             for p in packages]
    pool = PackagePool(packages)
    steps, seconds = in_process(pool, plays, scores, args.rounds)
    print(f"{len(packages)} packages, {sum(len(a) for _, a in plays)} reference steps, {args.rounds} rounds")
    print(f"in-process  {steps:,} steps in {seconds:.2f} s: {steps / seconds:,.0f} steps/s")
    with running(build_app(pool, max_sessions=args.sessions)) as url:
        steps, seconds = asyncio.run(over_websocket(url, plays, scores, args.rounds, args.sessions))
    print(f"websocket   {steps:,} steps in {seconds:.2f} s: {steps / seconds:,.0f} steps/s "
          f"({args.sessions} sessions, client and server in this process)")


if __name__ == "__main__":
    main()
