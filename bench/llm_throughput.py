"""LLM generation throughput: ``LLMGenerator`` against a local server with a fixed model latency.

    python bench/llm_throughput.py
    python bench/llm_throughput.py --generations 1280 --concurrency 64 --latency 0.1 --json-mode

The local OpenAI-compatible server (``pipeline.testing.OpenAIServer``) answers every request with
an example package after ``--latency`` seconds. ``--generations`` attempts run through one
``LLMGenerator`` (the real ``openai`` client over real sockets; structured output through
``chat.completions.parse`` unless ``--json-mode``), at most ``--concurrency`` at once (an
``asyncio.Semaphore``); each returned package is verified off the event loop
(``asyncio.to_thread(verify_package, package)``).

The server runs in a child process, as a model server would (its request handling does not take
this process's interpreter lock); ``--in-process`` runs it in a thread of this process instead.

Figures printed: generations/s, the ideal (concurrency / latency: every slot always waiting on the
model), their ratio (target >= 0.9), latency percentiles, CPU time of this process per generation
(client and verification; everything on one interpreter lock, so it bounds the rate), and how many
packages verification accepted. ``--no-verify`` leaves verification out, to see its share.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path

from pipeline.capabilities import Capability, WorkflowTemplate
from pipeline.generate.base import Attempt, Generated
from pipeline.generate.llm import Backoff, LLMGenerator
from pipeline.testing import OpenAIServer, fixed_responder
from pipeline.verify.report import Verdict
from pipeline.verify.verifier import verify_package

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "multi-turn-schedule-meeting.json"
TEMPLATE = WorkflowTemplate(
    name="schedule-meeting-after-clarification",
    description="Book a meeting with a colleague once the user names the day.",
    services=["contacts", "calendar"],
    steps=["find the colleague", "ask which day", "create the event", "confirm the booking"],
    checks=["one event with the colleague on the revealed day", "the day was asked for", "the answer names the day"],
)
CAPABILITY = Capability(name="multi-turn", description="Tasks that need a clarifying question first.",
                        skill="ask before acting", check_kinds=["state_count", "asked_user"], templates=[TEMPLATE])


def _serve(content: str, latency: float, conn: Connection) -> None:
    """Child process: run the server, send its base URL, stop when the parent says so."""
    with OpenAIServer(fixed_responder(content), latency_s=latency) as server:
        conn.send(server.base_url)
        conn.recv()
        conn.send(len(server.requests))


@contextmanager
def server_url(content: str, latency: float, in_process: bool) -> Iterator[tuple[str, list[int]]]:
    """The base URL of a running server, and a list that holds its request count once it stopped."""
    requests: list[int] = []
    if in_process:
        with OpenAIServer(fixed_responder(content), latency_s=latency) as server:
            yield server.base_url, requests
            requests.append(len(server.requests))
        return
    parent, child = multiprocessing.get_context("spawn").Pipe()
    process = multiprocessing.get_context("spawn").Process(target=_serve, args=(content, latency, child), daemon=True)
    process.start()
    try:
        yield parent.recv(), requests
        parent.send("stop")
        requests.append(parent.recv())
    finally:
        process.join(timeout=10)
        if process.is_alive():
            process.terminate()


async def generate_all(base_url: str, generations: int, concurrency: int, json_mode: bool = False,
                       verify: bool = True) -> list[tuple[Generated, Verdict | None, float]]:
    """Every generation's result, verdict (None when not verified) and latency (seconds, generation
    plus verification)."""
    limit = asyncio.Semaphore(concurrency)
    generator = LLMGenerator(model="bench-model", base_url=base_url, api_key="bench", timeout=30.0,
                             backoff=Backoff(initial=0.01, maximum=0.1), capabilities={CAPABILITY.name: CAPABILITY})
    generator.structured_output = not json_mode

    async def one(slot: int) -> tuple[Generated, Verdict | None, float]:
        async with limit:
            started = time.perf_counter()
            result = await generator.generate(Attempt(capability=CAPABILITY.name, template=TEMPLATE.name,
                                                      seed=slot, slot=slot))
            verdict = await asyncio.to_thread(verify_package, result.package) if result.package and verify else None
            return result, verdict, time.perf_counter() - started

    async with generator:
        return await asyncio.gather(*(one(slot) for slot in range(generations)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, default=640)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2, help="model latency per request, seconds")
    parser.add_argument("--json-mode", action="store_true", help="JSON mode instead of structured output")
    parser.add_argument("--in-process", action="store_true", help="run the server in a thread of this process")
    parser.add_argument("--no-verify", action="store_true", help="generate only, to see verification's share")
    args = parser.parse_args()

    content = json.dumps(json.loads(EXAMPLE.read_text(encoding="utf-8")))
    with server_url(content, args.latency, args.in_process) as (base_url, request_count):
        started, cpu_started = time.perf_counter(), time.process_time()
        results = asyncio.run(generate_all(base_url, args.generations, args.concurrency, args.json_mode,
                                           verify=not args.no_verify))
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    requests = request_count[0]

    rate = args.generations / elapsed
    ideal = args.concurrency / args.latency
    latencies = sorted(seconds for _, _, seconds in results)
    errors = [r.error for r, _, _ in results if r.error]
    accepted = sum(1 for _, verdict, _ in results if verdict is not None and verdict.accepted)
    mode = "JSON mode" if args.json_mode else "structured output"
    where = "in this process" if args.in_process else "in a child process"
    print(f"setup              {mode}, server {where}, {'no verification' if args.no_verify else 'verified'}")
    print(f"generations        {args.generations} in {elapsed:.2f} s ({requests} HTTP requests, {len(errors)} errors)")
    print(f"throughput         {rate:.1f} generations/s")
    print(f"ideal              {ideal:.1f} generations/s ({args.concurrency} concurrent / {args.latency} s latency)")
    print(f"ratio              {rate / ideal:.3f} (target >= 0.9)")
    print(f"latency p50 / p95  {statistics.median(latencies) * 1000:.0f} / "
          f"{latencies[int(0.95 * (len(latencies) - 1))] * 1000:.0f} ms (model latency {args.latency * 1000:.0f} ms)")
    print(f"CPU per generation {cpu / args.generations * 1000:.2f} ms in this process")
    if not args.no_verify:
        print(f"verified           {accepted} of {args.generations} accepted")
    if errors:
        print(f"first error        {errors[0]}")


if __name__ == "__main__":
    main()
