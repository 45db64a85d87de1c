"""Rollout throughput: ``synth rollout``'s job against the local agent server with a fixed latency
per turn, as a ratio to the ideal.

    python bench/rollout_throughput.py                       # 64 in flight, 2 s a turn, 4 turns each
    python bench/rollout_throughput.py --policy reference --rollouts 320

The local OpenAI-compatible server (``tests.support.OpenAIServer`` with the scripted agents of
``tests.support.agent_server``) runs in a child process, as a model server would, and answers every
turn after ``--latency`` seconds. The measured job is the real one (``start_rollouts``): the
``openai`` client over real sockets, ``TaskEnv`` episodes, rollouts committed in groups to a DuckDB
catalog in a temporary folder. The default policy, ``loop``, calls a tool every turn until the turn
limit (``--turns``), so every episode has the same length and the ideal is exact: ``concurrency /
(turns * latency)`` rollouts per second; with ``--policy reference`` episodes differ in length and
the ideal is the turns actually taken, ``latency * turns / concurrency`` seconds of work.

Figures printed: rollouts/s, the ideal, their ratio (target >= 0.9), the CPU time of this process.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from bench.llm_throughput import serving
from pipeline import RunOptions, load_packages, start_run
from pipeline.runs.rollout import start_rollouts
from pipeline.runs.rollout_options import RolloutOptions
from tests.support.agent_server import ScriptedAgents
from tests.support.openai_server import OpenAIServer


def _serve(packages: list[dict[str, Any]], latency: float, conn: Connection) -> None:
    with OpenAIServer(ScriptedAgents(packages), latency_s=latency) as server:
        conn.send(server.base_url)
        conn.recv()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rollouts", type=int, default=512)
    parser.add_argument("--packages", type=int, default=64, help="accepted general packages to roll out on")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per turn")
    parser.add_argument("--turns", type=int, default=4, help="turns per episode (policy loop)")
    parser.add_argument("--policy", choices=("loop", "reference"), default="loop")
    parser.add_argument("--stream", action="store_true")
    args = parser.parse_args()
    samples = max(1, -(-args.rollouts // args.packages))
    with tempfile.TemporaryDirectory() as folder:
        catalog = Path(folder) / "catalog.duckdb"
        start_run(RunOptions(capability="general", count=args.packages), catalog)
        packages = load_packages(catalog)
        with serving(_serve, [p.model_dump(mode="json") for p in packages], args.latency) as url:
            options = RolloutOptions(model=args.policy, base_url=url, samples=samples, concurrency=args.concurrency,
                                     max_turns=args.turns if args.policy == "loop" else 30, stream=args.stream)
            started, cpu = time.perf_counter(), time.process_time()
            summary = start_rollouts(options, catalog)
            elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        from pipeline.catalog.store import Catalog

        with Catalog.open(catalog, read_only=True) as reader:
            turns = int(reader.query(f"SELECT sum(turns) FROM rollouts WHERE job = {summary.job_id}").rows[0][0])
    ideal_s = turns * args.latency / args.concurrency
    rate, ideal = summary.rollouts / elapsed, summary.rollouts / ideal_s
    print(f"{summary.rollouts} rollouts ({args.policy}, {'streamed' if args.stream else 'plain'}), {turns} turns, "
          f"{args.concurrency} in flight, {args.latency:g} s a turn")
    print(f"rollouts/s {rate:.2f}  ideal {ideal:.2f}  ratio {rate / ideal:.3f}  elapsed {elapsed:.1f} s  "
          f"cpu {cpu:.1f} s ({1000 * cpu / max(turns, 1):.2f} ms a turn)")


if __name__ == "__main__":
    main()
