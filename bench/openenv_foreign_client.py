"""``synth serve --openenv`` driven by another OpenEnv's client: scores must match the in-process replay.

    python bench/openenv_foreign_client.py serve [--count 56] [--seed 7] [--plays plays.json]
    OTHER_PYTHON bench/openenv_foreign_client.py client URL plays.json

``serve`` (in synth's environment) makes an offline run of ``count`` packages over all 7
capabilities, writes each accepted package's reference as concrete actions (``actions_of`` of
``play_reference``) with the verifier's stored score and the null floor to ``plays.json``, prints
the server's base URL and serves until Ctrl-C. ``client`` imports nothing of synth: with any
interpreter that has an OpenEnv distribution (e.g. the current ``openenv`` 0.10, which cannot be
installed beside ``synth[mcp]``), OpenEnv's ``GenericEnvClient`` plays every reference and a
do-nothing answer with dict actions and prints matches/total for each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any


def serve(count: int, seed: int, plays_path: Path) -> None:
    from bench.openenv_steps import build
    from pipeline.core.episode import actions_of
    from pipeline.core.serving import base_url
    from pipeline.env.task_env import play_reference
    from pipeline.interop.openenv_server import PackagePool, build_app, listen
    from pipeline.interop.openenv_server import serve as serve_app
    from pipeline.verify.mutations import null_agent_score

    packages, scores = build(count, seed)
    plays = [{"package_id": p.id, "actions": actions_of(play_reference(p).trajectory()),
              "verified": scores[p.id], "null_floor": null_agent_score(p)} for p in packages]
    plays_path.write_text(json.dumps(plays))
    sock = listen("127.0.0.1", 0)
    print(base_url(sock), flush=True)
    serve_app(build_app(PackagePool(packages)), sock)


async def client(url: str, plays_path: Path) -> None:
    import openenv
    from openenv.core.generic_client import GenericEnvClient

    plays: list[dict[str, Any]] = json.loads(plays_path.read_text())
    replayed = floored = 0
    async with GenericEnvClient(base_url=url) as env:
        for play in plays:
            await env.reset(package_id=play["package_id"])
            for action in play["actions"]:
                result = await env.step(action)
            replayed += result.done and result.reward == play["verified"]
            await env.reset(package_id=play["package_id"])
            result = await env.step({"type": "answer", "text": ""})
            floored += result.done and result.reward == play["null_floor"]
        state = await env.state()
    print(f"openenv {openenv.__version__}: reference == verifier's score {replayed}/{len(plays)}, "
          f"do-nothing == null floor {floored}/{len(plays)}; last state {state}")
    if replayed != len(plays) or floored != len(plays):
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--count", type=int, default=56)
    s.add_argument("--seed", type=int, default=7)
    s.add_argument("--plays", type=Path, default=Path("plays.json"))
    c = sub.add_parser("client")
    c.add_argument("url")
    c.add_argument("plays", type=Path)
    args = parser.parse_args()
    if args.mode == "serve":
        serve(args.count, args.seed, args.plays)
    else:
        asyncio.run(client(args.url, args.plays))


if __name__ == "__main__":
    main()
