"""Rollout scores against the verifier's: an offline run over every capability, then agents behind
the local OpenAI-compatible server (``tests.support.agent_server``) rolled out on every package.

    python bench/rollout_reference.py                 # 30 accepted packages per capability
    python bench/rollout_reference.py --count 50

Two agents, each plain and streamed: ``reference`` replays each package's reference as chat turns
(tool calls with ``$ref``/``$fact`` values read from the conversation, questions, the answer) and
must score exactly the verifier's score (the catalog's ``packages.score``) on every package;
``answer-at-once`` answers ``Done.`` without a call and must fail every package. Prints, per agent
and mode, the packages, how many score exactly the verifier's score, how many pass, and the time.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from pipeline import RunOptions, load_packages, start_run
from pipeline.catalog.store import Catalog
from pipeline.runs.rollout import start_rollouts
from pipeline.runs.rollout_options import RolloutOptions
from pipeline.taxonomy.capabilities import taxonomy
from tests.support.agent_server import ScriptedAgents
from tests.support.openai_server import OpenAIServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=30, help="accepted packages per capability")
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        catalog = Path(folder) / "catalog.duckdb"
        capabilities = sorted(taxonomy())
        for capability in capabilities:
            start_run(RunOptions(capability=capability, count=args.count), catalog)
        packages = load_packages(catalog)
        with Catalog.open(catalog, read_only=True) as reader:
            verifier = dict(reader.query("SELECT id, score FROM packages WHERE status = 'accepted'").rows)
        print(f"{len(packages)} accepted packages over {len(capabilities)} capabilities ({', '.join(capabilities)})")
        agents = ScriptedAgents(p.model_dump(mode="json") for p in packages)
        failures = 0
        with OpenAIServer(agents) as server:
            for policy in ("reference", "answer-at-once"):
                for stream in (False, True):
                    started = time.perf_counter()
                    summary = start_rollouts(RolloutOptions(model=policy, base_url=server.base_url, stream=stream,
                                                            concurrency=args.concurrency), catalog)
                    elapsed = time.perf_counter() - started
                    with Catalog.open(catalog, read_only=True) as reader:
                        rows = reader.query(f"SELECT package_id, score, passed FROM rollouts "
                                            f"WHERE job = {summary.job_id}").rows
                    exact = sum(score == verifier[pid] for pid, score, _ in rows)
                    passed = sum(bool(p) for _, _, p in rows)
                    wanted = exact == len(rows) if policy == "reference" else passed == 0
                    failures += not wanted or len(rows) != len(packages)
                    print(f"{policy:15} {'streamed' if stream else 'plain':8} packages {len(rows):4}  "
                          f"score == verifier's {exact:4}  passed {passed:4}  {elapsed:5.1f} s  "
                          f"{'ok' if wanted else 'FAIL'}")
        if agents.unknown:
            print(f"{agents.unknown} requests named no known package")
    raise SystemExit(1 if failures or agents.unknown else 0)


if __name__ == "__main__":
    main()
