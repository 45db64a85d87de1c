"""Verification off the generation path: in this process, or in worker processes, batched."""

from __future__ import annotations

import asyncio
import functools
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from pipeline.core.outcomes import Verdict
from pipeline.core.package import TaskPackage
from pipeline.verify.verifier import Options, verify_package


class VerifierCrash(Exception):
    """``verify_package`` raised: a verifier bug, which costs the package its attempt, not the run."""


class VerifierPool:
    """Runs ``verify_package`` for the batch job: in ``processes`` worker processes (so it takes no
    time from the interpreter lock that generation needs), or in a thread of this process when
    ``processes`` is 0.

    A package is handed to a free worker the moment it arrives. Packages that arrive while every
    worker is busy wait and go to the next free worker together, at most ``MAX_BATCH`` in one call:
    under load, the cost of handing work to a process (pickling, queues, wake-ups in this process)
    is paid once per batch instead of once per package.
    """

    MAX_BATCH = 32

    def __init__(self, options: Options, processes: int) -> None:
        self.options = options
        self.processes = processes
        self._pool = (ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"))
                      if processes else None)
        self._waiting: list[tuple[TaskPackage, asyncio.Future[Verdict | str]]] = []
        self._busy = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    async def verify(self, package: TaskPackage) -> Verdict:
        """The package's verdict; raises ``VerifierCrash`` when ``verify_package`` raised on it."""
        if self._pool is None:
            return _verdict(await asyncio.to_thread(_verify_one, package, self.options))
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new event loop (another asyncio.run): the old one's jobs are gone
            self._loop, self._waiting, self._busy = loop, [], 0
        future: asyncio.Future[Verdict | str] = loop.create_future()
        self._waiting.append((package, future))
        self._dispatch()
        return _verdict(await future)

    def _dispatch(self) -> None:
        assert self._loop is not None
        while self._waiting and self._busy < self.processes:
            batch, self._waiting = self._waiting[:self.MAX_BATCH], self._waiting[self.MAX_BATCH:]
            self._busy += 1
            job = self._loop.run_in_executor(self._pool, _verify_batch, [package for package, _ in batch], self.options)
            job.add_done_callback(functools.partial(self._finished, batch))

    def _finished(self, batch: list[tuple[TaskPackage, asyncio.Future[Verdict | str]]],
                  job: asyncio.Future[list[Verdict | str]]) -> None:
        self._busy -= 1
        if job.cancelled():  # the pool was shut down
            for _, future in batch:
                future.cancel()
            return
        failure = job.exception()  # the worker process died: every package of the batch fails
        for index, (_, future) in enumerate(batch):
            if not future.done():
                if failure is not None:
                    future.set_exception(failure)
                else:
                    future.set_result(job.result()[index])
        self._dispatch()

    def warm(self) -> None:
        """Start the worker processes now (each imports the verifier once) instead of on first use."""
        if self._pool is not None:
            for future in [self._pool.submit(_ready) for _ in range(self.processes)]:
                future.result()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


def _verify_one(package: TaskPackage, options: Options) -> Verdict | str:
    """The verdict, or ``<exception class>: <message>`` when verification raised."""
    try:
        return verify_package(package, options)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


def _verify_batch(packages: list[TaskPackage], options: Options) -> list[Verdict | str]:
    return [_verify_one(package, options) for package in packages]


def _verdict(result: Verdict | str) -> Verdict:
    if isinstance(result, str):
        raise VerifierCrash(result)
    return result


def _ready() -> bool:
    return True
