"""``synth run --ray`` at scale on this machine: accepted packages/s against the ideal, and the
driver's CPU per accepted package.

    python bench/ray_scale.py                                  # 128 in flight, 2 s latency, 2560 packages
    python bench/ray_scale.py --servers 2                      # two model servers, balanced per request
    python bench/ray_scale.py --local                          # the same run without Ray, to compare

The local OpenAI-compatible server(s) (``tests.support.OpenAIServer``, as in
``bench/llm_throughput.py``) run in child processes and answer each request after ``--latency``
seconds with a distinct valid package. The measured run is the real one (``start_run(...,
ray="local")``): a Ray instance on this machine (``--cpus`` CPUs, one actor each), each actor with
its share of the requests in flight, the LLM generator (structured output) and verification in
the actor; the driver (this process) assigns slots, dedups and commits every attempt to a DuckDB
catalog in a temporary folder. This process joins Ray before measuring, so Ray's start-up is not
counted; the actors' start-up is (about a second of wall time, little of this process's CPU).

Figures printed: accepted packages/s (over the run, after the actors are up), the ideal
(concurrency / latency: every request slot always waiting on the model), their ratio (target >=
0.9), also from the first accepted package to the last (the rate of a long run, without the
first latency and the last commits), and this process's CPU time (``time.process_time()``: every thread of the driver, Ray's own
included) per accepted package (target <= 1 ms): over the whole ``start_run`` call (imports of the
LLM client, the catalog, the actors' start included), and from the first accepted package to the
last (what each further package costs), with the rows committed per group.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from bench.llm_throughput import server_url
from pipeline.runs.api import start_run
from pipeline.runs.options import Progress, RunOptions
from pipeline.runs.ray_cluster import LOCAL
from pipeline.runs.writer import GroupWriter

CAPABILITY = "general"


@contextmanager
def servers(count: int, latency: float, answers: int) -> Iterator[str]:
    """``count`` model servers in child processes; their URLs as one comma list."""
    with ExitStack() as stack:
        yield ",".join(stack.enter_context(server_url(latency, answers)) for _ in range(count))


def group_sizes() -> list[int]:
    """Rows per committed group, recorded from ``GroupWriter``'s commits in this process."""
    sizes: list[int] = []
    original = GroupWriter._group

    async def recording(self: GroupWriter) -> list:  # type: ignore[type-arg]
        group = await original(self)
        sizes.append(len(group))
        return group

    GroupWriter._group = recording  # type: ignore[method-assign]
    return sizes


class Marks:
    """``(process_time, perf_counter, accepted)`` when the first package was accepted and when the
    last was: what each further package costs, and the rate once the first requests are answered."""

    def __init__(self) -> None:
        self.first: tuple[float, float, int] | None = None
        self.last: tuple[float, float, int] | None = None

    def __call__(self, progress: Progress) -> None:
        if progress.accepted and (self.last is None or progress.accepted > self.last[2]):
            self.last = (time.process_time(), time.perf_counter(), progress.accepted)
            self.first = self.first or self.last

    def cpu_per_package(self) -> float:
        assert self.first is not None and self.last is not None
        return (self.last[0] - self.first[0]) / max(self.last[2] - self.first[2], 1)

    def rate(self) -> float:
        assert self.first is not None and self.last is not None
        return (self.last[2] - self.first[2]) / max(self.last[1] - self.first[1], 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2560, help="accepted packages wanted")
    parser.add_argument("--concurrency", type=int, default=128, help="requests in flight over the whole cluster")
    parser.add_argument("--latency", type=float, default=2.0, help="model latency per request, seconds")
    parser.add_argument("--servers", type=int, default=1, help="model servers, balanced per request")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray instance (one actor each)")
    parser.add_argument("--local", action="store_true", help="the same run without Ray")
    args = parser.parse_args()

    if not args.local:
        import ray

        ray.init(num_cpus=args.cpus, include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False)
    sizes = group_sizes()
    marks = Marks()
    options = RunOptions(capability=CAPABILITY, count=args.count, concurrency=args.concurrency)
    with servers(args.servers, args.latency, args.count + 256) as urls, tempfile.TemporaryDirectory() as folder:
        started, cpu_started = time.perf_counter(), time.process_time()
        summary = start_run(options, Path(folder) / "catalog.duckdb", model="bench-model", base_url=urls,
                            ray=None if args.local else LOCAL, on_progress=marks)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started

    rate, ideal = summary.accepted / summary.work_s, args.concurrency / args.latency
    where = "local (one process)" if args.local else f"Ray, {args.cpus} actors"
    print(f"setup              {where}; {args.servers} server(s); structured output; verification included")
    print(f"packages           {summary.accepted} accepted ({summary.status}) in {summary.work_s:.2f} s "
          f"({summary.elapsed_s:.2f} s with the run's start-up and shutdown, {wall:.2f} s the whole call)")
    print(f"throughput         {rate:.1f} packages/s")
    print(f"ideal              {ideal:.1f} packages/s ({args.concurrency} concurrent / {args.latency} s latency)")
    print(f"ratio              {rate / ideal:.3f} over the run (target >= 0.9); {marks.rate() / ideal:.3f} from the "
          f"first accepted package to the last ({marks.rate():.1f} packages/s)")
    print(f"driver CPU         {cpu / max(summary.accepted, 1) * 1000:.2f} ms per accepted package over the "
          f"whole call ({cpu:.2f} s in all); {marks.cpu_per_package() * 1000:.2f} ms from the first accepted to the "
          f"last (target <= 1 ms)")
    print(f"groups             {len(sizes)} commits, {sum(sizes) / max(len(sizes), 1):.1f} rows each on average")


if __name__ == "__main__":
    main()
