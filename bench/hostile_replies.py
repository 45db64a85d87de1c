"""What the model client makes of each misbehaving server, and the memory it takes.

    python bench/hostile_replies.py [NAME ...] [--timeout 3]

For each misbehaviour of ``tests/support/hostile_server.py`` (all, or those named), plain and
streamed, one ``ModelClient.complete`` with ``timeout`` and ``deadline`` set to ``--timeout``:
prints the seconds it took, the requests the server got and the status and message it ended
with; then this process's peak RSS (the server runs in it too, sending from 1 MB pieces).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import time

from pipeline.generation.model_client import Backoff, ModelClient, ModelError
from tests.support.hostile_server import MISBEHAVIOURS, HostileServer


async def one(name: str, stream: bool, timeout: float) -> str:
    with HostileServer(MISBEHAVIOURS[name]) as server:
        started = time.perf_counter()
        async with ModelClient("m", server.base_url, "k", timeout=timeout, deadline=timeout,
                               backoff=Backoff(initial=0.01, maximum=0.05)) as client:
            try:
                reply = await client.complete([{"role": "user", "content": "hi"}], stream=stream)
                said = f"answered {reply.text[:40]!r}"
            except ModelError as exc:
                said = f"{exc.status}: {str(exc)[:110]}"
        took = time.perf_counter() - started
    return f"{name:26} {'stream' if stream else 'plain':6} {took:5.1f}s {server.requests} requests  {said}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"misbehaviours (default all: {', '.join(MISBEHAVIOURS)})")
    parser.add_argument("--timeout", type=float, default=3.0)
    args = parser.parse_args()
    for name in args.names or list(MISBEHAVIOURS):
        for stream in (False, True):
            print(asyncio.run(one(name, stream, args.timeout)), flush=True)
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB")


if __name__ == "__main__":
    main()
