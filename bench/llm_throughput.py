"""LLM pipeline throughput: ``synth run``'s batch job against a local model server with a fixed latency.

    python bench/llm_throughput.py
    python bench/llm_throughput.py --count 2560 --concurrency 64 --latency 0.1 --json-mode

The local OpenAI-compatible server (``tests.support.OpenAIServer``) runs in a child process, as
a model server would, and answers each request after ``--latency`` seconds with a distinct valid
package (from the offline generator, so the catalog's dedup keeps them all). The measured pipeline
is the real one: ``BatchRun`` with ``LLMGenerator`` (the ``openai`` client over real sockets,
structured output through ``chat.completions.parse`` unless ``--json-mode``), verification in a
worker process (``--verify-processes``, 0 for threads), and every attempt committed to a DuckDB
catalog in a temporary folder. ``--generator-only`` measures ``LLMGenerator`` alone (no
verification, no catalog), to see the pipeline's share; ``--sdk-only`` the bare ``openai`` client
sending the same request, the ceiling this machine and server allow. ``--pin`` keeps the pipeline on
core 0 and the server and verifier processes on core 1 (Linux).

Figures printed: accepted packages/s, the ideal (concurrency / latency: every slot always waiting
on the model), their ratio (target >= 0.9), and CPU time of this process per package.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import multiprocessing
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from openai import AsyncOpenAI

from pipeline.catalog.store import Catalog
from pipeline.generation.base import Attempt
from pipeline.generation.llm import LLMGenerator, TaskPackageOutput
from pipeline.generation.model_client import Backoff
from pipeline.generation.offline import generate_package, pick_template
from pipeline.generation.prompting import messages_for
from pipeline.runs.batch import BatchRun
from pipeline.runs.options import RunOptions, run_parameters
from pipeline.taxonomy.capabilities import taxonomy
from tests.support import OpenAIServer

CAPABILITY = "general"


def _serve(latency: float, count: int, conn: Connection) -> None:
    """Child process: make the answers first (a model server's CPU is not ours to measure), run the
    server, send its base URL, stop when the parent says so."""
    answers = [generate_package(CAPABILITY, pick_template(CAPABILITY, n), 99, n).model_dump_json()
               for n in range(count)]
    counter = itertools.count()

    def respond(_request: object) -> str:
        return answers[next(counter) % count]

    with OpenAIServer(respond, latency_s=latency) as server:
        conn.send(server.base_url)
        conn.recv()


@contextmanager
def server_url(latency: float, count: int) -> Iterator[str]:
    with serving(_serve, latency, count) as url:
        yield url


@contextmanager
def serving(target: Callable[..., None], *args: Any) -> Iterator[str]:
    """Run ``target(*args, conn)`` in a child process: it sends the server's base URL on ``conn``
    and stops serving when it receives anything; yield that URL."""
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=target, args=(*args, child), daemon=True)
    process.start()
    try:
        yield parent.recv()
        parent.send("stop")
    finally:
        process.join(timeout=10)
        if process.is_alive():
            process.terminate()


def make_generator(base_url: str, json_mode: bool) -> LLMGenerator:
    generator = LLMGenerator(model="bench-model", base_url=base_url, api_key="bench", timeout=30.0,
                             backoff=Backoff(initial=0.01, maximum=0.1))
    generator.structured_output = not json_mode
    return generator


async def pipeline(base_url: str, args: argparse.Namespace, folder: Path) -> tuple[int, float, float]:
    options = RunOptions(capability=CAPABILITY, count=args.count, concurrency=args.concurrency,
                         verify_processes=args.verify_processes)
    with Catalog.open(folder / "catalog.duckdb") as catalog:
        generator = make_generator(base_url, args.json_mode)
        run_id = catalog.start_run("bench", generator.name, generator.model, CAPABILITY,
                                   run_parameters(options, generator.name, generator.model, base_url))
        batch = BatchRun(catalog, generator, options, run_id)
        batch.verifier.warm()  # worker start-up is paid once per run, not per package
        if args.pin:  # this process (and threads it starts later) on core 0; the other processes on core 1
            for child in multiprocessing.active_children():
                os.sched_setaffinity(child.pid, {1})
            os.sched_setaffinity(0, {0})
        started, cpu_started = time.perf_counter(), time.process_time()
        try:
            summary = await batch.run()
        finally:
            batch.verifier.close()
            await generator.aclose()
        return summary.accepted, time.perf_counter() - started, time.process_time() - cpu_started


async def generator_only(base_url: str, args: argparse.Namespace) -> tuple[int, float, float]:
    limit = asyncio.Semaphore(args.concurrency)
    template = pick_template(CAPABILITY, 0)

    async def one(slot: int) -> bool:
        async with limit:
            result = await generator.generate(Attempt(capability=CAPABILITY, template=template, seed=0, slot=slot))
            return result.package is not None

    async with make_generator(base_url, args.json_mode) as generator:
        started, cpu_started = time.perf_counter(), time.process_time()
        done = sum(await asyncio.gather(*(one(slot) for slot in range(args.count))))
        return done, time.perf_counter() - started, time.process_time() - cpu_started


async def sdk_only(base_url: str, args: argparse.Namespace) -> tuple[int, float, float]:
    """The bare ``openai`` client sending the generator's request: the ceiling for this machine and
    server, with no validation, verification or catalog."""
    limit = asyncio.Semaphore(args.concurrency)
    attempt = Attempt(capability=CAPABILITY, template=pick_template(CAPABILITY, 0), seed=0, slot=0)
    messages = messages_for(attempt, taxonomy())
    client = AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    completions = client.chat.completions.with_raw_response

    async def one(_: int) -> bool:
        async with limit:
            if args.json_mode:
                await completions.create(model="bench-model", messages=messages, response_format={"type": "json_object"})
            else:
                await completions.parse(model="bench-model", messages=messages, response_format=TaskPackageOutput)
            return True

    started, cpu_started = time.perf_counter(), time.process_time()
    done = sum(await asyncio.gather(*(one(n) for n in range(args.count))))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    await client.close()
    return done, elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1280, help="accepted packages wanted")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2, help="model latency per request, seconds")
    parser.add_argument("--verify-processes", type=int, default=1)
    parser.add_argument("--json-mode", action="store_true", help="JSON mode instead of structured output")
    parser.add_argument("--generator-only", action="store_true", help="LLMGenerator alone: no verification, no catalog")
    parser.add_argument("--sdk-only", action="store_true", help="the bare openai client: no generator, no validation")
    parser.add_argument("--pin", action="store_true",
                        help="pipeline only (Linux): this process on core 0, the server and verifier on core 1")
    args = parser.parse_args()

    with server_url(args.latency, args.count + 64) as base_url, tempfile.TemporaryDirectory() as folder:
        if args.sdk_only:
            done, elapsed, cpu = asyncio.run(sdk_only(base_url, args))
        elif args.generator_only:
            done, elapsed, cpu = asyncio.run(generator_only(base_url, args))
        else:
            done, elapsed, cpu = asyncio.run(pipeline(base_url, args, Path(folder)))

    rate, ideal = done / elapsed, args.concurrency / args.latency
    mode = "JSON mode" if args.json_mode else "structured output (parse)"
    what = "openai client only" if args.sdk_only else "LLMGenerator only" if args.generator_only else (
        f"pipeline: generate, verify ({args.verify_processes or 'thread'} worker process(es)), catalog")
    print(f"setup              {what}; {mode}")
    print(f"packages           {done} in {elapsed:.2f} s")
    print(f"throughput         {rate:.1f} packages/s")
    print(f"ideal              {ideal:.1f} packages/s ({args.concurrency} concurrent / {args.latency} s latency)")
    print(f"ratio              {rate / ideal:.3f} (target >= 0.9)")
    print(f"CPU per package    {cpu / max(done, 1) * 1000:.2f} ms in this process")


if __name__ == "__main__":
    main()
